"""The model as a value: evidence groups, strength variables, likelihoods, priors, fixed values.

:meth:`Model.build` turns what :func:`~bayes_dp.estimate_epsilon` is given (the counts as
:class:`~bayes_dp.AttackCounts` or :class:`~bayes_dp.Evidence` groups, ``delta``, the
:class:`~bayes_dp.Prior`) into one validated, frozen :class:`Model`: which groups share a
strength variable, which likelihood (from :data:`bayes_dp.core.likelihoods.LIKELIHOODS`) each group
uses, which of its parameters are fixed and where the free ones start. The samplers read their
arrays from it; the posterior's settings, the names of its variables and the report's
"how to reproduce" are written from it, and :meth:`Model.from_settings` reads it back from a
posterior's settings (files of earlier versions included).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from bayes_dp.core.evidence import Evidence
from bayes_dp.core.likelihoods import Likelihood, get_likelihood, rho_max
from bayes_dp.core.observations import AttackCounts, OneRunCounts
from bayes_dp.core.priors import Prior, parse_prior
from bayes_dp.core.validation import check_delta

__all__ = ["Model", "as_groups"]


def as_groups(counts) -> tuple[Evidence, ...]:
    """Return the evidence groups of ``estimate_epsilon(counts, ...)``, checked.

    An :class:`~bayes_dp.AttackCounts` (or :class:`~bayes_dp.OneRunCounts`) becomes one group
    named "counts"; in a list, the i-th bare one becomes a group named "counts<i>".

    Raises
    ------
    TypeError
        For anything but AttackCounts, OneRunCounts, Evidence or a list or tuple of them.
    ValueError
        For an empty list or repeated group names.
    """
    if isinstance(counts, (AttackCounts, OneRunCounts)):
        return (Evidence(counts, name="counts"),)
    if isinstance(counts, Evidence):
        return (counts,)
    if isinstance(counts, (list, tuple)):
        if not counts:
            raise ValueError("`counts` is an empty list; give at least one Evidence")
        out = []
        for i, c in enumerate(counts):
            if isinstance(c, (AttackCounts, OneRunCounts)):
                c = Evidence(c, name=f"counts{i}")
            if not isinstance(c, Evidence):
                raise TypeError(
                    f"`counts[{i}]` must be an AttackCounts, OneRunCounts or Evidence; found "
                    f"{type(c).__name__}"
                )
            out.append(c)
        names = [g.name for g in out]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"Evidence names must be unique; found {sorted(dup)} repeated")
        return tuple(out)
    raise TypeError(
        "`counts` must be AttackCounts, OneRunCounts, Evidence or a list of them; found "
        f"{type(counts).__name__}"
    )


def _strength_name(group: Evidence) -> str:
    return "s" if group.strength == "shared" else f"s_{group.name}"


@dataclass(frozen=True, eq=False)
class Model:
    """The posterior's model: made by :meth:`build` (validated there), not by hand.

    Attributes
    ----------
    groups : tuple of Evidence
        The evidence groups, in order.
    delta : float
        The known DP delta.
    prior : Prior
        Priors of eps, of every strength variable (or its fixed value) and of tau.
    strengths : tuple of str
        The strength variables in order of first use: ``"s"``, shared by the groups with
        ``strength="shared"``, and ``"s_<name>"`` for each group with its own.
    group_strength : tuple of int
        Per group, the index of its strength variable in ``strengths``.
    tau_start, rho_start : tuple of float
        Per group, the fixed value of tau (rho), or where the samplers start it when it is
        free; 0.0 for a group whose likelihood has no such parameter. A free tau starts at
        0.05, or higher when a fixed rho is not admissible there.
    tau_free, rho_free : tuple of bool
        Per group, whether tau (rho) is a parameter of its likelihood and not fixed.

    Examples
    --------
    >>> import bayes_dp as bdp
    >>> a = bdp.Evidence(bdp.AttackCounts([40, 50], 1000, [250, 200], 1000), name="a")
    >>> c = bdp.AttackCounts([60, 80], 500, [90, 70], 500)
    >>> b = bdp.Evidence(c, likelihood="bivariate_normal", name="b", strength="own",
    ...                  fix={"rho": 0.0})
    >>> m = Model.build([a, b], delta=1e-5, prior=bdp.Prior())
    >>> m.strengths, m.var_names, m.fixed
    (('s', 's_b'), ['eps', 's', 's_b', 'tau_b'], {'rho_b': 0.0})
    >>> Model.from_settings(m.settings()) == m
    True
    """

    groups: tuple[Evidence, ...]
    delta: float
    prior: Prior
    strengths: tuple[str, ...]
    group_strength: tuple[int, ...]
    tau_start: tuple[float, ...]
    rho_start: tuple[float, ...]
    tau_free: tuple[bool, ...]
    rho_free: tuple[bool, ...]

    # -- making one ----------------------------------------------------------------------------
    @classmethod
    def build(cls, counts, *, delta: float, prior: Prior | None = None) -> Model:
        """Validate the inputs of :func:`~bayes_dp.estimate_epsilon` and make the model.

        Parameters
        ----------
        counts : AttackCounts, Evidence or list of them
            The observations, as ``estimate_epsilon`` takes them.
        delta : float
            The known DP delta, in [0, 1).
        prior : Prior, optional
            Default ``Prior()``.

        Returns
        -------
        Model

        Raises
        ------
        TypeError, ValueError
            For bad input, naming the argument and the value; ValueError also when a group's
            fixed rho is admissible at no tau (or not at its fixed tau).
        """
        groups = as_groups(counts)
        delta = check_delta(delta)
        if prior is None:
            prior = Prior()
        if not isinstance(prior, Prior):
            raise TypeError(f"`prior` must be a bayes_dp.Prior; found {type(prior).__name__}")
        strengths: list[str] = []
        group_strength = []
        for g in groups:
            name = _strength_name(g)
            if name not in strengths:
                strengths.append(name)
            group_strength.append(strengths.index(name))
        tau_start, rho_start, tau_free, rho_free = [], [], [], []
        for g in groups:
            spec = get_likelihood(g.likelihood)
            start = {p.name: p.start for p in spec.params}
            tau = g.fix.get("tau", start.get("tau", 0.0))
            rho = g.fix.get("rho", start.get("rho", 0.0))
            if spec.has("rho") and "rho" in g.fix:
                tau = _admissible_tau(g, tau, fixed_tau="tau" in g.fix)
            tau_start.append(float(tau))
            rho_start.append(float(rho))
            tau_free.append(spec.has("tau") and "tau" not in g.fix)
            rho_free.append(spec.has("rho") and "rho" not in g.fix)
        return cls(
            groups=groups,
            delta=delta,
            prior=prior,
            strengths=tuple(strengths),
            group_strength=tuple(group_strength),
            tau_start=tuple(tau_start),
            rho_start=tuple(rho_start),
            tau_free=tuple(tau_free),
            rho_free=tuple(rho_free),
        )

    @classmethod
    def from_settings(cls, settings: dict) -> Model:
        """Rebuild the model from a posterior's settings (:meth:`settings`, ``post.settings``).

        Reads files of earlier versions too: it needs only ``delta``, ``prior`` (the repr of
        the :class:`~bayes_dp.Prior`) and ``groups``.

        Raises
        ------
        ValueError
            When the settings do not describe a model (naming what is missing or wrong).
        """
        if not isinstance(settings, dict):
            raise TypeError(f"`settings` must be a dict; found {type(settings).__name__}")
        prior = parse_prior(settings.get("prior", "Prior()"))
        if prior is None:
            raise ValueError(f"the recorded prior {settings.get('prior')!r} cannot be read back")
        if "delta" not in settings:
            raise ValueError("the settings record no `delta`")
        recorded = settings.get("groups")
        if not recorded:
            raise ValueError("the settings record no evidence groups")
        groups = []
        for g in recorded:
            one_run = isinstance(g, dict) and g.get("kind") == "one_run"
            try:
                if one_run:
                    counts = OneRunCounts(g["m"], g["r"], g["v"], g.get("pairs", False))
                else:
                    counts = AttackCounts(
                        **{k: g["counts"][k] for k in ("fp", "n_neg", "fn", "n_pos")}
                    )
                name = g["name"]
            except (KeyError, TypeError) as e:
                raise ValueError(f"a recorded group lacks its counts or name ({e!r})") from None
            groups.append(
                Evidence(
                    counts,
                    likelihood=g.get("likelihood", "guesses" if one_run else "binomial"),
                    name=name,
                    strength=g.get("strength", "shared"),
                    fix=dict(g.get("fix") or {}),
                    dependence=g.get("dependence"),
                    reflect=bool(g.get("reflect", True)),
                    source=g.get("source"),
                )
            )
        return cls.build(groups, delta=settings["delta"], prior=prior)

    # -- what it is ----------------------------------------------------------------------------
    @property
    def likelihoods(self) -> tuple[Likelihood, ...]:
        """Per group, its entry of :data:`bayes_dp.core.likelihoods.LIKELIHOODS`."""
        return tuple(get_likelihood(g.likelihood) for g in self.groups)

    @cached_property
    def counts(self) -> AttackCounts | None:
        """The challenge bases of all groups of attack counts, stacked in group order.

        None when every group holds one-run audits (:attr:`guesses`).
        """
        groups = [g.counts for g in self.groups if isinstance(g.counts, AttackCounts)]
        return AttackCounts.concat(groups) if groups else None

    @cached_property
    def base_group(self) -> np.ndarray:
        """Index of the group of each base of :attr:`counts` (empty without such groups)."""
        return np.concatenate(
            [np.zeros(0, dtype=np.int64)]
            + [
                np.full(len(g.counts), j, dtype=np.int64)
                for j, g in enumerate(self.groups)
                if isinstance(g.counts, AttackCounts)
            ]
        )

    @cached_property
    def guesses(self) -> dict[str, np.ndarray]:
        """The rows of the groups of one-run audits, stacked in group order.

        Keys ``m``, ``r``, ``v`` (int64), ``c`` (the coins' factor: 2.0 for pairs of models,
        else 1.0) and ``group`` (the index of each row's group); empty arrays without such
        groups.
        """
        runs = [
            (j, g.counts) for j, g in enumerate(self.groups) if isinstance(g.counts, OneRunCounts)
        ]
        out = {
            k: np.concatenate([np.zeros(0, dtype=np.int64)] + [getattr(c, k) for _, c in runs])
            for k in ("m", "r", "v")
        }
        out["c"] = np.concatenate([np.zeros(0)] + [c.factor for _, c in runs])
        out["group"] = np.concatenate(
            [np.zeros(0, dtype=np.int64)] + [np.full(len(c), j, dtype=np.int64) for j, c in runs]
        )
        return out

    def observation_order(self) -> np.ndarray:
        """Return the observations (count bases, then guesses rows) in the order of the groups.

        Entry i is the position, among the count bases of :attr:`counts` followed by the rows
        of :attr:`guesses`, of the i-th row when the groups' rows are read in group order (the
        columns of the pointwise log likelihood). The identity without one-run groups.
        """
        n_b = self.base_group.size
        pos_b = iter(range(n_b))
        pos_g = iter(range(n_b, n_b + self.guesses["r"].size))
        out = []
        for g in self.groups:
            it = pos_g if isinstance(g.counts, OneRunCounts) else pos_b
            out += [next(it) for _ in range(len(g.counts))]
        return np.asarray(out, dtype=np.int64)

    @property
    def s_fixed(self) -> bool:
        """Whether the strengths are fixed (``prior.s`` a number) rather than sampled."""
        return self.prior.s_fixed

    @property
    def var_names(self) -> list[str]:
        """Return the sampled variables in the posterior's order.

        That is eps, the strengths, then the free tau and rho (or pi and kappa) of each group
        in turn.
        """
        names = ["eps"]
        if not self.s_fixed:
            names += list(self.strengths)
        for j, g in enumerate(self.groups):
            if self.tau_free[j]:
                names.append(f"tau_{g.name}")
            if self.rho_free[j]:
                names.append(f"rho_{g.name}")
        mp = self.mixture_params()
        for j, g in enumerate(self.groups):
            if mp["pi_free"][j]:
                names.append(f"pi_{g.name}")
            if mp["kappa_free"][j]:
                names.append(f"kappa_{g.name}")
        return names

    @property
    def fixed(self) -> dict[str, float]:
        """Return the variables held fixed, with their values.

        These are the strengths when ``prior.s`` is a number, then the fixed tau and rho of
        each group.
        """
        out: dict[str, float] = {}
        if self.s_fixed:
            out.update({name: float(self.prior.s) for name in self.strengths})
        for j, g in enumerate(self.groups):
            spec = get_likelihood(g.likelihood)
            for par, free in (("tau", self.tau_free[j]), ("rho", self.rho_free[j])):
                if spec.has(par) and not free:
                    out[f"{par}_{g.name}"] = float(g.fix[par])
            for par in ("pi", "kappa"):
                if spec.has(par) and par in g.fix:
                    out[f"{par}_{g.name}"] = float(g.fix[par])
        return out

    def check_method(self, method: str) -> None:
        """Raise ValueError when the sampler ``method`` cannot sample this model.

        ``s = 1`` (the rates on the boundary of R(eps, delta)) needs the exact sampler and
        likelihoods that support it (binomial); each group's likelihood must support
        ``method`` (:attr:`bayes_dp.core.likelihoods.Likelihood.methods`).
        """
        name = {"exact": "bdp.Exact()", "mhaar": "bdp.MHAAR()"}
        if self.s_fixed and float(self.prior.s) == 1.0:
            if method != "exact":
                raise ValueError(
                    f"s = 1 (`prior.s=1.0`) needs sampler={name['exact']}; found "
                    f"sampler={name.get(method, method)}"
                )
            bad = [
                g.name
                for g, spec in zip(self.groups, self.likelihoods, strict=True)
                if not spec.boundary_s
            ]
            if bad:
                raise ValueError(
                    "s = 1 (`prior.s=1.0`) is supported for binomial evidence only; found "
                    f"over-dispersed groups {bad}"
                )
        one_half = [g.name for g in self.groups if not g.reflect]
        if one_half and method != "exact":
            raise ValueError(
                f"`reflect=False` (groups {one_half}) needs sampler={name['exact']}; found "
                f"sampler={name.get(method, method)}"
            )
        for g, spec in zip(self.groups, self.likelihoods, strict=True):
            if method not in spec.methods:
                raise ValueError(
                    f"the {spec.name!r} likelihood of group {g.name!r} is not supported by "
                    f"sampler={name.get(method, method)}; use "
                    f"{' or '.join(name.get(m, m) for m in spec.methods)}"
                )

    # -- arrays for the samplers ---------------------------------------------------------------
    def mixture_params(self) -> dict[str, np.ndarray]:
        """Per group, the exposure mixture's pi and kappa: fixed value or start, and free flag.

        Keys ``pi_start``, ``kappa_start``, ``pi_free``, ``kappa_free``; a group of another
        likelihood has them not free (and the starts 0.5 and 0.1, unused).
        """
        out: dict[str, list] = {k: [] for k in ("pi_start", "kappa_start", "pi_free", "kappa_free")}
        for g, spec in zip(self.groups, self.likelihoods, strict=True):
            start = {p.name: p.start for p in spec.params}
            for par, default in (("pi", 0.5), ("kappa", 0.1)):
                out[f"{par}_start"].append(float(g.fix.get(par, start.get(par, default))))
                out[f"{par}_free"].append(spec.has(par) and par not in g.fix)
        return {
            k: np.array(v, dtype=np.bool_ if k.endswith("free") else np.float64)
            for k, v in out.items()
        }

    def kernel_groups(self) -> dict[str, np.ndarray]:
        """Return the per-group arrays the samplers read.

        These are the likelihood code (``lik``), strength variable (``sidx``), ``tau_free``,
        ``rho_free``, ``tau_start``, ``rho_start``, ``reflect`` (:class:`~bayes_dp.Evidence`)
        and those of :meth:`mixture_params`.
        """
        return {
            **self.mixture_params(),
            "lik": np.array([spec.code for spec in self.likelihoods], dtype=np.int64),
            "sidx": np.array(self.group_strength, dtype=np.int64),
            "tau_free": np.array(self.tau_free, dtype=np.bool_),
            "rho_free": np.array(self.rho_free, dtype=np.bool_),
            "tau_start": np.array(self.tau_start, dtype=np.float64),
            "rho_start": np.array(self.rho_start, dtype=np.float64),
            "reflect": np.array([g.reflect for g in self.groups], dtype=np.bool_),
        }

    def named_draws(self, eps, s, tau, rho, pi=None, kappa=None) -> dict[str, np.ndarray]:
        """Return the sampled variables by name (:attr:`var_names`) from the samplers' arrays.

        Parameters
        ----------
        eps : ndarray (chains, draws)
        s : ndarray (chains, draws, strengths)
        tau, rho : ndarray (chains, draws, groups)
        pi, kappa : ndarray (chains, draws, groups), optional
            The exposure mixture's parameters (exact sampler only).
        """
        out = {"eps": eps}
        if not self.s_fixed:
            for k, name in enumerate(self.strengths):
                out[name] = s[:, :, k]
        for j, g in enumerate(self.groups):
            if self.tau_free[j]:
                out[f"tau_{g.name}"] = tau[:, :, j]
            if self.rho_free[j]:
                out[f"rho_{g.name}"] = rho[:, :, j]
        mp = self.mixture_params()
        for j, g in enumerate(self.groups):
            if mp["pi_free"][j]:
                out[f"pi_{g.name}"] = pi[:, :, j]
            if mp["kappa_free"][j]:
                out[f"kappa_{g.name}"] = kappa[:, :, j]
        return out

    # -- records -------------------------------------------------------------------------------
    def settings(self) -> dict:
        """Return the model's part of ``post.settings`` (JSON-serialisable).

        Read back by :meth:`from_settings`.
        """
        prior = self.prior
        return {
            "delta": self.delta,
            "prior": repr(prior),
            "eps_prior": [type(prior.eps).__name__, *[float(v) for v in vars(prior.eps).values()]],
            "groups": [self._group_record(g) for g in self.groups],
            "fixed": self.fixed,
        }

    def _group_record(self, g: Evidence) -> dict:
        """Return the record of group ``g`` in :meth:`settings`.

        A group of attack counts keeps them under ``counts``; a group of one-run audits has
        ``kind`` ``"one_run"`` and its columns ``m``, ``r``, ``v``, ``pairs`` beside its name
        (as :func:`~bayes_dp.estimate_one_run` records its audits, so that readers of counts
        pass it by), and ``delta_slack``: ``2 m c delta`` per audit, what an (eps, delta)-DP
        mechanism may add to the probability of its guesses beyond the eps-DP model.
        """
        rec: dict = {"name": g.name, "likelihood": g.likelihood, "strength": g.strength}
        if isinstance(g.counts, OneRunCounts):
            c = g.counts
            rec.update(kind="one_run", **c.to_dict())
            rec["delta_slack"] = (2.0 * c.m * (c.factor * self.delta)).tolist()
        else:
            rec["counts"] = g.counts.to_dict()
        rec["fix"] = dict(g.fix)
        if g.dependence:
            rec["dependence"] = dict(g.dependence)
        if not g.reflect:
            rec["reflect"] = False
        if g.source is not None:
            rec["source"] = g.source
        return rec

    def to_python(self) -> tuple[list[str], str]:
        """Python source that makes this model's inputs again.

        Returns
        -------
        lines : list of str
            Statements that define ``groups`` (a list of ``bdp.Evidence``), for a script that
            has done ``import bayes_dp as bdp`` and imported the prior classes.
        args : str
            The arguments ``delta=..., prior=...`` of ``bdp.estimate_epsilon(groups, ...)``.
        """
        lines = ["groups = ["]
        for g in self.groups:
            c = g.counts.to_dict()
            if isinstance(g.counts, OneRunCounts):
                pairs = f", pairs={c['pairs']}" if any(c["pairs"]) else ""
                lines.append(
                    f"    bdp.Evidence(bdp.OneRunCounts(m={c['m']}, r={c['r']}, v={c['v']}"
                    f"{pairs}), likelihood={g.likelihood!r}, name={g.name!r}, "
                    f"strength={g.strength!r}),"
                )
                continue
            fix = f", fix={dict(g.fix)!r}" if g.fix else ""
            fix += "" if g.reflect else ", reflect=False"
            lines.append(
                f"    bdp.Evidence(bdp.AttackCounts(fp={c['fp']}, n_neg={c['n_neg']}, "
                f"fn={c['fn']}, n_pos={c['n_pos']}), likelihood={g.likelihood!r}, "
                f"name={g.name!r}, strength={g.strength!r}{fix}),"
            )
        lines.append("]")
        return lines, f"delta={self.delta!r}, prior={self.prior!r}"

    def __eq__(self, other) -> bool:
        if not isinstance(other, Model):
            return NotImplemented
        return self.settings() == other.settings() and (
            self.tau_start,
            self.rho_start,
        ) == (other.tau_start, other.rho_start)

    __hash__ = None  # type: ignore[assignment]


def _admissible_tau(group: Evidence, tau: float, *, fixed_tau: bool) -> float:
    """Check that a fixed rho is admissible at tau (fixed), or find a starting tau where it is."""
    rho = abs(group.fix["rho"])
    n0, n1 = group.counts.n_neg, group.counts.n_pos

    def largest(t):
        return float(np.min(rho_max(t, n0, n1)))

    if rho < largest(tau):
        return tau
    if fixed_tau:
        raise ValueError(
            f"Evidence {group.name!r}: `fix['rho']` = {group.fix['rho']!r} is outside the "
            f"admissible interval (-{largest(tau):.4g}, {largest(tau):.4g}) at tau = {tau!r}"
        )
    for t in np.linspace(tau, 0.999, 2000):
        if rho < largest(t):
            return float(t)
    raise ValueError(
        f"Evidence {group.name!r}: `fix['rho']` = {group.fix['rho']!r} is not admissible for "
        "any tau < 1"
    )
