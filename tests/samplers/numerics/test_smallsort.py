"""samplers.numerics.smallsort: the kernels' insertion sorts against numpy's sorts."""

import numpy as np
import pytest

from samplers.numerics.smallsort import argsort_desc_small, sort_small


@pytest.mark.parametrize("n", [0, 1, 2, 7, 15, 40])
def test_sorts_match_numpy_with_ties_and_infinities(n):
    rng = np.random.default_rng(n)
    for _ in range(20):
        v = rng.choice([-np.inf, -1.0, 0.0, 0.5, 2.0, np.inf], size=n + 3)  # many ties
        v[: n // 2] = rng.normal(size=n // 2)
        got = v.copy()
        sort_small(got, n)
        np.testing.assert_array_equal(got[:n], np.sort(v[:n]))
        np.testing.assert_array_equal(got[n:], v[n:])  # past n untouched
        order = np.full(n + 2, -7, dtype=np.int64)
        argsort_desc_small(v, n, order)
        # stable: ties keep their order, as a stable argsort of -v gives
        np.testing.assert_array_equal(order[:n], np.argsort(-v[:n], kind="stable"))
        assert np.all(order[n:] == -7)
