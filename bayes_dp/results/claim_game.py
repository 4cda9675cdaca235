"""The claim of a posterior on a guessing game played on a score matrix.

:func:`bayes_dp.audit_claim` calls :func:`game_words` for a posterior whose evidence includes
groups made by ``mia.GuessingGame.to_evidence`` (the group's ``source`` record has ``kind``
``"guessing_game"``; the default evidence of a score matrix on the command line). The claim's
lower end is frequentist and reads the record only, never the draws:

* **The game's bound** (Steinke, Nasr and Jagielski's one-run bound with its ``2 m delta``
  term; pairs of models: the bound on 2 eps at 2 delta, halved): the larger of the bound over
  the game's grid of k (Bonferroni over the grid) and the bound at the k predicted from the
  reference half alone, each at half of the game's share of the error
  (:func:`bayes_dp.core.one_run_bound.guessing_game_bounds`, the computation the game's own
  ``bounds`` use).
* **The bound pooled over targets** from the per-model error rates of a test fitted on the
  reference half (the record's ``pooled_rates``, :func:`mia.model_rates.pooled_record`), over all
  fitted targets and over the most exposed ones, where at least
  :data:`~bayes_dp.results.claim_scores.POOLED_MIN_MODELS` test models give them
  (:func:`bayes_dp.results.claim_scores._pooled_bound`): it is ahead where a handful of
  targets is exposed among many that show nothing.

Each part gets a share of the claim's error, fixed by the game's design before any test bit is
read (:data:`GAME_SHARE`): a game of bits takes 3/4, the rest going to the bound pooled over the
most exposed targets (or the declared ones), which is what is ahead where a handful of targets
is exposed among many; a game of pairs pays the factor 2 on eps that the pooled bounds do not,
so it takes 1/2 and the pooled bounds over all targets and over the most exposed share the
rest. Without per-model rates the games take all of it. The larger lower end is the claim. The
posterior's quantiles follow as what the model says. The decision and the measured figures:
``docs/validation/guessing_game.md``, "The claim on a score matrix".
"""

from __future__ import annotations

from bayes_dp.results.claim_counts import model_quantile_words
from bayes_dp.results.claim_parts import replace

#: Where the docs give the decision and the measured figures.
DOCS = 'docs/validation/guessing_game.md, "The claim on a score matrix"'
#: Share of the claim's error that goes to the games' bounds, by design (the rest to the pooled
#: bounds, where the records hold per-model rates), and the pooled candidates that share the rest
#: (``targets`` kinds of :func:`bayes_dp.results.claim_scores._pooled_bound`; None: all of them).
GAME_SHARE = {"bits": 0.75, "pairs": 0.5}
POOLED_KINDS = {"bits": ("selected", "declared"), "pairs": None}


def game_groups(st: dict) -> list[dict]:
    """Return the groups of ``st`` whose source is a guessing game."""
    return [
        g
        for g in st.get("groups", [])
        if isinstance(g, dict)
        and isinstance(g.get("source"), dict)
        and g["source"].get("kind") == "guessing_game"
    ]


def _pooled_groups(games: list[dict]) -> tuple[list[dict], list[int]]:
    """Pseudo score groups holding the games' per-model rates, and those the pooled bound reads."""
    from bayes_dp.results.claim_scores import POOLED_MIN_MODELS

    pseudo = [
        {
            "name": g.get("name", "?"),
            "dependence": {"pooled_rates": g["source"].get("pooled_rates")},
        }
        for g in games
    ]
    which = [
        i
        for i, g in enumerate(pseudo)
        if (r := g["dependence"]["pooled_rates"])
        and "n_test" in r
        and len(r.get("fpr", ())) >= POOLED_MIN_MODELS
    ]
    return pseudo, which


def game_bound(st: dict, prob: float) -> dict | None:
    """Return the frequentist lower bound of eps of a posterior's guessing games.

    Parameters
    ----------
    st : dict
        A posterior's settings (``post.settings``): ``delta`` and the games' ``source`` records.
    prob : float
        Confidence of the bound, in (0.5, 1).

    Returns
    -------
    dict or None
        ``lower`` (the claim's lower end: the larger of the parts), ``game`` (the game part
        that is largest: ``group``, ``design``, ``c``, ``m``, ``k``, ``v``, ``k_choice``
        ("grid" or "predicted"), ``n_grid``, ``level``, ``eps``), ``pooled`` (the pooled part,
        :func:`bayes_dp.results.claim_scores._pooled_bound`, or None), ``game_share``,
        ``n_games`` and ``confidence``. None without a game or a recorded delta.

    Examples
    --------
    >>> src = {"kind": "guessing_game", "design": "bits", "c": 1, "m": 1000,
    ...        "k_grid": [100, 1000], "v_grid": [95, 700], "k_predicted": 100, "v": 95,
    ...        "pooled_rates": None}
    >>> b = game_bound({"delta": 0.0, "groups": [{"name": "g", "source": src}]}, 0.95)
    >>> b["game"]["k"], b["game"]["v"], b["pooled"] is None, round(b["lower"], 2)
    (100, 95, True, 2.06)
    """
    from bayes_dp.core.one_run_bound import guessing_game_bounds
    from bayes_dp.results.claim_scores import _pooled_bound

    delta = st.get("delta")
    games = game_groups(st)
    if delta is None or not games:
        return None
    pseudo, which = _pooled_groups(games)
    design = "pairs" if any(g["source"].get("design") == "pairs" for g in games) else "bits"
    kinds = POOLED_KINDS[design]
    if kinds is not None and not any(
        (pseudo[i]["dependence"]["pooled_rates"].get("targets") in kinds)
        or pseudo[i]["dependence"]["pooled_rates"].get("selected")
        for i in which
    ):
        kinds = None  # no rates over the most exposed targets (too few targets): all of them
    share = GAME_SHARE[design] if which else 1.0
    # each game gets an equal part of the games' share (Bonferroni over the games)
    conf = 1.0 - (1.0 - prob) * share / len(games)
    best = None
    for g in games:
        src = g["source"]
        pairs = src.get("design") == "pairs"
        b = guessing_game_bounds(
            int(src["m"]),
            src["k_grid"],
            src["v_grid"],
            int(src["k_predicted"]),
            int(src["v"]),
            float(delta),
            conf,
            pairs=pairs,
        )
        part = b["combined"]["eps"]
        cand = {
            "eps": float(part["eps"]),
            "group": g.get("name", "?"),
            "design": src.get("design"),
            "c": int(src.get("c", 2 if pairs else 1)),
            "m": int(src["m"]),
            "k": int(part["eps_k"]),
            "v": int(part["eps_v"]),
            "k_choice": part["choice"],
            "n_grid": len(src["k_grid"]),
            "level": float(part["level"]),
            "candidates": len(src.get("candidates", ())),
            "declared": bool(src.get("declared", False)),
        }
        if best is None or cand["eps"] > best["eps"]:
            best = cand
    pooled = (
        _pooled_bound(pseudo, which, float(delta), prob, share=1.0 - share, kinds=kinds)
        if which
        else None
    )
    lower = max(best["eps"], pooled["eps"] if pooled else 0.0)
    return {
        "lower": lower,
        "game": best,
        "pooled": pooled,
        "game_share": share,
        "n_games": len(games),
        "confidence": prob,
    }


def _game_what(gb: dict) -> str:
    """Say which game bound ``gb["game"]`` is and what sets it."""
    g = gb["game"]
    coins = (
        f"{g['m']} matched IN-OUT pairs of test models, which of the two trained on the target "
        "a fair coin, each (2 eps, 2 delta)-DP: the bound on 2 eps, halved"
        if g["design"] == "pairs"
        else f"{g['m']} membership bits of the test models, each an independent fair coin"
    )
    chosen = (
        "at the k predicted from the reference half alone"
        if g["k_choice"] == "predicted"
        else f"the best of a grid of {g['n_grid']} values of k fixed in advance (Bonferroni)"
    )
    which = (
        f"{g['candidates']} declared canaries"
        if g["declared"]
        else f"the {g['candidates']} targets most exposed on the reference half"
    )
    return (
        f"the guessing game on the score matrix of group {g['group']!r} (Steinke, Nasr and "
        f"Jagielski's one-run bound: every guess uses the models' outputs and only the "
        f"reference half's memberships; {coins}; candidates {which}; {g['v']} of {g['k']} "
        f"guesses right, {chosen}, at level {g['level']:.3g})"
    )


def _pooled_what(pb: dict) -> str:
    from bayes_dp.results.claim_scores import DOCS_POOLED, _pooled_which

    return (
        f"the error rates pooled over the {pb['n_targets']} targets{_pooled_which(pb)} with "
        f"the {pb['n_models']} test models as the units (a test fitted on the "
        f"{pb['n_reference']} reference models; a finite-sample betting test at level "
        f"{pb['error']:.3g}, if a target's decision does not follow which other targets its "
        f"model trained on; {DOCS_POOLED})"
    )


def game_words(
    st: dict,
    prob: float,
    lower: float,
    words: list[tuple[str, str]],
    at: str,
    strength: str,
    upper: float | None = None,
    source: str | None = None,
) -> tuple[float, list[tuple[str, str]], dict]:
    """Rewrite the claim of a posterior on guessing games (identity without a game).

    ``words`` are the named parts (:mod:`bayes_dp.results.claim_parts`)
    :func:`bayes_dp.audit_claim` wrote for the posterior's own interval and ``lower`` its
    (1 - ``prob``) quantile. Returns the claim's lower end (the frequentist bound of
    :func:`game_bound`, whatever the posterior says), the parts (the bound first, then what the
    model says) and the extra fields of :class:`~bayes_dp.AuditClaim` (``posterior_lower``,
    ``frequentist_lower``, ``frequentist``, ``set_by``, and ``upper_source`` ``"model"`` where
    the model's upper end is not the prior's: an audit shows how large eps is at least, never
    at most).
    """
    gb = game_bound(st, prob)
    if gb is None:
        return lower, words, {}
    f = gb["lower"]
    pb = gb["pooled"]
    game_what = _game_what(gb)
    if pb is not None and pb["eps"] > gb["game"]["eps"]:
        what = f"{_pooled_what(pb)}; beside it, {game_what} is {gb['game']['eps']:.3g}"
    else:
        what = game_what
        if pb is not None:
            what += f"; beside it, {_pooled_what(pb)} is {pb['eps']:.3g}"
    others = [g.get("name", "?") for g in st.get("groups", []) if g not in game_groups(st)]
    if others:
        what += f"; the other groups ({', '.join(repr(o) for o in others)}) are not in it"
    first = (
        f"With {100 * prob:g}% confidence, eps >= {f:.3g}{at}, whatever the attack strength: "
        f"{what}."
    )
    model = (
        f"{model_quantile_words(prob, lower, at, strength)}: the posterior of the game's right "
        f"guesses at the predicted k, their accuracy between the attack strength's and the "
        f"best an eps-DP mechanism allows ({DOCS})."
    )
    extra = {
        "posterior_lower": lower,
        "frequentist_lower": f,
        "frequentist": gb,
        "set_by": f"whatever the attack strength, set by {_game_short(gb)}",
    }
    rest = list(words[1:])
    if source != "prior" and upper is not None:
        rest = replace(
            rest,
            "upper end",
            f"The upper end, the model's {100 * prob:g}% quantile of eps, {upper:.3g}, is the "
            "model's, not a finding: an audit shows how large eps is at least, never at most; "
            "cite the lower bound.",
        )
        extra["upper_source"] = "model"
    return f, [("bound", first), ("model", model), *rest], extra


def _game_short(gb: dict) -> str:
    """Say in a few words which part sets the game's bound ``gb`` (:func:`game_bound`)."""
    g, pb = gb["game"], gb["pooled"]
    if pb is not None and pb["eps"] > g["eps"]:
        return (
            f"the error rates pooled over {pb['n_targets']} targets of {pb['n_models']} test "
            "models (a betting test)"
        )
    units = "pairs of test models" if g["design"] == "pairs" else "test models' membership bits"
    return (
        f"the guessing game on group {g['group']!r} ({g['v']} of {g['k']} guesses right, "
        f"{g['m']} {units}; a one-run bound)"
    )
