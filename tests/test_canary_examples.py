"""The canary examples run end to end (as subprocesses) and write their figures."""


def test_canary_combined_writes_figure(run_script, tmp_path):
    out = tmp_path / "combined.png"
    # 1000 draws per chain are a short run: a ConvergenceWarning on stderr is not a failure here
    text = run_script("examples/canary_combined.py", "--png", str(out), "--draws", "1000").stdout
    assert "posterior 90% interval for epsilon" in text
    assert "from the canary group alone" in text and "from the lira group alone" in text
    assert 10_000 < out.stat().st_size < 400_000
