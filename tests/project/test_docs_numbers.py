"""Numbers that README.md and docs/validation/correlated.md state and the code defines: the
samplers'
defaults (bdp.Exact, bdp.MHAAR) and the thresholds that judge a run (bayes_dp.core.thresholds)."""

import re
from pathlib import Path

import pytest

import bayes_dp as bdp

ROOT = Path(__file__).resolve().parents[2]


def _text(name: str) -> str:
    """The document with its whitespace runs (line breaks included) made single spaces.

    ``"guides"`` is the README and every page of docs/tutorials, docs/howto and docs/concepts.
    """
    if name == "guides":
        pages = [ROOT / "README.md"] + sorted(
            p for d in ("tutorials", "howto", "concepts") for p in (ROOT / "docs" / d).glob("*.md")
        )
        return " ".join(re.sub(r"\s+", " ", p.read_text(encoding="utf-8")) for p in pages)
    return re.sub(r"\s+", " ", (ROOT / name).read_text(encoding="utf-8"))


MH = bdp.MHAAR()

README_PHRASES = [
    # the sampler's settings
    f"`tune` (default {bdp.Exact.default_tune:,} for `Exact`, {bdp.MHAAR.default_tune:,} for "
    "`MHAAR`)",
    f'`bdp.MHAAR(aux_proposal="{MH.aux_proposal}", n_aux={MH.n_aux})`, the defaults',
    f"mixed with {100 * MH.aux_uniform_weight:g}% uniform",
    f"Each stored draw is `thin={MH.thin}` iterations",
    f"always for a fixed length, {bdp.MHAAR.default_draws} draws per chain unless `--draws`",
    # (the thresholds that judge a run: tests/project/test_readme_numbers.py)
]


@pytest.mark.parametrize("phrase", README_PHRASES)
def test_the_guides_state_the_codes_numbers(phrase):
    assert phrase in _text("guides"), phrase


def test_the_guides_quote_the_first_run_notice():
    from bayes_dp.inference.first_run import NOTICE

    assert f"`{NOTICE}`" in _text("guides")


def test_correlated_md_states_mhaars_defaults():
    text = _text("docs/validation/correlated.md")
    assert f"lam = `aux_uniform_weight` ({MH.aux_uniform_weight:g})" in text
    assert f'`bdp.MHAAR(aux_proposal="{MH.aux_proposal}")`' in text


def test_model_md_states_mhaars_defaults():
    text = _text("docs/validation/model.md")
    phrase = f'The default is `"{MH.aux_proposal}"` with K = {MH.n_aux} and `thin = {MH.thin}`'
    assert phrase in text
    assert f"the {100 * MH.aux_uniform_weight:g}% uniform part" in text


def test_the_number_check_can_fail():
    """A number the code does not define is not found (the phrases are not vacuous)."""
    wrong = f"Each stored draw is `thin={MH.thin + 1}` iterations"
    assert wrong not in _text("guides")
    assert wrong.replace(str(MH.thin + 1), str(MH.thin)) in README_PHRASES


def test_docs_call_the_default_sampler_by_its_name():
    """No doc calls MHAAR's proposals "the default sampler" (the exact sampler is)."""
    for name in ("guides", "docs/validation/correlated.md", "docs/validation/model.md"):
        text = _text(name)
        assert "inferred inside the MHAAR sampler" not in text, name
        assert "pairs (default)" not in text, name
        assert "the default sampler for these groups" not in text, name
        # the sampler is `sampler=bdp.Exact()` / `bdp.MHAAR()`, never a `method=` keyword
        assert re.search(r'method="(exact|mhaar)"', text) is None, name
