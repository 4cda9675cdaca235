"""Smoke and content tests of bayes_dp.plots (labels, titles, legends, returned Axes)."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

import bayes_dp as bdp
from bayes_dp import plots

STRONG = bdp.AttackCounts(
    fp=[40, 50, 60, 100, 100, 110, 120, 200, 200, 200],
    n_neg=1000,
    fn=[250, 200, 150, 100, 120, 100, 100, 80, 70, 60],
    n_pos=1000,
)


@pytest.fixture(scope="module")
def post():
    return bdp.estimate_epsilon(
        STRONG, delta=1e-5, chains=2, draws=300, tune=200, seed=3, check=False
    )


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _labelled(ax):
    assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()


@pytest.mark.parametrize(
    "fn",
    [
        lambda p, ax: plots.plot_eps_posterior(p, ax=ax),
        lambda p, ax: plots.plot_marginal(p, "s", ax=ax),
        lambda p, ax: plots.plot_joint(p, ax=ax),
        lambda p, ax: plots.plot_region(p, ax=ax),
        lambda p, ax: plots.plot_trace(p, "eps", ax=ax),
        lambda p, ax: plots.plot_rank(p, "s", ax=ax),
        lambda p, ax: plots.plot_autocorr(p, "eps", ax=ax),
    ],
)
def test_each_plot_draws_on_given_axes(post, fn):
    fig, ax = plt.subplots()
    out = fn(post, ax)
    assert out is ax
    _labelled(ax)


def test_new_axes_when_none(post):
    ax = plots.plot_eps_posterior(post)
    assert ax.figure is not None
    _labelled(ax)


def test_eps_posterior_legend_names_interval_and_classical(post):
    ax = plots.plot_eps_posterior(post, prob=0.9, confidence=0.95)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    lo, hi = post.interval(0.9)
    assert any(f"[{lo:.3g}, {hi:.3g}]" in t for t in texts)
    point = float(np.max(bdp.classical_epsilon(STRONG.fpr, STRONG.fnr, 1e-5)))
    assert any(f"{point:.3g}" in t and "classical point" in t for t in texts)
    assert any("Clopper-Pearson" in t for t in texts)


def test_region_points_are_the_observed_rates(post):
    ax = plots.plot_region(post, confidence=None)
    pts = np.vstack([ln.get_xydata() for ln in ax.lines if ln.get_marker() == "o"])
    np.testing.assert_allclose(np.sort(pts[:, 0]), np.sort(STRONG.fpr))
    np.testing.assert_allclose(np.sort(pts[:, 1]), np.sort(STRONG.fnr))


def test_region_without_posterior():
    ax = plots.plot_region(counts=STRONG, delta=1e-5, eps=[1.0, 3.0], zoom=False)
    _labelled(ax)
    assert ax.get_xlim() == (0.0, 1.0)
    with pytest.raises(ValueError, match="delta"):
        plots.plot_region(counts=STRONG)


def test_region_error_bars_are_clopper_pearson_intervals():
    from scipy import stats

    c = bdp.AttackCounts(fp=[0, 40, 1000], n_neg=1000, fn=[250, 0, 3], n_pos=1000)
    ax = plots.plot_region(counts=c, delta=1e-5, confidence=0.9, zoom=False)
    (bars,) = ax.containers
    xseg = np.array([s[:, 0] for s in bars.lines[2][0].get_segments()])  # (lo, hi) per point
    yseg = np.array([s[:, 1] for s in bars.lines[2][1].get_segments()])
    for i in range(len(c)):
        for seg, k in ((xseg[i], c.fp[i]), (yseg[i], c.fn[i])):
            ref = stats.binomtest(int(k), 1000).proportion_ci(0.9, method="exact")
            np.testing.assert_allclose(seg, [ref.low, ref.high], rtol=1e-8, atol=1e-14)


def test_error_curves_shapes_and_errors():
    alphas = np.linspace(0.01, 0.99, 9)
    fp = np.round(alphas * 100)[None, :].repeat(3, 0)
    fn = np.round(100 * (1 - alphas) ** np.array([[1.5], [2.0], [3.0]]))
    ax = plots.plot_error_curves(alphas, fp, fn, 100, highlight=0.1)
    _labelled(ax)
    with pytest.raises(ValueError, match="`fp` must have shape"):
        plots.plot_error_curves(alphas, fp[:, :3], fn, 100)
    with pytest.raises(ValueError, match="`n`"):
        plots.plot_error_curves(alphas, fp, fn, 0)


def test_diagnostics_figure(post):
    fig = plots.plot_diagnostics(post)
    assert len(fig.axes) == 3 * len(post.var_names)


def test_type_errors():
    with pytest.raises(TypeError, match="`posterior` must be a bayes_dp.Posterior"):
        plots.plot_trace("not a posterior")


def test_clopper_pearson_epsilon_brackets_point_and_shrinks_with_n():
    lo, hi = bdp.clopper_pearson_epsilon(40, 1000, 250, 1000, delta=1e-5)
    point = bdp.classical_epsilon(0.04, 0.25, 1e-5)
    assert lo < point < hi
    lo2, hi2 = bdp.clopper_pearson_epsilon(4000, 100_000, 25_000, 100_000, delta=1e-5)
    assert lo < lo2 < point < hi2 < hi
    with pytest.raises(ValueError, match="`confidence`"):
        bdp.clopper_pearson_epsilon(40, 1000, 250, 1000, delta=1e-5, confidence=1.0)


def test_clopper_pearson_coverage():
    # the lower bound must lie below the true classical eps in >= 95% of simulated audits
    rng = np.random.default_rng(0)
    a, b, n = 0.05, 0.2, 500
    truth = bdp.classical_epsilon(a, b, 0.0)
    hits = [
        bdp.clopper_pearson_epsilon(rng.binomial(n, a), n, rng.binomial(n, b), n, 0.0)[0] <= truth
        for _ in range(300)
    ]
    assert np.mean(hits) >= 0.95


def test_autocorr_matches_between_adapter_and_numpy():
    from bayes_dp.results import arviz_adapter

    x = np.random.default_rng(1).normal(size=(2, 256)).cumsum(axis=1)
    r = arviz_adapter.autocorr(x)
    y = x[0] - x[0].mean()
    direct = np.array([np.dot(y[: y.size - k], y[k:]) for k in range(5)]) / np.dot(y, y)
    np.testing.assert_allclose(r[0, :5], direct, atol=1e-10)


def test_clopper_pearson_epsilon_above_the_diagonal():
    lo, hi = bdp.clopper_pearson_epsilon(585, 1000, 741, 1000, delta=1e-5)
    point = bdp.classical_epsilon(0.585, 0.741, 1e-5)
    assert 0 < lo < point < hi
    assert (lo, hi) == pytest.approx(bdp.clopper_pearson_epsilon(415, 1000, 259, 1000, 1e-5))


# -- kernel density at the bounds of the support ----------------------------------------------


def _curve(post, var):
    ax = plots.plot_marginal(post, var)
    (line,) = [ln for ln in ax.lines if ln.get_label().startswith("kernel density")]
    return line.get_xdata(), line.get_ydata()


def _one_var(var, x):
    draws = {"eps": np.abs(x), var: x} if var != "eps" else {"eps": x}
    return bdp.Posterior({k: v.reshape(2, -1) for k, v in draws.items()}, {}, {})


def test_density_of_uniform_s_reaches_both_bounds():
    # Uniform(0, 1): true density 1 up to s = 0 and s = 1. Without the boundary correction the
    # curve falls to about 0.5 there; with reflection it is unbiased at a flat bound, and 0.08
    # is about 3 sd of the estimate's noise at 20,000 draws.
    x = np.random.default_rng(11).uniform(size=20_000)
    grid, dens = _curve(_one_var("s", x), "s")
    near = (grid < 0.03) | (grid > 0.97)
    assert near.sum() >= 10
    np.testing.assert_allclose(dens[near], 1.0, atol=0.08)
    assert np.mean(np.abs(dens - 1.0)) < 0.03


@pytest.mark.parametrize("var", ["s_canary", "tau_lira"])
def test_density_of_beta_1_3_at_zero(var):
    # Beta(1, 3): density 3 (1 - x)^2, steepest at the bound x = 0 (f'(0) = -6). Reflection has
    # bias about 0.8 h f'(0) there (h the bandwidth, ~0.027 here: ~5%); allowed: 10% on [0, 0.05].
    x = np.random.default_rng(12).beta(1.0, 3.0, size=20_000)
    grid, dens = _curve(_one_var(var, x), var)
    near = grid < 0.05
    truth = 3.0 * (1.0 - grid) ** 2
    assert near.sum() >= 10
    np.testing.assert_allclose(dens[near], truth[near], rtol=0.10)
    far = grid > 0.9  # density ~0 at the upper bound: reflection adds nothing visible there
    np.testing.assert_allclose(dens[far], truth[far], atol=0.02)


def test_density_of_eps_at_zero_and_at_the_axis_cut():
    # eps ~ HalfNormal(1): density sqrt(2/pi) at eps = 0, with zero slope there. The eps axis
    # ends at 1.25 x its 97.5% quantile; the curve must follow the density of all draws up to
    # that cut, not dip there (as a density of only the draws on the axis would).
    from scipy import stats

    x = np.abs(np.random.default_rng(13).normal(size=40_000))
    grid, dens = _curve(_one_var("eps", x), "eps")
    truth = stats.halfnorm.pdf(grid)
    near = grid < 0.1
    assert near.sum() >= 10
    np.testing.assert_allclose(dens[near], truth[near], rtol=0.06)
    assert grid[-1] == pytest.approx(1.25 * np.quantile(x, 0.975))
    # at the cut the density is ~0.005 and a 20,000-draw estimate has ~15% noise; a density of
    # the draws on the axis alone is ~50% low there
    np.testing.assert_allclose(dens[-5:], truth[-5:], rtol=0.3)


def test_histogram_and_curve_are_the_density_of_all_draws():
    # with a cut eps axis both integrate to the fraction of draws on the axis, not to 1
    x = np.random.default_rng(14).lognormal(1.0, 0.8, size=20_000)
    post = _one_var("eps", x)
    ax = plots.plot_marginal(post, "eps", bins=50)
    lo, hi = ax.get_xlim()
    frac = np.mean(x <= hi)
    assert frac < 0.995
    heights = np.array([p.get_height() for p in ax.containers[0]])  # the histogram's bars
    assert heights.size == 50
    assert heights.sum() * (hi - lo) / 50 == pytest.approx(frac, rel=1e-9)
    grid, dens = _curve(post, "eps")
    assert np.trapezoid(dens, grid) == pytest.approx(frac, rel=0.01)


# -- inner edges of R_s for groups with their own strength ------------------------------------

WEAK = bdp.AttackCounts(fp=[300, 350], n_neg=1000, fn=[500, 450], n_pos=1000)


@pytest.fixture(scope="module")
def post_own():
    groups = [
        bdp.Evidence(STRONG, name="strong", strength="own"),
        bdp.Evidence(WEAK, name="weak", strength="own"),
    ]
    return bdp.estimate_epsilon(
        groups, delta=1e-5, chains=2, draws=200, tune=200, seed=5, check=False
    )


def test_region_inner_edge_per_own_strength(post_own):
    assert {"s_strong", "s_weak"} <= set(post_own.var_names) and "s" not in post_own.var_names
    ax = plots.plot_region(post_own, confidence=None)
    eps_med = post_own.quantile(0.5, "eps")
    grid = np.linspace(0.0, 1.0 - 1e-5, 400)
    points = {c.get_label(): c.lines[0] for c in ax.containers}  # errorbar: label on container
    for j, name in enumerate(["strong", "weak"]):
        s_med = post_own.quantile(0.5, f"s_{name}")
        label = f"inner edge of R_s for {name}: median s_{name} = {s_med:.2f} (at s·ε)"
        (edge,) = [ln for ln in ax.lines if ln.get_label() == label]
        assert edge.get_linestyle() == "--"
        # in the colour of that group's points
        dots = points[f"observed rates: {name}"]
        assert edge.get_color() == dots.get_color() == f"C{j}"
        np.testing.assert_allclose(edge.get_xdata(), grid)
        want = plots._boundary(s_med * eps_med, s_med * 1e-5, grid)
        np.testing.assert_allclose(edge.get_ydata(), want)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert sum("inner edge of R_s for" in t for t in texts) == 2
    assert not any("inner edge of R_s at median s" in t for t in texts)


def test_region_inner_edge_shared_s_kept(post):
    ax = plots.plot_region(post, confidence=None)
    s_med = post.quantile(0.5, "s")
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert f"inner edge of R_s at median s = {s_med:.2f} (boundary at s·ε)" in texts
    assert not any("inner edge of R_s for" in t for t in texts)


# -- several posteriors of one variable --------------------------------------------------------


def test_compare_curves_intervals_and_bars():
    rng = np.random.default_rng(21)
    wide = bdp.Posterior({"eps": rng.lognormal(1.0, 0.6, size=(2, 4000))}, {}, {})
    narrow = bdp.Posterior({"eps": rng.lognormal(1.0, 0.1, size=(2, 4000))}, {}, {})
    ax = plots.plot_compare({"alone": wide, "combined": narrow}, colors=["C1", "k"])
    _labelled(ax)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    for name, p in (("alone", wide), ("combined", narrow)):
        lo, hi = p.interval(0.9)
        med = p.quantile(0.5)
        assert f"{name}: median {med:.3g}, 90% interval [{lo:.3g}, {hi:.3g}]" in texts
    curves = [ln for ln in ax.lines if ln.get_label().startswith(("alone", "combined"))]
    assert [c.get_color() for c in curves] == ["C1", "k"]
    # the interval bars below the axis span the intervals
    bars = [ln for ln in ax.lines if ln.get_linewidth() == 5]
    assert len(bars) == 2
    np.testing.assert_allclose(bars[1].get_xdata(), narrow.interval(0.9))
    assert max(bars[0].get_ydata()) < 0 and max(bars[1].get_ydata()) < 0
    # the eps axis is cut for the wide posterior; the label says how many draws lie beyond
    assert "axis cut" in ax.get_xlabel() and "alone" in ax.get_xlabel()


def test_compare_bounded_variable_uses_reflection():
    x = np.random.default_rng(22).uniform(size=(2, 10_000))
    post = bdp.Posterior({"eps": 1 + x, "s": x}, {}, {})
    ax = plots.plot_compare({"u": post}, "s")
    dens = ax.lines[0].get_ydata()
    assert abs(dens[0] - 1) < 0.1 and abs(dens[-1] - 1) < 0.1


def test_compare_bad_input(post):
    with pytest.raises(TypeError, match="`posteriors` must be a dict"):
        plots.plot_compare([post])
    with pytest.raises(ValueError, match="`posteriors` must hold at least one"):
        plots.plot_compare({})
    with pytest.raises(TypeError, match="`posterior` must be a bayes_dp.Posterior"):
        plots.plot_compare({"a": post, "b": "not a posterior"})
    with pytest.raises(ValueError, match="`colors`"):
        plots.plot_compare({"a": post}, colors=["C0", "C1"])
    with pytest.raises(ValueError, match="`var`"):
        plots.plot_compare({"a": post}, "tau_x")
    with pytest.raises(ValueError, match="`prob`"):
        plots.plot_compare({"a": post}, prob=1.0)


def test_joint_plot_cuts_the_eps_axis_where_its_docstring_says():
    rng = np.random.default_rng(0)
    eps = np.exp(rng.normal(1.0, 0.6, size=(2, 2000)))  # a long upper tail
    s = rng.uniform(0.2, 0.9, size=(2, 2000))
    post = bdp.Posterior({"eps": eps, "s": s}, {}, {})
    ax = plots.plot_joint(post)
    cut = min(eps.max(), 1.25 * np.quantile(eps, 0.975))  # as the docstring says
    assert ax.get_xlim()[1] == pytest.approx(cut)
    assert ax.get_ylim() == pytest.approx((s.min(), s.max()))
    beyond = 100 * np.mean(eps > cut)
    assert beyond > 0 and f"{beyond:.1f}% of draws lie beyond {cut:.3g}" in ax.get_xlabel()
    doc = " ".join(plots.plot_joint.__doc__.split())
    assert f"({plots.TAIL_MARGIN:g}) times" in doc
    assert f"({100 * plots.TAIL_QUANTILE:g}%) quantile" in doc


def test_density_of_a_sharp_skewed_eps_posterior_follows_its_peak():
    # eps = c / s with s from 0.7 Beta(8, 1.5) + 0.3 Uniform(0.1, 1): a sharp peak just above c
    # and a long upper tail, like a posterior of eps with s inferred. Density:
    # f(e) = p_s(c / e) c / e^2. Scott's bandwidth on the eps scale (the old curve) drew the peak
    # at 60% of its height; the curve must reach the true peak within 10% and the histogram's
    # highest bar within 15% (the bars average over their width), at the true peak's place
    # within one histogram bin.
    from scipy import stats

    c, w, n = 2.7, 0.3, 20_000
    rng = np.random.default_rng(21)
    beta, unif = stats.beta(8, 1.5), stats.uniform(0.1, 0.9)
    s = np.where(
        rng.random(n) < w, unif.rvs(size=n, random_state=rng), beta.rvs(size=n, random_state=rng)
    )
    x = c / s
    ax = plots.plot_marginal(_one_var("eps", x), "eps", bins=60)
    grid, dens = ax.lines[0].get_data()
    truth = ((1 - w) * beta.pdf(np.clip(c / grid, 0, 1)) + w * unif.pdf(c / grid)) * c / grid**2
    heights = np.array([p.get_height() for p in ax.containers[0]])
    assert dens.max() == pytest.approx(truth.max(), rel=0.1)
    assert dens.max() == pytest.approx(heights.max(), rel=0.15)
    width = (ax.get_xlim()[1] - ax.get_xlim()[0]) / 60  # one histogram bin
    assert abs(grid[np.argmax(dens)] - grid[np.argmax(truth)]) < width
    # the old curve: Scott's rule on the draws shown, one bandwidth on the eps scale
    shown = x[x <= grid[-1]]
    h = np.std(shown, ddof=1) * shown.size ** (-0.2)
    old = stats.norm.pdf((grid[:, None] - x[None, ::4]) / h).mean(axis=1) / h
    assert old.max() < 0.7 * truth.max()


def test_region_inset_magnifies_rates_in_a_thin_strip():
    # rates in a thin strip (FPR 0.02-0.05 on an axis to ~0.45): an inset holds every point
    # with its bars and the boundary of R at the median eps next to them
    narrow = bdp.AttackCounts(fp=[20, 30, 45, 50], n_neg=1000, fn=[300, 280, 350, 320], n_pos=1000)
    delta, eps = 1e-5, 4.0
    ax = plots.plot_region(counts=narrow, delta=delta, eps=[eps])
    (ins,) = ax.child_axes
    x0, x1 = ins.get_xlim()
    y0, y1 = ins.get_ylim()
    lo_x, hi_x = bdp.clopper_pearson_interval(narrow.fp, narrow.n_neg, 0.95)
    lo_y, hi_y = bdp.clopper_pearson_interval(narrow.fn, narrow.n_pos, 0.95)
    assert x0 <= lo_x.min() and hi_x.max() <= x1 and y0 <= lo_y.min() and hi_y.max() <= y1
    assert (x1 - x0) < 0.4 * ax.get_xlim()[1]  # magnified
    # the boundary straight to the left of the points is inside the inset
    left = plots._boundary(eps, delta, narrow.fnr)
    assert np.all((x0 <= left) & (left <= narrow.fpr))
    # spread-out rates fill the axes: no inset unless asked for
    assert not plots.plot_region(counts=STRONG, delta=delta, eps=[3.0]).child_axes
    assert len(plots.plot_region(counts=STRONG, delta=delta, eps=[3.0], inset=True).child_axes) == 1
