"""MHAAR, the paper's sampler (Metropolis-Hastings with averaged acceptance ratios).

:mod:`~samplers.mhaar.runner` runs chains (``run_mhaar``, ``SamplerConfig``, ``AUX_PROPOSALS``,
re-exported here on first use), :mod:`~samplers.mhaar.chain` is the chain,
:mod:`~samplers.mhaar.moves` the MHAAR move and :mod:`~samplers.mhaar.aux_proposals` its
auxiliary proposals.
"""

__all__ = ["AUX_PROPOSALS", "SamplerConfig", "run_mhaar"]


def __getattr__(name: str):
    if name in __all__:
        from . import runner

        value = getattr(runner, name)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
