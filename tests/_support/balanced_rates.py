"""The pooled bounds' per-model rates worked out entry by entry, for comparison with the library.

:func:`balanced_rates_by_hand` follows the rule of :func:`mia.model_rates.model_rates`'s docstring
(the balanced rates given the models before) with loops; :func:`selected_by_hand` picks the
targets most exposed on the reference half with scipy's Welch t test.
"""

import numpy as np


def balanced_rates_by_hand(dec, keep, coins, empty_max=0.3):
    """Per test model (in order): FP over kept OUT targets, FN over kept IN ones, and ``used``.

    Target ``j`` of model ``i`` has IN share ``pi`` among the models from ``i`` on; an IN entry
    is kept when its coin is below ``min(pi, 1 - pi) / pi``, an OUT entry when below
    ``min(pi, 1 - pi) / (1 - pi)``. A model is used when the product of ``1 - min(pi, 1 - pi)``
    over its targets is at most ``empty_max``; an empty side's rate is 1/2.
    """
    n, t = keep.shape
    fpr, fnr, used = [], [], []
    for i in range(n):
        p = []
        fp = [0, 0]  # [decided member, kept OUT]
        fn = [0, 0]  # [decided non-member, kept IN]
        for j in range(t):
            pi = keep[i:, j].sum() / (n - i)
            pj = min(pi, 1 - pi)
            p.append(pj)
            if keep[i, j] and coins[i, j] < pj / pi:
                fn[0] += not dec[i, j]
                fn[1] += 1
            elif not keep[i, j] and coins[i, j] < pj / (1 - pi):
                fp[0] += bool(dec[i, j])
                fp[1] += 1
        use = float(np.prod(1 - np.array(p))) <= empty_max
        used.append(use)
        if use:
            fpr.append(fp[0] / fp[1] if fp[1] else 0.5)
            fnr.append(fn[0] / fn[1] if fn[1] else 0.5)
    return np.array(fpr), np.array(fnr), np.array(used)


def selected_by_hand(scores, keep, rates, k=8):
    """The rates over the ``k`` targets most exposed on the reference half, worked out here.

    ``rates``: :func:`mia.pooled_model_rates` of ``scores``, ``keep``. Exposure: the absolute
    Welch t of scipy's ``ttest_ind`` of each fitted target's IN against OUT reference scores;
    the rates: :func:`balanced_rates_by_hand` over the chosen columns with the coins of
    ``rates["coin_seed"]``. Returns ``(top, fpr, fnr)`` (``top``: indices into
    ``rates["columns"]``).
    """
    from scipy import stats

    ref = rates["reference_models"]
    xr, kr = scores[ref][:, rates["columns"]], keep[ref][:, rates["columns"]]
    t = [
        abs(stats.ttest_ind(xr[kr[:, j], j], xr[~kr[:, j], j], equal_var=False).statistic)
        for j in range(xr.shape[1])
    ]
    top = np.argsort(-np.asarray(t), kind="stable")[:k]
    coins = np.random.default_rng(rates["coin_seed"]).random(rates["keep"].shape[::-1]).T
    dt, kt = rates["decisions"][:, top], rates["keep"][:, top]
    fpr, fnr, _ = balanced_rates_by_hand(dt, kt, coins[:, top])
    return top, fpr, fnr
