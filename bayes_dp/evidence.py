"""Evidence groups: a set of counts together with how they were produced.

Several groups combine into one posterior: epsilon is shared by all of them, and each group either
shares the attack strength ``s`` with the other ``strength="shared"`` groups or has its own
``s_<name>`` (``strength="own"``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._validation import check_real
from .observations import AttackCounts

__all__ = ["Evidence", "LIKELIHOODS"]

#: Conditional distributions g(X, Y | alpha, beta) known to the model.
LIKELIHOODS = ("binomial", "bivariate_normal", "beta_binomial")

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Evidence:
    """One group of attack counts and the model of how they were produced.

    Parameters
    ----------
    counts : AttackCounts
        The counts, one row per challenge base.
    likelihood : {"binomial", "bivariate_normal", "beta_binomial"}
        ``"binomial"``: independent decisions (paper eq. 1). ``"bivariate_normal"``: decisions
        correlated through shared shadow models (paper eq. 7, parameters ``tau_<name>``, the
        correlation of two decisions under the same hypothesis, and ``rho_<name>``, of an FP
        decision with an FN decision). ``"beta_binomial"``: an exact discrete over-dispersed
        model, X and Y independent beta-binomials with intra-class correlation ``tau_<name>``
        (no FP-FN correlation); see ``docs/correlated.md``.
    name : str
        Identifier used in variable names (``s_<name>``, ``tau_<name>``); letters, digits and
        underscores.
    strength : {"shared", "own"}
        Whether the group shares the attack strength ``s`` with other shared groups or gets its
        own ``s_<name>``.
    fix : dict, optional
        Parameters of the likelihood held fixed, e.g. ``{"tau": 0.0, "rho": 0.0}`` (then the
        bivariate normal model is the normal approximation of the binomial one).

    Examples
    --------
    >>> ev = Evidence(AttackCounts(40, 1000, 250, 1000), name="canary", strength="own")
    >>> ev.likelihood, ev.strength
    ('binomial', 'own')
    """

    counts: AttackCounts
    likelihood: str = "binomial"
    name: str = "evidence"
    strength: str = "shared"
    fix: dict | None = field(default=None)

    def __post_init__(self) -> None:
        if not isinstance(self.counts, AttackCounts):
            raise TypeError(f"`counts` must be an AttackCounts; found {type(self.counts).__name__}")
        if self.likelihood not in LIKELIHOODS:
            raise ValueError(
                f"`likelihood` must be one of {LIKELIHOODS}; found {self.likelihood!r}"
            )
        if not isinstance(self.name, str) or not _NAME_RE.match(self.name):
            raise ValueError(
                f"`name` must be an identifier (letters, digits, underscores); found {self.name!r}"
            )
        if self.strength not in ("shared", "own"):
            raise ValueError(f"`strength` must be 'shared' or 'own'; found {self.strength!r}")
        fix = {} if self.fix is None else self.fix
        if not isinstance(fix, dict):
            raise TypeError(f"`fix` must be a dict or None; found {type(fix).__name__}")
        allowed = {"binomial": (), "bivariate_normal": ("tau", "rho"), "beta_binomial": ("tau",)}[
            self.likelihood
        ]
        for key, value in fix.items():
            if key not in allowed:
                raise ValueError(
                    f"`fix` key {key!r} is not a parameter of the {self.likelihood!r} "
                    f"likelihood; allowed: {allowed}"
                )
            check_real(f"fix[{key!r}]", value, low=-1.0, high=1.0, high_open=True)
        if "tau" in fix:
            n_max = int(max(self.counts.n_neg.max(), self.counts.n_pos.max()))
            low = 0.0 if self.likelihood == "beta_binomial" else -1.0 / max(n_max - 1, 1)
            if not fix["tau"] >= low or (self.likelihood != "beta_binomial" and fix["tau"] == low):
                raise ValueError(
                    f"`fix['tau']` must be {'>=' if low == 0 else '>'} {low:.3g} for this "
                    f"{self.likelihood!r} group (largest N {n_max}); found {fix['tau']!r}"
                )
        object.__setattr__(self, "fix", {k: float(v) for k, v in fix.items()})
