"""Input checks shared by the public API: every error names the argument and the value found."""

from __future__ import annotations

import numbers

import numpy as np


def check_int_array(name: str, value, *, min_value: int | None = None) -> np.ndarray:
    """Return ``value`` as a 1-D int64 array, or raise naming ``name``.

    Accepts a scalar, a list or an array of integers (floats that are exact integers are
    accepted, so counts read from a CSV as ``40.0`` work). Booleans, strings, NaN, infinities
    and non-integral floats are refused.
    """
    if isinstance(value, (str, bytes)):
        raise TypeError(f"`{name}` must hold integer counts; found {value!r}")
    arr = np.asarray(value)
    if arr.dtype == bool or arr.dtype.kind in "OUSVMm":
        if arr.dtype.kind == "O":
            try:
                arr = arr.astype(np.float64)
            except (TypeError, ValueError):
                raise TypeError(f"`{name}` must hold integer counts; found {value!r}") from None
        else:
            raise TypeError(
                f"`{name}` must hold integer counts; found dtype {arr.dtype} ({value!r})"
            )
    if arr.ndim > 1:
        raise ValueError(f"`{name}` must be a scalar or 1-D; found shape {arr.shape}")
    arr = np.atleast_1d(arr)
    if arr.dtype.kind == "c":
        raise TypeError(f"`{name}` must hold real integer counts; found {value!r}")
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr)
        if bad.any():
            raise ValueError(
                f"`{name}` must be finite; found {arr[bad][0]!r} at index "
                f"{int(np.flatnonzero(bad)[0])}"
            )
        frac = arr != np.round(arr)
        if frac.any():
            raise ValueError(
                f"`{name}` must hold integers; found {arr[frac][0]!r} at index "
                f"{int(np.flatnonzero(frac)[0])}"
            )
        if np.abs(arr).max(initial=0) > 2**62:
            raise ValueError(f"`{name}` is too large for an integer count; found {arr.max()!r}")
    out = arr.astype(np.int64)
    if min_value is not None:
        low = out < min_value
        if low.any():
            i = int(np.flatnonzero(low)[0])
            raise ValueError(f"`{name}` must be >= {min_value}; found {out[i]} at index {i}")
    return out


def check_real(name: str, value, *, low=None, high=None, low_open=False, high_open=False) -> float:
    """Return ``value`` as a float inside the given interval, or raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number; found {value!r}")
    v = float(value)
    if not np.isfinite(v):
        raise ValueError(f"`{name}` must be finite; found {value!r}")
    if low is not None and (v < low or (low_open and v == low)):
        raise ValueError(f"`{name}` must be {'>' if low_open else '>='} {low}; found {value!r}")
    if high is not None and (v > high or (high_open and v == high)):
        raise ValueError(f"`{name}` must be {'<' if high_open else '<='} {high}; found {value!r}")
    return v


def check_prob(name: str, value) -> float:
    """Check a probability in (0, 1); a percentage such as 90 is refused with a hint (0.9)."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and 1 < value < 100:
        raise ValueError(
            f"`{name}` must be a probability in (0, 1), not a percentage; found {value!r} "
            f"(did you mean {value / 100:g}?)"
        )
    return check_real(name, value, low=0.0, high=1.0, low_open=True, high_open=True)


def check_positive_int(name: str, value, *, minimum: int = 1) -> int:
    """Return ``value`` as an int >= ``minimum``, or raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an integer; found {value!r}")
    if value < minimum:
        raise ValueError(f"`{name}` must be >= {minimum}; found {value!r}")
    return int(value)


def check_scores(name: str, scores, *, min_size: int = 1) -> np.ndarray:
    """Return ``scores`` as a finite 1-D float array, or raise naming ``name``."""
    if isinstance(scores, (str, bytes)):
        raise TypeError(f"`{name}` must be an array of real scores; found {scores!r}")
    arr = np.asarray(scores)
    if arr.dtype.kind not in "iuf" or arr.dtype == bool:
        raise TypeError(f"`{name}` must hold real numbers; found dtype {arr.dtype}")
    arr = np.atleast_1d(arr.astype(np.float64))
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D; found shape {arr.shape}")
    if arr.size < min_size:
        raise ValueError(f"`{name}` needs at least {min_size} score(s); found {arr.size}")
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"`{name}` must be finite; found {float(arr[i])!r} at index {i}")
    return arr


def check_delta(delta, *, positive: bool = False) -> float:
    """Check the DP parameter delta: a finite float in [0, 1), or (0, 1) when ``positive``.

    ``positive`` for the uses whose eps is infinite at delta = 0 (the Gaussian mechanism,
    Gaussian DP, DP-SGD accounting).
    """
    return check_real("delta", delta, low=0.0, high=1.0, low_open=positive, high_open=True)


def as_generator(seed) -> np.random.Generator:
    """Turn ``seed`` (None, int or Generator) into a ``numpy.random.Generator``."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or (isinstance(seed, numbers.Integral) and not isinstance(seed, bool)):
        if seed is not None and seed < 0:
            raise ValueError(f"`seed` must be a non-negative integer; found {seed!r}")
        return np.random.default_rng(seed)
    raise TypeError(f"`seed` must be None, an int or a numpy.random.Generator; found {seed!r}")
