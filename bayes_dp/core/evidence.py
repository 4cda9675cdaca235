"""Evidence groups: a set of counts together with how they were produced.

Several groups combine into one posterior: epsilon is shared by all of them, and each group either
shares the attack strength ``s`` with the other ``strength="shared"`` groups or has its own
``s_<name>`` (``strength="own"``). A group holds the error counts of challenge bases
(:class:`~bayes_dp.AttackCounts`) or the guesses of one-run audits
(:class:`~bayes_dp.OneRunCounts`, likelihood ``"guesses"``).
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass, field

import numpy as np

from bayes_dp.core import likelihoods
from bayes_dp.core.observations import AttackCounts, OneRunCounts

__all__ = ["Evidence", "LIKELIHOODS", "check_group_name"]

#: Names of the conditional distributions g(X, Y | alpha, beta) known to the model (the keys of
#: the registry :data:`bayes_dp.core.likelihoods.LIKELIHOODS`).
LIKELIHOODS = tuple(likelihoods.LIKELIHOODS)

#: Longest group name accepted.
NAME_MAX_LEN = 64


def check_group_name(name) -> str:
    """Return the group name ``name`` in Unicode NFC form, or raise naming what is wrong.

    A group name becomes part of variable names (``s_<name>``, ``tau_<name>``, ``rho_<name>``)
    in ArviZ objects and netCDF files. It must start with a letter (any script) or an
    underscore; then letters, combining marks, digits, underscores, hyphens and single spaces
    may follow, up to 64 characters, with no space at either end. Names are normalised to NFC,
    so a composed and a decomposed "café" are the same group.

    Parameters
    ----------
    name : str
        The proposed name.

    Returns
    -------
    str
        The NFC form of ``name``.

    Raises
    ------
    TypeError
        If ``name`` is not a string.
    ValueError
        If ``name`` breaks the rules above; the message names the offending character.

    Examples
    --------
    >>> check_group_name("données-2024 run_b")
    'données-2024 run_b'
    >>> check_group_name("9lives")
    Traceback (most recent call last):
    ...
    ValueError: `name` must start with a letter or an underscore; found '9lives'
    """
    if not isinstance(name, str):
        raise TypeError(f"`name` must be a string; found {type(name).__name__} {name!r}")
    nfc = unicodedata.normalize("NFC", name)
    if not nfc:
        raise ValueError("`name` must not be empty")
    if len(nfc) > NAME_MAX_LEN:
        raise ValueError(
            f"`name` must have at most {NAME_MAX_LEN} characters; found {len(nfc)} in {name!r}"
        )
    if nfc != nfc.strip(" "):
        raise ValueError(f"`name` must not start or end with a space; found {name!r}")
    if "  " in nfc:
        raise ValueError(f"`name` must not hold two spaces in a row; found {name!r}")
    first = nfc[0]
    if first != "_" and not unicodedata.category(first).startswith("L"):
        raise ValueError(f"`name` must start with a letter or an underscore; found {name!r}")
    for ch in nfc[1:]:
        cat = unicodedata.category(ch)
        if ch in "_- " or cat[0] in "LM" or cat == "Nd":
            continue
        raise ValueError(
            f"`name` may hold letters, digits, underscores, hyphens and spaces only; found "
            f"{ch!r} (U+{ord(ch):04X}) in {name!r}"
        )
    return nfc


@dataclass(frozen=True)
class Evidence:
    """One group of counts and the model of how they were produced.

    Parameters
    ----------
    counts : AttackCounts or OneRunCounts
        The counts: one row per challenge base (:class:`~bayes_dp.AttackCounts`), or one row
        per one-run audit (:class:`~bayes_dp.OneRunCounts`: ``v`` of ``r`` guesses right).
    likelihood : {"binomial", "bivariate_normal", "beta_binomial", "exposure_mixture", \
"guesses"}, optional
        Default: ``"binomial"`` for AttackCounts, ``"guesses"`` for OneRunCounts (the only
        likelihood of one-run audits). ``"binomial"``: independent decisions (paper eq. 1).
        ``"bivariate_normal"``: decisions correlated through shared shadow models (paper
        eq. 7, parameters ``tau_<name>``, the correlation of two decisions under the same
        hypothesis, and ``rho_<name>``, of an FP decision with an FN decision).
        ``"beta_binomial"``: an exact discrete over-dispersed model, X and Y independent
        beta-binomials with intra-class correlation ``tau_<name>`` (no FP-FN correlation);
        see ``docs/validation/correlated.md``. ``"guesses"``: each audit's right guesses
        v ~ Binomial(r, p), the accuracy p uniform on
        ``[e^(c s eps) / (1 + e^(c s eps)), e^(c eps) / (1 + e^(c eps))]`` (between a guesser of
        strength s and the best guesser of an eps-DP mechanism; c = 2 for audits of pairs of
        models, whose coins are (2 eps, 2 delta)-DP, else 1), integrated out exactly. Like
        :func:`~bayes_dp.estimate_one_run`, the model is the eps-DP bound of Steinke, Nasr and
        Jagielski; an (eps, delta)-DP mechanism can exceed it by about ``2 m delta`` (``2 m
        (2 delta)`` for pairs) in probability, which ``post.settings["delta_slack"]`` records
        per audit. Exact sampler only (``sampler=bdp.MHAAR()`` refuses such groups).
    name : str
        Used in variable names (``s_<name>``, ``tau_<name>``): a letter (any script) or an
        underscore, then letters, digits, underscores, hyphens or single spaces, at most 64
        characters; stored in Unicode NFC form (see :func:`check_group_name`).
    strength : {"shared", "own"}
        Whether the group shares the attack strength ``s`` with other shared groups or gets its
        own ``s_<name>`` (for a one-run group: the guesser's strength, its accuracy's floor
        ``e^(c s eps) / (1 + e^(c s eps))``).
    fix : dict, optional
        Parameters of the likelihood held fixed, e.g. ``{"tau": 0.0, "rho": 0.0}`` (then the
        bivariate normal model is the normal approximation of the binomial one).
    dependence : dict, optional
        A record of how dependent the decisions behind the counts are
        (``mia.dependence.DependenceDiagnostic.to_dict()``, set by
        ``ScoreMatrixCounts.to_evidence``); kept in ``post.settings["groups"]`` and read by
        :func:`~bayes_dp.audit_claim`. Does not change the likelihood. AttackCounts only.
    reflect : bool, default True
        Whether a base's error point (alpha, beta) may lie in the reflected half of the band
        too (alpha + beta > 1: a test worse than chance, which R(eps, delta) allows as much as
        its mirror image; the paper's model). ``False`` confines it to the lower-left half: the
        decisions as made, for tests that say "member" for the higher likelihood ratio, whose
        counts above the diagonal are noise (cross-fed LiRA decisions on targets that show
        nothing, ``docs/validation/lira.md``, "Cross-fed decisions that point the wrong way").
        Binomial
        and exposure-mixture likelihoods, exact sampler only.
    source : dict, optional
        A JSON-ready record of how the counts were made (e.g. the guessing game's: design,
        candidates, k); kept in ``post.settings["groups"][i]["source"]`` and in the posterior's
        files. Does not change the likelihood.

    Examples
    --------
    >>> ev = Evidence(AttackCounts(40, 1000, 250, 1000), name="canary", strength="own")
    >>> ev.likelihood, ev.strength
    ('binomial', 'own')
    >>> game = Evidence(OneRunCounts(m=2000, r=100, v=93, pairs=True), name="game",
    ...                 source={"design": "balanced", "k": 100})
    >>> game.likelihood, game.source["k"]
    ('guesses', 100)
    """

    counts: AttackCounts | OneRunCounts
    likelihood: str | None = None
    name: str = "evidence"
    strength: str = "shared"
    fix: dict | None = field(default=None)
    dependence: dict | None = field(default=None, compare=False)
    reflect: bool = True
    source: dict | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.counts, (AttackCounts, OneRunCounts)):
            raise TypeError(
                "`counts` must be an AttackCounts or a OneRunCounts; found "
                f"{type(self.counts).__name__}"
            )
        kind = type(self.counts).__name__
        if self.likelihood is None:
            object.__setattr__(
                self, "likelihood", "guesses" if kind == "OneRunCounts" else "binomial"
            )
        spec = likelihoods.get_likelihood(self.likelihood)
        if spec.counts != kind:
            fits = [k for k, v in likelihoods.LIKELIHOODS.items() if v.counts == kind]
            raise ValueError(
                f"the {self.likelihood!r} likelihood reads {spec.counts}, not {kind}; for "
                f"{kind} use likelihood {' or '.join(map(repr, fits))}"
            )
        if len(self.counts) == 0:
            raise ValueError("`counts` holds no audit; at least one row is needed")
        object.__setattr__(self, "name", check_group_name(self.name))
        if self.strength not in ("shared", "own"):
            raise ValueError(f"`strength` must be 'shared' or 'own'; found {self.strength!r}")
        fix = {} if self.fix is None else self.fix
        if not isinstance(fix, dict):
            raise TypeError(f"`fix` must be a dict or None; found {type(fix).__name__}")
        object.__setattr__(self, "fix", spec.check_fix(fix, self.counts))
        if not isinstance(self.reflect, (bool, np.bool_)):
            raise TypeError(
                f"`reflect` must be True or False; found {type(self.reflect).__name__} "
                f"{self.reflect!r}"
            )
        object.__setattr__(self, "reflect", bool(self.reflect))
        if not self.reflect and self.likelihood not in ("binomial", "exposure_mixture"):
            raise ValueError(
                "`reflect=False` is supported by the 'binomial' and 'exposure_mixture' "
                f"likelihoods; found likelihood={self.likelihood!r}"
            )
        if self.dependence is not None and not isinstance(self.dependence, dict):
            raise TypeError(
                f"`dependence` must be a dict or None; found {type(self.dependence).__name__}"
            )
        if self.dependence is not None and kind == "OneRunCounts":
            raise ValueError(
                "`dependence` records how dependent pooled error counts are (AttackCounts); a "
                "one-run audit's coins are independent by design: record how its counts were "
                "made in `source`"
            )
        if self.source is not None:
            if not isinstance(self.source, dict):
                raise TypeError(
                    f"`source` must be a dict or None; found {type(self.source).__name__}"
                )
            try:
                json.dumps(self.source, allow_nan=False)
            except (TypeError, ValueError) as e:
                raise ValueError(
                    f"`source` must be JSON-ready (str keys; str, number, bool, None, list and "
                    f"dict values; finite numbers); json.dumps says: {e}"
                ) from None
