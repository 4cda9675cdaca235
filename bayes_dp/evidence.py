"""Evidence groups: a set of counts together with how they were produced.

Several groups combine into one posterior: epsilon is shared by all of them, and each group either
shares the attack strength ``s`` with the other ``strength="shared"`` groups or has its own
``s_<name>`` (``strength="own"``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .observations import AttackCounts

__all__ = ["Evidence", "LIKELIHOODS"]

#: Conditional distributions g(X, Y | alpha, beta) known to the model.
LIKELIHOODS = ("binomial", "bivariate_normal")

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Evidence:
    """One group of attack counts and the model of how they were produced.

    Parameters
    ----------
    counts : AttackCounts
        The counts, one row per challenge base.
    likelihood : {"binomial", "bivariate_normal"}
        ``"binomial"``: independent decisions (paper eq. 1). ``"bivariate_normal"``: decisions
        correlated through shared shadow models (paper eq. 7, parameters ``tau_<name>`` and
        ``rho_<name>``).
    name : str
        Identifier used in variable names (``s_<name>``, ``tau_<name>``); letters, digits and
        underscores.
    strength : {"shared", "own"}
        Whether the group shares the attack strength ``s`` with other shared groups or gets its
        own ``s_<name>``.
    fix : dict, optional
        Parameters of the likelihood held fixed, e.g. ``{"tau": 0.0, "rho": 0.0}``.

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
        allowed = {"binomial": (), "bivariate_normal": ("tau", "rho")}[self.likelihood]
        for key in fix:
            if key not in allowed:
                raise ValueError(
                    f"`fix` key {key!r} is not a parameter of the {self.likelihood!r} "
                    f"likelihood; allowed: {allowed}"
                )
        object.__setattr__(self, "fix", dict(fix))
