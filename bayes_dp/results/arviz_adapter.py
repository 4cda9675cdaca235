"""The one place that knows which ArviZ is installed.

Python 3.11 resolves ``arviz`` to the 0.x line (``InferenceData``); Python >= 3.12 gets 1.x
(``xarray.DataTree``, built from arviz-base / arviz-stats). Everything ArviZ-specific goes
through these functions so the rest of the package works with both.
"""

from __future__ import annotations

import warnings

import numpy as np

with warnings.catch_warnings():
    # arviz 0.x announces its 1.0 refactor with a FutureWarning at import time
    warnings.simplefilter("ignore", FutureWarning)
    import arviz as az

ARVIZ_VERSION = az.__version__
ARVIZ_1 = int(ARVIZ_VERSION.split(".")[0]) >= 1

__all__ = [
    "ARVIZ_VERSION",
    "ARVIZ_1",
    "from_dict",
    "has_group",
    "attrs",
    "group",
    "to_netcdf",
    "from_netcdf",
    "ess",
    "rhat",
    "mcse",
    "hdi",
    "summary",
    "autocorr",
    "az",
]


def from_dict(posterior: dict, sample_stats: dict, attrs: dict, log_likelihood=None):
    """Build the ArviZ data object.

    Groups ``posterior`` and ``sample_stats``, dims chain/draw; ``log_likelihood`` with a
    third dim ``base`` when given.
    """
    dims = None
    if log_likelihood:
        dims = {k: ["base"] for k in log_likelihood}
    if ARVIZ_1:
        groups = {"posterior": posterior, "sample_stats": sample_stats}
        if log_likelihood:
            groups["log_likelihood"] = log_likelihood
        data = az.from_dict(groups, dims=dims)
        data.attrs.update(attrs)
        return data
    data = az.from_dict(
        posterior=posterior,
        sample_stats=sample_stats,
        log_likelihood=log_likelihood or None,
        dims=dims,
    )
    data.posterior.attrs.update(attrs)
    return data


def has_group(data, name: str) -> bool:
    """Whether the data object has the group ``name``."""
    if ARVIZ_1:
        return name in data.children
    return name in data.groups()


def group(data, name: str):
    """Return one group (``"posterior"`` or ``"sample_stats"``) as an ``xarray.Dataset``."""
    if ARVIZ_1:
        return data[name].to_dataset()
    return getattr(data, name)


def attrs(data) -> dict:
    """Return the attributes written by :func:`from_dict`.

    They sit at the root of the DataTree, or in the posterior group of the InferenceData.
    """
    if ARVIZ_1:
        return dict(data.attrs)
    return dict(data.posterior.attrs)


def to_netcdf(data, path) -> None:
    """Write the data object to a netCDF file."""
    data.to_netcdf(str(path))


def from_netcdf(path):
    """Read a data object written by :func:`to_netcdf`."""
    return az.from_netcdf(str(path))


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kwargs)


def ess(x: np.ndarray, method: str = "bulk") -> float:
    """Effective sample size of a (chain, draw) array (``method``: "bulk" or "tail")."""
    x = np.asarray(x, dtype=np.float64)
    if ARVIZ_1 and method == "tail":
        return float(_quiet(az.ess, x, method="tail", prob=0.1))
    return float(_quiet(az.ess, x, method=method))


def rhat(x: np.ndarray) -> float:
    """Rank-normalised split r_hat of a (chain, draw) array."""
    return float(_quiet(az.rhat, np.asarray(x, dtype=np.float64)))


def mcse(x: np.ndarray, method: str = "mean") -> float:
    """Monte Carlo standard error of the mean ("mean") or of the sd ("sd")."""
    return float(np.ravel(_quiet(az.mcse, np.asarray(x, dtype=np.float64), method=method))[0])


def hdi(x: np.ndarray, prob: float) -> tuple[float, float]:
    """Highest-density interval of the pooled draws."""
    flat = np.ravel(np.asarray(x, dtype=np.float64))
    if ARVIZ_1:
        out = az.hdi(flat, prob=prob)
    else:
        out = az.hdi(flat, hdi_prob=prob)
    out = np.ravel(out)
    return float(out[0]), float(out[1])


def summary(data, var_names: list[str]):
    """ArviZ's summary table (mean, sd, interval, ESS, r_hat, mcse) as a DataFrame."""
    return az.summary(data, var_names=var_names, round_to="none")


def autocorr(x: np.ndarray) -> np.ndarray:
    """Sample autocorrelation of each chain of a (chain, draw) array, lags 0..draws-1.

    Uses ``arviz.autocorr`` where the installed ArviZ has it (0.x); ArviZ 1.x keeps it out of
    its top-level namespace, so there the same FFT estimate (biased, normalised to 1 at lag 0)
    is computed with numpy.
    """
    x = np.atleast_2d(np.asarray(x, dtype=np.float64))
    if hasattr(az, "autocorr"):
        return np.asarray(_quiet(az.autocorr, x, axis=-1))
    n = x.shape[-1]
    y = x - x.mean(axis=-1, keepdims=True)
    size = 1 << int(np.ceil(np.log2(2 * n)))
    f = np.fft.rfft(y, n=size, axis=-1)
    acov = np.fft.irfft(f * np.conjugate(f), n=size, axis=-1)[..., :n] / n
    with np.errstate(invalid="ignore", divide="ignore"):
        out = acov / acov[..., :1]
    return np.where(np.isfinite(out), out, 0.0)
