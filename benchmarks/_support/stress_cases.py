"""Named stress cases for the sampler, with quadrature references (``tests/reference/``).

Shared by ``benchmarks/stress_grid.py`` and ``tests/statistical/test_stress_grid.py``.  Each
case gives the arguments of ``bayes_dp.estimate_epsilon`` (``estimate_args``) and the reference
marginal CDFs of eps and of every strength variable (``reference_cdfs``).  The references
use ``tests/reference/`` only (numpy/scipy), never the sampler's code.

Counts that are not quoted from the paper or written out below are drawn from the model itself,
deterministically: (alpha, beta) uniform on R_s(eps, delta) by rejection from
``Generator.random`` and the counts by the binomial inverse CDF of further uniforms
(``scipy.stats.binom.ppf``), so they depend on neither numpy's binomial sampler nor
``bayes_dp.core.simulate``.

Criteria (every case): max r_hat <= 1.01, ESS_bulk >= 400 for every variable, and the worst
quantile error <= 1.5 probability points, where the error of the sampler's q-quantile
(q = 5, 50, 95%) is |F_ref(quantile) - q|, worst over eps and every s.
"""

from __future__ import annotations

import functools
import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy import stats

from tests.reference import GroupsPosterior, in_region, posterior_grid_groups

QS = np.array([0.05, 0.5, 0.95])
RHAT_MAX = 1.01
ESS_MIN = 400.0
QERR_MAX = 1.5  # probability points

# Yildirim et al., Sec. 4.1 ("relatively accurate attacks"), as in examples/quickstart.py
STRONG_FP = [40, 50, 60, 100, 100, 110, 120, 200, 200, 200]
STRONG_FN = [250, 200, 150, 100, 120, 100, 100, 80, 70, 60]


@dataclass(frozen=True)
class Group:
    """One evidence group: counts (fp, n_neg, fn, n_pos) as tuples of ints."""

    counts: tuple
    name: str = "g"
    own: bool = False  # its own strength variable s_<name> (else the shared s)
    likelihood: str = "binomial"
    tau: float = 0.0
    rho: float = 0.0


@dataclass(frozen=True)
class Case:
    name: str
    groups: tuple
    delta: float
    s_prior: tuple  # ("beta", a, b) or ("fixed", s0), for every strength variable
    eps_prior: tuple = ("halfnormal", 10.0)
    quick: bool = False  # in the quick benchmark and the default (fast) test run
    note: str = ""
    expected: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def n_bases(self):
        return sum(len(g.counts[0]) for g in self.groups)


def simulate(eps, s, delta, n0, n1, seed):
    """Counts of len(n0) bases from the model (see the module docstring)."""
    n0 = np.atleast_1d(np.asarray(n0, dtype=int))
    n1 = np.broadcast_to(np.asarray(n1, dtype=int), n0.shape)
    rng = np.random.default_rng(seed)
    n = n0.size
    a_acc, b_acc = np.empty(0), np.empty(0)
    while a_acc.size < n:
        a, b = rng.random((2, 4096))
        keep = in_region(a, b, eps, delta) & ~in_region(a, b, s * eps, s * delta)
        a_acc, b_acc = np.concatenate([a_acc, a[keep]]), np.concatenate([b_acc, b[keep]])
    a_acc, b_acc = a_acc[:n], b_acc[:n]
    u = rng.random((2, n))
    x = stats.binom.ppf(u[0], n0, a_acc).astype(int)
    y = stats.binom.ppf(u[1], n1, b_acc).astype(int)
    return (
        tuple(int(v) for v in x),
        tuple(int(v) for v in n0),
        tuple(int(v) for v in y),
        tuple(int(v) for v in n1),
    )


def _c(fp, n0, fn, n1):
    k = len(fp)
    n0 = (n0,) * k if np.isscalar(n0) else tuple(n0)
    n1 = (n1,) * k if np.isscalar(n1) else tuple(n1)
    return (tuple(fp), n0, tuple(fn), n1)


def _g(counts, **kw):
    return (Group(counts, **kw),)


BETA11 = ("beta", 1.0, 1.0)


def _cases():
    strong = _c(STRONG_FP, 1000, STRONG_FN, 1000)
    one = _c([200], 1000, [200], 1000)
    out = [
        # -- four first cases: strong, one base at 20% errors, perfect and weak attacks
        Case(
            "paper-strong-s0.95",
            _g(strong),
            0.0,
            ("fixed", 0.95),
            quick=True,
            note="paper's strong attack, 10 bases N = 1000",
            expected={"eps": (2.40, 2.46, 2.52)},
        ),
        Case(
            "one-base-s0.999",
            _g(one),
            1e-5,
            ("fixed", 0.999),
            quick=True,
            note="fp = fn = 200 of 1000",
            expected={"eps": (1.32, 1.41, 1.52)},
        ),
        Case(
            "perfect-5x50-sfree",
            _g(_c([0] * 5, 50, [0] * 5, 50)),
            1e-5,
            BETA11,
            quick=True,
            note="perfect attack",
            expected={"eps": (7.5, 13.5, 24.6)},
        ),
        Case(
            "weak-3x20-sfree",
            _g(_c([10, 10, 10], 20, [9, 9, 9], 20)),
            1e-5,
            BETA11,
            quick=True,
            note="weak attack, fpr + fnr = 0.95",
            expected={"eps": (0.019, 0.21, 0.76)},
        ),
        # -- fixed strengths
        Case(
            "model-20x100-s0.5",
            _g(simulate(1.5, 0.5, 1e-5, [100] * 20, 100, seed=1)),
            1e-5,
            ("fixed", 0.5),
        ),
        Case(
            "model-10x1000-s0.9",
            _g(simulate(2.0, 0.9, 1e-5, [1000] * 10, 1000, seed=2)),
            1e-5,
            ("fixed", 0.9),
            quick=True,
        ),
        Case(
            "model-10x1000-s0.99",
            _g(simulate(1.5, 0.99, 1e-5, [1000] * 10, 1000, seed=3)),
            1e-5,
            ("fixed", 0.99),
        ),
        Case(
            "one-base-s1",
            _g(one),
            1e-5,
            ("fixed", 1.0),
            quick=True,
            note="s = 1: the boundary limit (privacy-estimates' joint-beta 90%: 1.295-1.533)",
        ),
        # -- free strength, from 1 to 1000 bases
        Case("paper-strong-sfree", _g(strong), 1e-5, BETA11, note="quickstart"),
        Case(
            "n1e6-1-base-sfree",
            _g(simulate(1.5, 0.8, 1e-5, [10**6], 10**6, seed=4)),
            1e-5,
            BETA11,
        ),
        Case(
            "n1e6-3x-s0.9",
            _g(simulate(1.0, 0.9, 0.0, [10**6] * 3, 10**6, seed=5)),
            0.0,
            ("fixed", 0.9),
        ),
        Case(
            "model-100x100-sfree",
            _g(simulate(1.0, 0.5, 1e-5, [100] * 100, 100, seed=6)),
            1e-5,
            BETA11,
            quick=True,  # the shared block quadrature of samplers.model.binomial_block, end to end
        ),
        Case(
            "model-1000x100-sfree",
            _g(simulate(1.0, 0.5, 0.0, [100] * 1000, 100, seed=7)),
            0.0,
            BETA11,
        ),
        # -- perfect, near-perfect and weak attacks
        Case(
            "near-perfect-10x1000",
            _g(_c([0, 1, 0, 2, 0, 1, 3, 0, 0, 1], 1000, [1, 0, 0, 0, 2, 1, 0, 4, 1, 0], 1000)),
            1e-5,
            BETA11,
        ),
        Case(
            "perfect-1x1000-s0.99",
            _g(_c([0], 1000, [0], 1000)),
            0.0,
            ("fixed", 0.99),
        ),
        Case(
            "weak-diagonal-10x1000",
            _g(simulate(0.08, 0.5, 1e-5, [1000] * 10, 1000, seed=8)),
            1e-5,
            BETA11,
        ),
        # -- large delta, small N, mixed N
        Case(
            "delta0.1-10x20-sfree",
            _g(simulate(1.0, 0.3, 0.1, [20] * 10, 20, seed=9)),
            0.1,
            BETA11,
        ),
        Case(
            "delta0.1-5x1000-s0.9",
            _g(simulate(2.0, 0.9, 0.1, [1000] * 5, 1000, seed=10)),
            0.1,
            ("fixed", 0.9),
        ),
        Case(
            "mixed-n-sfree",
            _g(
                simulate(
                    2.0,
                    0.6,
                    1e-5,
                    [20, 100, 1000, 10**4, 300, 5000],
                    [50, 100, 200, 10**4, 3000, 60],
                    seed=11,
                )
            ),
            1e-5,
            BETA11,
        ),
        # -- two groups, each with its own strength
        Case(
            "two-groups-own-s",
            (
                Group(_c(STRONG_FP[:3], 1000, STRONG_FN[:3], 1000), name="canary", own=True),
                Group(simulate(2.0, 0.2, 1e-5, [100] * 5, 100, seed=12), name="lira", own=True),
            ),
            1e-5,
            BETA11,
        ),
        # -- three groups with their own strengths, sizes from 100 to 1,000 (took 403 s,
        #    loaded, before the tables bounded their far tails)
        Case(
            "three-groups-own-s",
            (
                Group(_c(STRONG_FP[:3], 1000, STRONG_FN[:3], 1000), name="canary", own=True),
                Group(simulate(2.0, 0.2, 1e-5, [100] * 4, 100, seed=13), name="lira", own=True),
                Group(simulate(1.0, 0.6, 1e-5, [300] * 2, 300, seed=14), name="user", own=True),
            ),
            1e-5,
            BETA11,
        ),
        # -- eq. 7 at fixed (tau, rho)
        Case(
            "bvn-3x100-tau0.03",
            (
                Group(
                    _c([8, 22, 11], 100, [56, 31, 40], 100),
                    name="x",
                    likelihood="bivariate_normal",
                    tau=0.03,
                    rho=0.0,
                ),
            ),
            0.0,
            BETA11,
        ),
    ]
    return {c.name: c for c in out}


CASES = _cases()


def quick_cases():
    return [c for c in CASES.values() if c.quick]


def _eps_prior(spec):
    import bayes_dp as bdp

    if spec[0] == "halfnormal":
        return bdp.HalfNormal(spec[1])
    return bdp.LogNormal(*spec[1:])


def estimate_args(case):
    """Keyword arguments of ``bayes_dp.estimate_epsilon`` for the case (no sampler settings)."""
    import bayes_dp as bdp

    s = bdp.Beta(*case.s_prior[1:]) if case.s_prior[0] == "beta" else float(case.s_prior[1])
    prior = bdp.Prior(eps=_eps_prior(case.eps_prior), s=s)
    evs = []
    for g in case.groups:
        ac = bdp.AttackCounts(*(np.asarray(v) for v in g.counts))
        fix = {"tau": g.tau, "rho": g.rho} if g.likelihood == "bivariate_normal" else None
        evs.append(
            bdp.Evidence(
                ac,
                likelihood=g.likelihood,
                name=g.name,
                strength="own" if g.own else "shared",
                fix=fix,
            )
        )
    if len(evs) == 1 and case.groups[0].likelihood == "binomial" and not case.groups[0].own:
        counts = evs[0].counts
    else:
        counts = evs if len(evs) > 1 else evs[0]
    return {"counts": counts, "delta": case.delta, "prior": prior}


def _reference_groups(case):
    """The groups of ``posterior_grid_groups`` and the strength variable of each."""
    shared = [g for g in case.groups if not g.own]
    specs, names = [], []
    if shared:
        kinds = {(g.likelihood, g.tau, g.rho) for g in shared}
        if len(kinds) > 1:
            raise ValueError("shared groups of different likelihoods are not supported")
        counts = tuple(tuple(v for g in shared for v in g.counts[i]) for i in range(4))
        specs.append((counts, case.s_prior, _lik(shared[0])))
        names.append("s")
    for g in case.groups:
        if g.own:
            specs.append((g.counts, case.s_prior, _lik(g)))
            names.append(f"s_{g.name}")
    return specs, names


def _lik(g):
    if g.likelihood == "binomial":
        return None
    return {"likelihood": g.likelihood, "tau": g.tau, "rho": g.rho}


#: the tests folder: the cache belongs to the reference (``tests/reference/``), which lives there
_TESTS = Path(__file__).resolve().parents[2] / "tests"
_CACHE_DIR = _TESTS / ".stress_cache"


def _cache_key(case, refine):
    h = hashlib.sha1()
    for module in sorted((_TESTS / "reference").glob("*.py")):
        if not module.name.startswith("test_"):
            h.update(module.read_bytes())
    h.update(repr((case.groups, case.delta, case.s_prior, case.eps_prior, refine)).encode())
    return h.hexdigest()[:16]


def _save(path, gp, names, seconds):
    arrs = {"eps_grid": gp.eps_grid, "eps_pdf": gp.eps_pdf, "eps_cdf": gp.eps_cdf_values}
    for j, sg in enumerate(gp.s):
        if "s_fixed" in sg:
            arrs[f"s{j}_fixed"] = np.array(sg["s_fixed"])
        else:
            arrs[f"s{j}_grid"] = sg["s_grid"]
            arrs[f"s{j}_pdf"] = sg["s_pdf"]
            arrs[f"s{j}_cdf"] = sg["s_cdf_values"]
    arrs["names"] = np.array(names)
    arrs["seconds"] = np.array(seconds)
    path.parent.mkdir(exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, **arrs)
    tmp.replace(path)


def _load(path):
    z = np.load(path)
    names = [str(v) for v in z["names"]]
    s = []
    for j in range(len(names)):
        if f"s{j}_fixed" in z:
            s.append({"s_fixed": float(z[f"s{j}_fixed"])})
        else:
            s.append(
                {
                    "s_grid": z[f"s{j}_grid"],
                    "s_pdf": z[f"s{j}_pdf"],
                    "s_cdf_values": z[f"s{j}_cdf"],
                }
            )
    info = {"seconds": float(z["seconds"]), "cached": True}
    gp = GroupsPosterior(z["eps_grid"], z["eps_pdf"], z["eps_cdf"], s, info=info)
    return gp, names


@functools.cache
def reference(name, refine=1.0, use_cache=True):
    """(GroupsPosterior, strength variable names) of the named case.

    Cached in memory and on disk (``tests/.stress_cache``, keyed by the case and the source of
    the reference's modules, ``tests/reference/*.py``); ``info["seconds"]`` is the time of the
    computation.
    """
    case = CASES[name]
    path = _CACHE_DIR / f"{name}-{_cache_key(case, refine)}.npz"
    if use_cache and path.exists():
        return _load(path)
    specs, names = _reference_groups(case)
    t0 = time.perf_counter()
    gp = posterior_grid_groups(specs, case.delta, case.eps_prior, refine=refine)
    seconds = time.perf_counter() - t0
    gp.info["seconds"] = seconds
    if use_cache:
        _save(path, gp, names, seconds)
    return gp, names


def reference_cdfs(name, refine=1.0):
    """{variable: reference CDF} for eps and every free strength variable."""
    gp, names = reference(name, refine)
    case = CASES[name]
    out = {"eps": gp.eps_cdf}
    if case.s_prior[0] == "beta":
        for j, v in enumerate(names):
            out[v] = functools.partial(gp.s_cdf, j)
    return out


def reference_quantiles(name, q=QS, refine=1.0):
    gp, names = reference(name, refine)
    out = {"eps": gp.eps_quantile(q)}
    if CASES[name].s_prior[0] == "beta":
        for j, v in enumerate(names):
            out[v] = gp.s_quantile(j, q)
    return out


def diagnostics(post):
    """{variable: (r_hat, ess_bulk)} of a bayes_dp.Posterior."""
    import arviz as az

    out = {}
    for v in post.var_names:
        x = np.asarray(post.draws(v), dtype=float)
        out[v] = (float(az.rhat(x)), float(az.ess(x, method="bulk")))
    return out


def quantile_errors(post, name):
    """{variable: max over q of |F_ref(sampler's q-quantile) - q| in probability points}."""
    cdfs = reference_cdfs(name)
    out = {}
    for v, cdf in cdfs.items():
        x = np.asarray(post.draws(v), dtype=float).ravel()
        out[v] = float(np.max(np.abs(cdf(np.quantile(x, QS)) - QS)) * 100.0)
    return out


def evaluate(post, name):
    """Summary row: max r_hat, min ESS_bulk, worst quantile error (pp), pass/fail."""
    diag = diagnostics(post)
    qerr = quantile_errors(post, name)
    rhat = max(r for r, _ in diag.values())
    ess = min(e for _, e in diag.values())
    err = max(qerr.values())
    ok = bool(rhat <= RHAT_MAX and ess >= ESS_MIN and err <= QERR_MAX)
    return {"r_hat": rhat, "ess_bulk": ess, "q_err": err, "q_err_by_var": qerr, "pass": ok}
