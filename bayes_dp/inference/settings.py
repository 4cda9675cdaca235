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
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar

from bayes_dp.core.validation import check_positive_int, check_real

__all__ = ["MHAAR", "Exact", "sampler_fields", "sampler_from_settings"]

#: Version in which the sampler keywords of ``estimate_epsilon`` (``method``, ``n_aux``, ...)
#: stop being accepted.
DEPRECATED_UNTIL = "0.2.0"


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
    (``docs/model.md``).

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
    (Yildirim et al.; ``docs/model.md``). Runs have a fixed length (5,000 draws per chain
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
        for (``docs/correlated.md``).
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
        of eps per second on the 20-base benchmark (``docs/correlated.md``).
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


#: The keywords of ``estimate_epsilon`` that the settings objects replace.
DEPRECATED_KEYWORDS = ("method", *(f.name for f in dataclasses.fields(MHAAR)))


def sampler_from_keywords(keywords: dict) -> Exact | MHAAR:
    """Return the settings object that the deprecated keywords of ``estimate_epsilon`` ask for.

    As before they were deprecated, the MHAAR-only keywords raise under ``method="exact"``
    unless they have their default value.
    """
    keywords = dict(keywords)
    method = keywords.pop("method", "exact")
    if method not in SAMPLER_CLASSES:
        raise ValueError(f"`method` must be one of {list(SAMPLER_CLASSES)}; found {method!r}")
    cls = SAMPLER_CLASSES[method]
    own = {f.name for f in dataclasses.fields(cls)}
    neutral = {**sampler_fields(MHAAR()), "thin": 1}  # values that asked nothing of MHAAR
    for name, val in keywords.items():
        if name not in own and val != neutral[name]:
            raise ValueError(
                f"`{name}` applies to method='mhaar' only (the exact sampler has no "
                f"auxiliary pairs); found {name}={val!r}"
            )
    return cls(**{k: v for k, v in keywords.items() if k in own})
