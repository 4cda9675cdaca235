"""Priors for the privacy parameter eps and the attack strength s.

The paper (Sec. 2.1) uses a one-sided normal for eps and a Beta for s. Each prior is a small frozen
value object with ``logpdf`` and ``rvs`` (backed by ``scipy.stats``) and an integer code with
parameters that the numba kernels read.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from bayes_dp.core.validation import as_generator, check_real
from samplers.model.codes import EPS_HALFNORMAL, EPS_LOGNORMAL, S_BETA, S_FIXED

__all__ = ["HalfNormal", "LogNormal", "Beta", "Prior"]

# The codes the kernels read (samplers.model.densities.log_prior_eps, the strength variables' kinds)
# are defined in samplers.model.codes.


@dataclass(frozen=True)
class HalfNormal:
    """One-sided normal prior on eps >= 0 with standard deviation ``scale`` of the parent normal.

    Examples
    --------
    >>> bool(HalfNormal(10.0).logpdf(0.0) > HalfNormal(10.0).logpdf(5.0))
    True
    """

    scale: float = 10.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_real("scale", self.scale, low=0.0, low_open=True))

    @property
    def _dist(self):
        return stats.halfnorm(scale=self.scale)

    def logpdf(self, x):
        """Log density at ``x``."""
        return self._dist.logpdf(x)

    def rvs(self, size=None, seed=None):
        """Draw from the prior."""
        return self._dist.rvs(size=size, random_state=as_generator(seed))

    def _code(self) -> tuple[int, float, float]:
        return EPS_HALFNORMAL, self.scale, 0.0


@dataclass(frozen=True)
class LogNormal:
    """Log-normal prior on eps > 0: ``log(eps) ~ Normal(mu, sigma^2)``.

    Examples
    --------
    >>> round(float(LogNormal(0.0, 1.0).rvs(size=20000, seed=0).mean()), 1)   # e^(1/2)
    1.6
    """

    mu: float = 0.0
    sigma: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", check_real("mu", self.mu))
        object.__setattr__(self, "sigma", check_real("sigma", self.sigma, low=0.0, low_open=True))

    @property
    def _dist(self):
        return stats.lognorm(s=self.sigma, scale=np.exp(self.mu))

    def logpdf(self, x):
        """Log density at ``x``."""
        return self._dist.logpdf(x)

    def rvs(self, size=None, seed=None):
        """Draw from the prior."""
        return self._dist.rvs(size=size, random_state=as_generator(seed))

    def _code(self) -> tuple[int, float, float]:
        return EPS_LOGNORMAL, self.mu, self.sigma


@dataclass(frozen=True)
class Beta:
    """Beta(a, b) prior on the attack strength s in [0, 1].

    Examples
    --------
    >>> bool(Beta(1.0, 1.0).logpdf(0.3) == 0.0)
    True
    """

    a: float = 1.0
    b: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "a", check_real("a", self.a, low=0.0, low_open=True))
        object.__setattr__(self, "b", check_real("b", self.b, low=0.0, low_open=True))

    @property
    def _dist(self):
        return stats.beta(self.a, self.b)

    def logpdf(self, x):
        """Log density at ``x``."""
        return self._dist.logpdf(x)

    def rvs(self, size=None, seed=None):
        """Draw from the prior."""
        return self._dist.rvs(size=size, random_state=as_generator(seed))

    def _code(self) -> tuple[int, float, float]:
        return S_BETA, self.a, self.b


def _check_s_prior(name: str, s):
    if isinstance(s, Beta):
        return s
    if isinstance(s, (HalfNormal, LogNormal)):
        raise TypeError(f"`{name}` must be a Beta prior or a float in [0, 1]; found {s!r}")
    return check_real(name, s, low=0.0, high=1.0)


@dataclass(frozen=True)
class Prior:
    """Joint prior: eps and the attack strength s, independent.

    Parameters
    ----------
    eps : HalfNormal or LogNormal
        Prior of eps. Default ``HalfNormal(10.0)``; the paper (Sec. 4.2) used variance 10,
        ``HalfNormal(10 ** 0.5)`` (docs/validation/model.md says why we keep the wider one).
    s : Beta or float
        Prior of s, or a float in [0, 1] that fixes s. ``s=0`` is the uniform prior on
        R(eps, delta); values near 1 assume near-optimal attacks on worst-case challenge bases
        (the paper's Remark 2: over-confident unless that is really so). ``s=1`` is the limit
        in which (alpha, beta) lie on the boundary of R(eps, delta), what tools that assume an
        optimal attack compute; the exact sampler supports it for binomial evidence.
        Default ``Beta(1, 1)``.
        Groups with their own strength (``Evidence(strength="own")``) use the same prior.
    tau : Beta
        Prior of the over-dispersion ``tau`` of correlated-count groups (the correlation of two
        decisions under the same hypothesis), on (0, 1); default uniform. The FP-FN correlation
        ``rho`` of a bivariate-normal group is uniform on its admissible interval given tau
        (see ``docs/validation/correlated.md``).

    Examples
    --------
    >>> Prior(s=0.6).s_fixed
    True
    """

    eps: HalfNormal | LogNormal = HalfNormal(10.0)
    s: Beta | float = Beta(1.0, 1.0)
    tau: Beta = Beta(1.0, 1.0)

    def __post_init__(self) -> None:
        if not isinstance(self.eps, (HalfNormal, LogNormal)):
            raise TypeError(f"`eps` must be a HalfNormal or LogNormal prior; found {self.eps!r}")
        object.__setattr__(self, "s", _check_s_prior("s", self.s))
        if not isinstance(self.tau, Beta):
            raise TypeError(f"`tau` must be a Beta prior; found {self.tau!r}")

    @property
    def s_fixed(self) -> bool:
        """Whether s is fixed (a float) rather than inferred."""
        return not isinstance(self.s, Beta)

    def _s_code(self) -> tuple[int, float, float]:
        if self.s_fixed:
            return S_FIXED, float(self.s), 0.0
        return self.s._code()


#: The classes a recorded prior (its repr) may name.
_PRIOR_CLASSES = ("Prior", "HalfNormal", "LogNormal", "Beta")


def parse_prior(text):
    """Return the :class:`Prior` (or one of its parts) whose repr is ``text``, or None.

    Reads back the prior recorded in a posterior's settings. Only the prior classes and
    numbers are accepted; nothing is evaluated.

    Examples
    --------
    >>> parse_prior("Prior(eps=HalfNormal(scale=5.0), s=0.6, tau=Beta(a=1.0, b=2.0))").s
    0.6
    >>> parse_prior("__import__('os')") is None
    True
    """
    import ast

    classes = {"Prior": Prior, "HalfNormal": HalfNormal, "LogNormal": LogNormal, "Beta": Beta}

    def build(node):
        if isinstance(node, ast.Call):
            if not (isinstance(node.func, ast.Name) and node.func.id in _PRIOR_CLASSES):
                raise ValueError("not a prior")
            cls = classes[node.func.id]
            return cls(
                *(build(a) for a in node.args), **{k.arg: build(k.value) for k in node.keywords}
            )
        value = ast.literal_eval(node)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise ValueError("not a number")
        return value

    try:
        return build(ast.parse(str(text), mode="eval").body)
    except (SyntaxError, ValueError, TypeError):
        return None
