"""A stand-in for first chains that miss the posterior's dominant mode at eps ~ 0.

Whether a run's first chains miss that mode depends on where they start, so a test that needs
the miss (to check what the sampler does after it: ``docs/validation/lira.md``, "A mode the chains
missed") must not rely on a seed that happens to miss. :func:`force_a_miss` wraps the check
``bayes_dp.inference.modes.find_better_mode`` (as the restart's wiring test in
``tests/statistical/test_lira_model.py`` does with a fake): the check of a run's first chains
is made on a stand-in for them, their own draws with eps set to ``minor_eps`` (where chains that
missed sat), so the real check reports the dominant mode whenever the data have one, whatever
the chains did; the chains sampled again from that point are checked as they are. The calls are
recorded (``calls``: whether each was the stand-in's and whether it found a mode). Meant for runs
of fixed length (``draws=``), which check once per run.
"""

from __future__ import annotations

import numpy as np


def force_a_miss(monkeypatch, minor_eps: float) -> list[dict]:
    """Install the stand-in on ``monkeypatch``; return the list the calls are recorded in."""
    from bayes_dp.inference import modes

    real = modes.find_better_mode
    calls: list[dict] = []
    state = {"restart_pending": False}

    def stand_in(kmodel, corr, names, z, delta):
        if state["restart_pending"]:  # the chains started again at the mode found: as they are
            state["restart_pending"] = False
            found = real(kmodel, corr, names, z, delta)
            calls.append({"stand_in": False, "found": found is not None})
            return found
        z_minor = np.array(z, dtype=np.float64, copy=True)
        z_minor[..., 0] = np.log(minor_eps)  # z[..., 0] is log eps in the sampler's coordinates
        found = real(kmodel, corr, names, z_minor, delta)
        calls.append({"stand_in": True, "found": found is not None})
        state["restart_pending"] = found is not None
        return found

    monkeypatch.setattr(modes, "find_better_mode", stand_in)
    return calls
