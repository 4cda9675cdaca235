"""The likelihoods of an evidence group, in one registry.

Four are conditional distributions g(X, Y | alpha, beta) of a challenge base's error counts
(:class:`~bayes_dp.AttackCounts`); ``"guesses"`` is that of the right guesses of one-run audits
(:class:`~bayes_dp.OneRunCounts`). Each entry of :data:`LIKELIHOODS` says all that
``bayes_dp`` knows about one likelihood: its name (what ``Evidence(likelihood=...)`` and a
counts file's ``likelihood`` column take), the integer code the numba kernels switch on
(defined once, in :mod:`samplers.model.codes`), its parameters with their bounds, priors and
starting values, the samplers that support it, the counts it reads, and how to simulate counts
from it. :class:`~bayes_dp.Evidence`, :class:`bayes_dp.inference.model.Model`,
:func:`~bayes_dp.estimate_epsilon` and :func:`~bayes_dp.core.simulate.simulate_counts` read it here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from bayes_dp.core.validation import check_real
from samplers.model import codes

__all__ = [
    "KAPPA_MIN",
    "KAPPA_PRIOR",
    "LIKELIHOODS",
    "Likelihood",
    "PI_PRIOR",
    "Parameter",
    "get_likelihood",
    "rho_max",
]


@dataclass(frozen=True)
class Parameter:
    """A parameter of a likelihood (``tau`` or ``rho``), one per group that uses it.

    Attributes
    ----------
    name : str
        ``"tau"``, ``"rho"``, ``"pi"`` or ``"kappa"``; the group's variable is
        ``<name>_<group name>``.
    meaning : str
        What it is, in words.
    prior : str
        Its prior, in words (``Prior.tau`` for tau).
    start : float
        Where the samplers start it when it is free.
    """

    name: str
    meaning: str
    prior: str
    start: float


TAU = Parameter(
    "tau",
    "correlation of two decisions under the same hypothesis (over-dispersion)",
    "Prior.tau, a Beta on (0, 1)",
    0.05,
)
RHO = Parameter(
    "rho",
    "correlation of a false-positive decision with a false-negative one",
    "uniform on its admissible interval given tau",
    0.0,
)


#: Beta(a, b) prior of pi, the exposure mixture's share of exposed targets.
PI_PRIOR = (1.0, 1.0)
#: Prior of kappa, the privacy level of the unexposed targets' region as a fraction of eps:
#: kappa = KAPPA_MIN^u with u ~ Beta(a, b) = KAPPA_PRIOR, i.e. log-uniform on (KAPPA_MIN, 1). A
#: target that shows nothing is likeliest under an unexposed region of constant width delta
#: (kappa eps << delta); a prior whose mass below delta / eps is proportional to 1 / eps (any
#: density positive at 0, e.g. uniform) would make those targets vote for small eps again
#: (``docs/validation/lira.md``, "The exposure mixture").
KAPPA_PRIOR = (1.0, 1.0)
#: Smallest kappa of its prior.
KAPPA_MIN = 1e-15

PI = Parameter(
    "pi",
    "share of the targets whose error point lies in the band R_s(eps, delta) (exposed)",
    f"Beta{PI_PRIOR}",
    0.5,
)
KAPPA = Parameter(
    "kappa",
    "privacy level of the unexposed targets' region R(kappa eps, delta), as a fraction of eps",
    "log-uniform on (1e-15, 1): kappa = 1e-15^u, u ~ Beta(1, 1)",
    0.1,
)
#: Parameters in (0, 1) (open): a fixed value must lie there.
_UNIT = ("pi", "kappa")


@dataclass(frozen=True)
class Likelihood:
    """One conditional distribution g(X, Y | alpha, beta) of a base's counts.

    Attributes
    ----------
    name : str
        The name ``Evidence(likelihood=...)`` takes.
    code : int
        The kernels' code (:mod:`samplers.model.codes`, ``LIK_*``).
    summary : str
        What it models, in words.
    params : tuple of Parameter
        Its parameters besides (alpha, beta); each group gets its own.
    methods : tuple of str
        The samplers of :func:`~bayes_dp.estimate_epsilon` that support it.
    boundary_s : bool
        Whether the limit s = 1 (the rates on the boundary of R(eps, delta)) is supported.
    tau_low : float or None
        Lower bound (closed) of a fixed tau; None: the open bound ``-1 / (N_max - 1)``, which
        depends on the group's largest number of challenges N_max.
    counts : str
        The class of the counts it reads: ``"AttackCounts"`` (challenge bases) or
        ``"OneRunCounts"`` (one-run audits).
    """

    name: str
    code: int
    summary: str
    params: tuple[Parameter, ...]
    methods: tuple[str, ...]
    boundary_s: bool
    tau_low: float | None
    _simulate: Callable
    counts: str = "AttackCounts"

    @property
    def param_names(self) -> tuple[str, ...]:
        """Names of the parameters, e.g. ``("tau", "rho")``."""
        return tuple(p.name for p in self.params)

    def has(self, param: str) -> bool:
        """Whether ``param`` (``"tau"``, ``"rho"``, ...) is a parameter of this likelihood."""
        return param in self.param_names

    def check_fix(self, fix: dict, counts) -> dict[str, float]:
        """Validate the fixed parameters ``fix`` of a group with ``counts``; return them as floats.

        Raises
        ------
        ValueError
            For a key that is not a parameter of this likelihood, or a value out of bounds
            (naming the key and the value).
        """
        allowed = self.param_names
        for key, value in fix.items():
            if key not in allowed:
                raise ValueError(
                    f"`fix` key {key!r} is not a parameter of the {self.name!r} "
                    f"likelihood; allowed: {allowed}"
                )
            if key in _UNIT:
                check_real(f"fix[{key!r}]", value, low=0.0, high=1.0, low_open=True, high_open=True)
            else:
                check_real(f"fix[{key!r}]", value, low=-1.0, high=1.0, high_open=True)
        if "tau" in fix:
            n_max = int(max(counts.n_neg.max(), counts.n_pos.max()))
            closed = self.tau_low is not None
            low = self.tau_low if closed else -1.0 / max(n_max - 1, 1)
            if not fix["tau"] >= low or (not closed and fix["tau"] == low):
                raise ValueError(
                    f"`fix['tau']` must be {'>=' if closed else '>'} {low:.3g} for this "
                    f"{self.name!r} group (largest N {n_max}); found {fix['tau']!r}"
                )
        return {k: float(v) for k, v in fix.items()}

    def simulate(self, rng, n_neg, n_pos, alpha, beta, *, tau=0.0, rho=0.0):
        """Draw the counts (X, Y) of each base given its rates (alpha, beta).

        Likelihoods of :class:`~bayes_dp.AttackCounts` only (``counts``); the "guesses"
        likelihood raises ValueError.

        Parameters
        ----------
        rng : numpy.random.Generator
        n_neg, n_pos, alpha, beta : ndarray (n,)
            Challenges per hypothesis (as floats) and the rates of each base.
        tau, rho : float
            The likelihood's parameters (ignored where it has none).

        Returns
        -------
        x, y : ndarray of int64
        """
        return self._simulate(rng, n_neg, n_pos, alpha, beta, tau, rho)


def rho_max(tau, n_neg, n_pos):
    """Largest |rho| at which the covariance of eq. 7 stays positive definite, per base.

    ``sqrt(c0 c1 / (N0 N1))`` with ``c = 1 + (N - 1) tau``; a fixed or sampled rho of a
    bivariate-normal group must be inside (-m, m) with m the smallest over its bases. The
    arguments broadcast; the formula is the kernels' own
    (:func:`samplers.model.densities.rho_max`), applied element by element.
    """
    from samplers.model.densities import rho_max_array  # numba: loaded when first needed

    return rho_max_array(tau, n_neg, n_pos)


def _simulate_binomial(rng, n_neg, n_pos, alpha, beta, tau, rho):
    x = rng.binomial(n_neg.astype(np.int64), alpha)
    y = rng.binomial(n_pos.astype(np.int64), beta)
    return x, y


def _simulate_bivariate_normal(rng, n_neg, n_pos, alpha, beta, tau, rho):
    n = alpha.size
    c0 = 1 + (n_neg - 1) * tau
    c1 = 1 + (n_pos - 1) * tau
    # variances at the rates shrunk by half a count, as in the sampler's likelihood
    sa = (n_neg * alpha + 0.5) / (n_neg + 1)
    sb = (n_pos * beta + 0.5) / (n_pos + 1)
    sx = np.sqrt(sa * (1 - sa) * n_neg * c0)
    sy = np.sqrt(sb * (1 - sb) * n_pos * c1)
    r = rho * np.sqrt(n_neg * n_pos / (c0 * c1))
    if np.any(np.abs(r) >= 1):
        raise ValueError(f"`rho` = {rho} is not admissible at tau = {tau}")
    z1, z2 = rng.standard_normal((2, n))
    x = np.rint(np.clip(n_neg * alpha + sx * z1, 0, n_neg)).astype(np.int64)
    y = np.rint(np.clip(n_pos * beta + sy * (r * z1 + np.sqrt(1 - r**2) * z2), 0, n_pos)).astype(
        np.int64
    )
    return x, y


def _simulate_guesses(rng, n_neg, n_pos, alpha, beta, tau, rho):
    raise ValueError(
        "the 'guesses' likelihood models one-run audits (OneRunCounts), not the error counts "
        "(X, Y) of challenge bases: it has no (alpha, beta) to simulate from"
    )


def _simulate_beta_binomial(rng, n_neg, n_pos, alpha, beta, tau, rho):
    tau = check_real("tau", tau, low=0.0, high=1.0, low_open=True, high_open=True)
    phi = 1 / tau - 1
    x = rng.binomial(n_neg.astype(np.int64), rng.beta(alpha * phi, (1 - alpha) * phi))
    y = rng.binomial(n_pos.astype(np.int64), rng.beta(beta * phi, (1 - beta) * phi))
    return x, y


_ALL = (
    Likelihood(
        name="binomial",
        code=codes.LIK_BINOMIAL,
        summary="independent decisions: X ~ Bin(N0, alpha), Y ~ Bin(N1, beta) (paper eq. 1)",
        params=(),
        methods=("exact", "mhaar"),
        boundary_s=True,
        tau_low=None,
        _simulate=_simulate_binomial,
    ),
    Likelihood(
        name="bivariate_normal",
        code=codes.LIK_BIVARIATE_NORMAL,
        summary="decisions correlated through shared shadow models: the bivariate normal of "
        "the paper's eq. 7",
        params=(TAU, RHO),
        methods=("exact", "mhaar"),
        boundary_s=False,
        tau_low=None,
        _simulate=_simulate_bivariate_normal,
    ),
    Likelihood(
        name="beta_binomial",
        code=codes.LIK_BETA_BINOMIAL,
        summary="X and Y independent beta-binomials with intra-class correlation tau",
        params=(TAU,),
        methods=("exact", "mhaar"),
        boundary_s=False,
        tau_low=0.0,
        _simulate=_simulate_beta_binomial,
    ),
    Likelihood(
        name="exposure_mixture",
        code=codes.LIK_EXPOSURE_MIXTURE,
        summary="binomial decisions; each base exposed (error point uniform on R_s(eps, delta)) "
        "with probability pi, else unexposed (uniform on R(kappa eps, delta)): for score "
        "matrices, where most targets show nothing (an option; docs/validation/lira.md)",
        params=(PI, KAPPA),
        methods=("exact",),
        boundary_s=False,
        tau_low=None,
        _simulate=_simulate_binomial,
    ),
    Likelihood(
        name="guesses",
        code=codes.LIK_GUESSES,
        summary="one-run audits (OneRunCounts): v right of r guesses, v ~ Bin(r, p), the "
        "accuracy p uniform on [e^(c s eps) / (1 + e^(c s eps)), e^(c eps) / (1 + e^(c eps))], "
        "c = 2 for pairs of models, else 1 (Steinke, Nasr and Jagielski's game)",
        params=(),
        methods=("exact",),
        boundary_s=True,
        tau_low=None,
        _simulate=_simulate_guesses,
        counts="OneRunCounts",
    ),
)

#: The registry: likelihood name -> :class:`Likelihood` (read-only).
LIKELIHOODS = MappingProxyType({lik.name: lik for lik in _ALL})


def get_likelihood(name) -> Likelihood:
    """Return the :class:`Likelihood` called ``name``.

    Raises
    ------
    ValueError
        If there is none, listing the names there are.

    Examples
    --------
    >>> get_likelihood("bivariate_normal").param_names
    ('tau', 'rho')
    >>> get_likelihood("beta_binomial").code == get_likelihood("binomial").code
    False
    >>> sorted(LIKELIHOODS)
    ['beta_binomial', 'binomial', 'bivariate_normal', 'exposure_mixture', 'guesses']
    """
    spec = LIKELIHOODS.get(name) if isinstance(name, str) else None
    if spec is None:
        raise ValueError(f"`likelihood` must be one of {tuple(LIKELIHOODS)}; found {name!r}")
    return spec
