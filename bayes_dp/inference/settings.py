"""The sampler of :func:`~bayes_dp.estimate_epsilon`, as one frozen settings object per method.

``estimate_epsilon(counts, delta=..., sampler=bdp.Exact())`` (the default) or
``sampler=bdp.MHAAR(n_aux=32)``. Each class declares its settings once, as dataclass fields
with their default, their check and a one-line help in the field's metadata; the settings
recorded in ``post.settings``, the command line's options and the reproduction code of the
report are derived from these fields (:func:`sampler_fields`).

What lives where. The objects hold how the chains move: the settings that exist for one method
only (MHAAR's auxiliary pairs and thinning) and the tuning of the moves (``target_accept``).
``estimate_epsilon`` keeps as keywords what any run is asked for whatever its method: how many
chains, how long (``draws``, ``tune``, ``max_time``), on how many threads, what to keep
(``log_likelihood``), the seed and the checks. ``tune`` is one of those: both methods warm up,
with a default of each method's own (:attr:`Exact.default_tune`, :attr:`MHAAR.default_tune`).
:class:`SamplerSettings` holds the settings object with those keywords, validated once, and
:class:`AutoLength` when an automatic-length run stops.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar

from bayes_dp.core.validation import check_positive_int, check_real

__all__ = ["MHAAR", "Exact", "sampler_fields", "sampler_from_settings"]


def _target_accept(name, value):
    return check_real(name, value, low=0.0, high=1.0, low_open=True, high_open=True)


def _bool(name, value):
    if not isinstance(value, bool):
        raise TypeError(f"`{name}` must be True or False; found {value!r}")
    return value


def _aux_proposal(name, value):
    from samplers.mhaar import AUX_PROPOSALS

    if value not in AUX_PROPOSALS:
        raise ValueError(f"`{name}` must be one of {sorted(AUX_PROPOSALS)}; found {value!r}")
    return value


def _setting(default, check, help_text):
    """Return a field of a settings class: default, check ``(name, value) -> value``, help."""
    return field(default=default, metadata={"check": check, "help": help_text})


@dataclass(frozen=True)
class _Settings:
    """What both samplers have: the moves' tuning, and checks run from the fields' metadata."""

    method: ClassVar[str]
    default_tune: ClassVar[int]

    target_accept: float = _setting(
        0.3, _target_accept, "acceptance rate, in (0, 1), the warm-up tunes the moves to"
    )

    def __post_init__(self):
        for f in dataclasses.fields(self):
            value = f.metadata["check"](f.name, getattr(self, f.name))
            object.__setattr__(self, f.name, value)  # the checked value (e.g. numpy -> int)

    def to_python(self, *, every: bool = True) -> str:
        """Return the code that makes this object, ``bdp.<Class>(...)``.

        With ``every`` each field is written, else only those that differ from the default.
        """
        args = ", ".join(
            f"{f.name}={getattr(self, f.name)!r}"
            for f in dataclasses.fields(self)
            if every or getattr(self, f.name) != f.default
        )
        return f"bdp.{type(self).__name__}({args})"


@dataclass(frozen=True)
class Exact(_Settings):
    """The default sampler: adaptive random-walk Metropolis on the exact marginal likelihood.

    The latent error rates of each base are integrated out by quadrature, so the acceptance
    ratio has no Monte Carlo noise; a ridge move follows the posterior's ridge in (eps, s)
    (``docs/validation/model.md``).

    Parameters
    ----------
    target_accept : float
        Acceptance rate, in (0, 1), that the warm-up tunes the proposal scales to
        (default 0.3).

    Raises
    ------
    ValueError, TypeError
        For a bad value, naming the field and the value found.

    Examples
    --------
    >>> import bayes_dp as bdp
    >>> bdp.Exact(target_accept=0.25)
    Exact(target_accept=0.25)
    """

    method: ClassVar[str] = "exact"
    #: Warm-up iterations per chain when ``estimate_epsilon(tune=None)``.
    default_tune: ClassVar[int] = 1000


@dataclass(frozen=True)
class MHAAR(_Settings):
    """The paper's Algorithm 1: MH with acceptance ratios averaged over auxiliary pairs.

    Each move averages its acceptance ratio over K auxiliary (alpha, beta) pairs per base
    (Yildirim et al.; ``docs/validation/model.md``). Runs have a fixed length (5,000 draws per chain
    unless ``draws`` is given) and are judged by the convergence checks only.

    Parameters
    ----------
    target_accept : float
        Acceptance rate, in (0, 1), that the warm-up tunes the proposal scales to
        (default 0.3).
    n_aux : int
        K, auxiliary pairs per challenge base and move (>= 2; default 16; the paper used 1000
        with uniform proposals). With the default likelihood-shaped proposals 8 suffices for
        the paper's 10-base case but not for 20 bases, where chains stick
        (``benchmarks/bench_sampler.py``), hence the default 16.
    aux_proposal : {"normal", "likelihood", "uniform"}
        Proposal of the auxiliary pairs of binomial groups: truncated normals shaped like the
        likelihood (default, fastest), the binomial likelihood's Beta shape, or uniform
        (reproduces the paper). Over-dispersed groups use a bivariate normal that follows
        their (tau, rho), mixed with draws from R_s near the data, unless "uniform" is asked
        for (``docs/validation/correlated.md``).
    aux_uniform_weight : float
        Weight of the defensive uniform part of the auxiliary proposal, in [0, 1] (default
        0.05).
    aux_band_weight : float
        Weight, in [0, 1), of the part of the binomial groups' auxiliary proposal that draws
        uniformly from the bands R_s of the current and the proposed state (half each;
        default 0). It keeps the averaged acceptance ratio stable when the band is thin (s
        near 1); 0 gives the proposal of ``aux_proposal`` alone. (Over-dispersed groups always
        have such a part, restricted to a box around the data, of weight 0.5.)
    integrate_latents : bool
        For over-dispersed groups, integrate each base's latent (alpha, beta) out by
        quadrature over R_s instead of averaging over auxiliary pairs (default False): exact
        up to the quadrature, best mixing per iteration, but about 5x fewer effective draws
        of eps per second on the 20-base benchmark (``docs/validation/correlated.md``).
    thin : int
        Iterations per stored draw (default 2): the chain runs ``tune + thin * draws``
        iterations and keeps every ``thin``-th state.

    Raises
    ------
    ValueError, TypeError
        For a bad value, naming the field and the value found.

    Examples
    --------
    >>> import bayes_dp as bdp
    >>> bdp.MHAAR(n_aux=32).n_aux
    32
    """

    method: ClassVar[str] = "mhaar"
    #: Warm-up iterations per chain when ``estimate_epsilon(tune=None)``.
    default_tune: ClassVar[int] = 2000
    #: Stored draws per chain when ``estimate_epsilon(draws=None)``.
    default_draws: ClassVar[int] = 5000

    n_aux: int = _setting(
        16,
        lambda n, v: check_positive_int(n, v, minimum=2),
        "auxiliary pairs per challenge base and move (>= 2)",
    )
    aux_proposal: str = _setting(
        "normal", _aux_proposal, "proposal of the auxiliary pairs: normal, likelihood, uniform"
    )
    aux_uniform_weight: float = _setting(
        0.05,
        lambda n, v: check_real(n, v, low=0.0, high=1.0),
        "weight of the uniform part of the auxiliary proposal, in [0, 1]",
    )
    aux_band_weight: float = _setting(
        0.0,
        lambda n, v: check_real(n, v, low=0.0, high=1.0, high_open=True),
        "weight of the part drawn from the bands R_s, in [0, 1)",
    )
    integrate_latents: bool = _setting(
        False, _bool, "integrate the latent pairs of over-dispersed groups by quadrature"
    )
    thin: int = _setting(2, check_positive_int, "iterations per stored draw (>= 1)")


#: method name -> its settings class.
SAMPLER_CLASSES: dict[str, type[_Settings]] = {cls.method: cls for cls in (Exact, MHAAR)}


def sampler_fields(sampler: Exact | MHAAR) -> dict:
    """Return the settings of ``sampler`` as a dict, field by field (what ``post.settings`` keeps).

    Parameters
    ----------
    sampler : Exact or MHAAR
        The settings object.

    Returns
    -------
    dict
        ``{field name: value}`` in the order of the class's fields.

    Examples
    --------
    >>> import bayes_dp as bdp
    >>> from bayes_dp.inference.settings import sampler_fields
    >>> sampler_fields(bdp.Exact())
    {'target_accept': 0.3}
    """
    if not isinstance(sampler, _Settings):
        raise TypeError(f"`sampler` must be bdp.Exact(...) or bdp.MHAAR(...); found {sampler!r}")
    return {f.name: getattr(sampler, f.name) for f in dataclasses.fields(sampler)}


def sampler_from_settings(settings: dict) -> Exact | MHAAR:
    """Return the settings object recorded in ``settings`` (``post.settings``).

    Entries that a file of an earlier version lacks take today's defaults.

    Parameters
    ----------
    settings : dict
        A posterior's settings, with ``method`` (default "exact") and the class's fields.

    Returns
    -------
    Exact or MHAAR

    Examples
    --------
    >>> from bayes_dp.inference.settings import sampler_from_settings
    >>> sampler_from_settings({"method": "mhaar", "n_aux": 8}).n_aux
    8
    """
    method = settings.get("method", "exact")
    if method not in SAMPLER_CLASSES:
        raise ValueError(f"`method` must be one of {list(SAMPLER_CLASSES)}; found {method!r}")
    cls = SAMPLER_CLASSES[method]
    return cls(**{f.name: settings[f.name] for f in dataclasses.fields(cls) if f.name in settings})


def option_name(name: str) -> str:
    """Return the command-line option of field ``name`` (``target_accept``: ``--target-accept``)."""
    return "--" + name.replace("_", "-")


def parse_field(cls: type, name: str, text: str):
    """Return the value of field ``name`` of ``cls`` that the command-line text ``text`` gives.

    The text is read as the type of the field's default and checked by the field's own check,
    so the command line accepts what the class accepts. Raises ValueError naming the field.
    """
    f = {f.name: f for f in dataclasses.fields(cls)}[name]
    kind = type(f.default)
    if kind is bool:
        value = {"true": True, "false": False}.get(text.lower(), text)
    else:
        try:
            value = kind(text)
        except ValueError:
            raise ValueError(f"`{name}` must be {kind.__name__}; found {text!r}") from None
    try:
        return f.metadata["check"](name, value)
    except TypeError as e:
        raise ValueError(str(e)) from None


def cli_options(sampler: Exact | MHAAR) -> list[str]:
    """Return the command-line options (``--name value``) of the fields not at their default."""
    return [
        f"{option_name(f.name)} {getattr(sampler, f.name)!r}"
        for f in dataclasses.fields(sampler)
        if getattr(sampler, f.name) != f.default
    ]


@dataclass(frozen=True)
class AutoLength:
    """When an automatic-length run of the exact sampler (``draws=None``) stops.

    It runs ``first_draws`` draws per chain, then grows the run in rounds until every sampled
    variable has r_hat <= ``rhat_max`` and bulk and tail ESS >= ``ess_min`` (converged), the
    run reaches ``max_draws`` draws per chain, or ``max_time`` seconds (the default budget
    when ``estimate_epsilon(max_time=None)``) run out. The values are
    ``bayes_dp.core.thresholds.AUTO_*``.
    """

    first_draws: int
    max_draws: int
    rhat_max: float
    ess_min: float
    max_time: float


@dataclass(frozen=True)
class SamplerSettings:
    """The sampler and the run keywords of :func:`~bayes_dp.estimate_epsilon`, validated.

    Make it with :meth:`build`, which fills in the method's default ``tune`` and checks every
    value; ``draws`` None is the automatic length (exact) or ``MHAAR.default_draws`` (MHAAR).
    The sampler's own settings are the fields of ``sampler``.
    """

    sampler: Exact | MHAAR = Exact()
    chains: int = 4
    draws: int | None = None
    tune: int = Exact.default_tune
    max_time: float | None = None
    log_likelihood: bool = True
    cores: int | None = None

    @property
    def method(self) -> str:
        """The sampler's name: "exact" or "mhaar"."""
        return self.sampler.method

    @classmethod
    def build(
        cls,
        *,
        sampler: Exact | MHAAR | None = None,
        chains: int = 4,
        draws: int | None = None,
        tune: int | None = None,
        max_time: float | None = None,
        log_likelihood: bool = True,
        cores: int | None = None,
    ) -> SamplerSettings:
        """Check the arguments (naming the argument and the value) and fill in defaults."""
        if sampler is None:
            sampler = Exact()
        if not isinstance(sampler, (Exact, MHAAR)):
            raise TypeError(
                f"`sampler` must be bdp.Exact(...) or bdp.MHAAR(...); found {sampler!r}"
            )
        chains = check_positive_int("chains", chains)
        if draws is not None:
            draws = check_positive_int("draws", draws)
        if tune is None:
            tune = sampler.default_tune
        tune = check_positive_int("tune", tune, minimum=0)
        if max_time is not None:
            max_time = check_real("max_time", max_time, low=0.0, low_open=True)
        if not isinstance(log_likelihood, bool):
            raise TypeError(f"`log_likelihood` must be True or False; found {log_likelihood!r}")
        if cores is not None:
            cores = check_positive_int("cores", cores)
        return cls(
            sampler=sampler,
            chains=chains,
            draws=draws,
            tune=tune,
            max_time=max_time,
            log_likelihood=log_likelihood,
            cores=cores,
        )

    def record(self, out: dict) -> dict:
        """Return the sampler's part of ``post.settings`` for a run that returned ``out``.

        The sampler's settings are its fields (``sampler_fields``), under their own names.
        """
        rec = {
            "method": self.method,
            "chains": self.chains,
            "draws": int(out["eps"].shape[1]),
            "draws_requested": self.draws,
            "tune": self.tune,
            **sampler_fields(self.sampler),
            "tuned_scales": out["scales"].tolist(),
        }
        if self.method == "exact":
            rec.update(
                max_time=out["max_time"],
                converged=out["converged"],
                stop_reason=out["stop_reason"],
                minor_mode=out.get("minor_mode"),
                mode_restart=out.get("mode_restart"),
                surrogate_moves=out.get("surrogate_moves"),
                seconds=out["seconds"],
                log_likelihood=self.log_likelihood,
            )
        return rec

    @classmethod
    def from_settings(cls, settings: dict) -> SamplerSettings:
        """Return the settings that repeat the run recorded in ``settings`` (``post.settings``).

        ``draws`` is the number of draws the run stored (an automatic-length run gives the
        same draws when asked for its final length at once, unless it sampled again from a
        mode its first chains missed, ``settings["mode_restart"]``: where those chains start
        depends on the first run's length); ``max_time`` and ``cores`` are
        left out (a time limit can only stop a run early; threads do not change the draws).
        Entries that a file of an earlier version lacks take today's defaults.
        """
        sampler = sampler_from_settings(settings)
        keys = ["chains", "tune"] + (["log_likelihood"] if sampler.method == "exact" else [])
        given = {k: settings[k] for k in keys if k in settings}
        return cls.build(sampler=sampler, draws=settings.get("draws"), **given)

    def to_python(self) -> str:
        """Return the sampler's arguments of ``bdp.estimate_epsilon``, as Python source."""
        args = [f"{k}={getattr(self, k)!r}" for k in ("chains", "draws", "tune")]
        if self.method == "exact" and not self.log_likelihood:
            args.append("log_likelihood=False")
        if self.sampler != Exact():
            args.append(f"sampler={self.sampler.to_python()}")
        return ", ".join(args)
