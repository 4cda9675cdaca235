"""Deterministic (quadrature) reference for the MCMC-DP-Est posterior.

Test helper only, and independent of the code it checks: it imports numpy, scipy and the
standard library, never ``samplers`` nor ``bayes_dp``, and shares no code with the sampler
(``tests/project/test_reference_independence.py`` checks the imports).  Keep it so: a reference
that reuses the sampler's code cannot find the sampler's errors.

Modules, by concern: ``geometry`` (the regions R(t, d), their areas and edges), ``quadrature``
(Gauss-Legendre panels, the s -> 1 boundary line integral), ``binomial`` (the binomial
likelihood of one base), ``correlated`` (paper eq. 7 at fixed tau, rho), ``grid`` (1-D grids,
priors of eps, CDFs) and ``posterior`` (the posterior on a grid, evidence groups, zoom).  The
public names below are importable from ``tests.reference``.

Model (Yildirim et al., Sec. 2.1): for n challenge bases
``X_i ~ Binom(N0_i, alpha_i)``, ``Y_i ~ Binom(N1_i, beta_i)`` with
``(alpha_i, beta_i) | eps, s ~ Unif(R(eps, delta) minus R(s*eps, s*delta))``.

Geometry.  Write ``c = e^t`` and ``tl = 1 - d``.  The complement of ``R(t, d)`` in the
unit square is a lower-left corner ``A = {x + c y < tl} u {y + c x < tl}`` and an
upper-right corner ``B`` which is the point reflection of ``A`` through (1/2, 1/2).
At abscissa ``x`` the corner ``A`` is ``{y < h(x)}`` with
``h(u) = clip(max(tl - c u, (tl - u) / c), 0, 1)``, and ``B`` is ``{y > 1 - h(1 - x)}``.
Hence ``R(t, d)`` at ``x`` is the interval ``[lo(x), up(x)] = [h(x), 1 - h(1 - x)]`` and
every mass is a 1-D integral over ``x`` of a Beta density times a difference of
regularised incomplete beta functions.  The integral over ``x`` uses composite
Gauss-Legendre panels whose breakpoints are the kinks of ``h``, quantiles of the
``x``-density and the pre-images of quantiles of the ``y``-density under each linear
piece of the boundary, so each panel sees a smooth, well-resolved integrand.

The posterior with ``s ~ Beta`` is computed on a tensor grid in ``(eps, u = s*eps)``,
with ``u`` and ``eps`` on a common 1-D grid ``T``.  The lens mass is
``C(u, s*delta) - C(eps, delta)`` with ``C(t, d)`` the mass outside ``R(t, d)``; ``C``
(and the mass inside, ``M = 1 - C``) are tabulated once per base on ``T`` and on a
few Chebyshev-Lobatto nodes in ``d`` (polynomial interpolation in ``d``).  The
``s``-integral uses product integration (exact Beta weights against piecewise
linear interpolation of the likelihood), which is robust for ``a, b < 1``.  Its end node
s = 1 is the exact limit of the likelihood (``_log_boundary_mass``).

Extensions:

* ``s = 1`` (fixed): the band collapses onto the boundary of R(eps, delta); the likelihood is
  the limit of (band mass) / |R_s| as s -> 1, a line integral of the data density along the
  boundary weighted by the boundary's speed in s over the derivative of the area
  (``_log_boundary_mass``, ``_log_area_slope``).
* Several groups, each with its own strength (``posterior_grid_groups``): given eps the groups
  are independent, so the eps marginal is p(eps) prod_g Z_g(eps), Z_g the per-row s-integral
  of group g, and the s_g marginal weights group g's per-row partial s-integrals by the other
  groups' factors.  Identical count rows are evaluated once and weighted by multiplicity.
* Concentrated posteriors (many bases): a coarse pass locates the window of (eps, u) where the
  density matters and a fine pass is computed there (``zoom``).
* Paper eq. 7 at fixed (tau, rho) (``_BVNBase``): the same tables by brute-force nested
  Gauss-Legendre quadrature of the bivariate normal density over the regions.
* Incomplete beta functions are evaluated only on panels whose upper bound is not negligible
  against a sure lower bound of the integral (``_band_integral``).
"""

from tests.reference.binomial import log_marginal_likelihood, marginal_likelihood, region_mass
from tests.reference.correlated import bvn_band_integral, bvn_posterior_bruteforce
from tests.reference.geometry import in_region, log_region_area, region_area
from tests.reference.grid import PosteriorGrid
from tests.reference.posterior import GroupsPosterior, posterior_grid, posterior_grid_groups

__all__ = [
    "region_area",
    "log_region_area",
    "in_region",
    "log_marginal_likelihood",
    "marginal_likelihood",
    "region_mass",
    "posterior_grid",
    "posterior_grid_groups",
    "PosteriorGrid",
    "GroupsPosterior",
    "bvn_band_integral",
    "bvn_posterior_bruteforce",
]
