"""The named parts of a claim's explanation (:attr:`bayes_dp.AuditClaim.details`).

:func:`bayes_dp.audit_claim` and the modules that rewrite a claim for their kind of evidence
(``claim_counts``, ``claim_game``, ``claim_scores``, ``claim_gdp``) build the explanation as an
ordered list of ``(name, text)`` pairs, one sentence or a few per part, and find a part by its
name, never by its place in the list. The names (:data:`NAMES`) are what a reader sees in front
of each line behind ``bayes-dp estimate --explain`` and in the report's details.

>>> parts = [("bound", "A."), ("upper end", "B.")]
>>> replace(parts, "upper end", "C.")
[('bound', 'A.'), ('upper end', 'C.')]
>>> insert_after(parts, "bound", ("model", "M."))
[('bound', 'A.'), ('model', 'M.'), ('upper end', 'B.')]
"""

from __future__ import annotations

__all__ = ["NAMES", "insert_after", "replace"]

#: Every name a part can have, in the order a reader meets them, with what the part says.
NAMES = {
    "dependence": "why the pooled counts make the claim not reliable",
    "convergence": "why the chains make the claim (or the model's figures) not reliable",
    "gaussian shape": "the fit check's verdict, when the Gaussian shape does not fit",
    "bound": "the bound the claim signs, how it is computed and what sets it",
    "model": "what the posterior's own lower end says (the model's figure, not the finding)",
    "restart": "the chains run again from a mode the first chains missed",
    "prior lower end": "that the prior, not the data, sets the posterior's lower end",
    "upper end": "what sets the posterior's upper end",
    "ceiling": "what the attack could show at its level, beside the upper end",
    "ruled out": "that the data rule the model's answer out",
}


def _check(name: str) -> None:
    if name not in NAMES:
        raise ValueError(f"`name` must be one of {sorted(NAMES)}; found {name!r}")


def replace(parts: list[tuple[str, str]], name: str, text: str) -> list[tuple[str, str]]:
    """Return ``parts`` with the text of the part called ``name`` replaced by ``text``.

    Raises ValueError when no part has that name (a claim that lost a part would mislead).
    """
    _check(name)
    names = [n for n, _ in parts]
    if name not in names:
        raise ValueError(f"`parts` has no part named {name!r}; its parts: {names}")
    return [(n, text if n == name else t) for n, t in parts]


def insert_after(
    parts: list[tuple[str, str]], name: str, part: tuple[str, str]
) -> list[tuple[str, str]]:
    """Return ``parts`` with ``part`` inserted after the part called ``name``.

    Raises ValueError when no part has that name.
    """
    _check(part[0])
    names = [n for n, _ in parts]
    if name not in names:
        raise ValueError(f"`parts` has no part named {name!r}; its parts: {names}")
    at = names.index(name) + 1
    return [*parts[:at], part, *parts[at:]]
