"""The exact sampler's named tuples and settings: model, over-dispersed bases, chain state.

Plain data (numba reads named tuples of arrays and scalars); the kernels that use them are in
:mod:`samplers.exact.posterior`, :mod:`samplers.exact.table`, :mod:`samplers.exact.moves` and
:mod:`samplers.exact.chain`.
"""

from __future__ import annotations

from collections import namedtuple

#: Everything the log posterior needs but the over-dispersed bases.
#: B: :class:`samplers.model.binomial.BinomialBases` of the distinct binomial bases;
#: Q: their :class:`samplers.model.binomial_block.Blocks` (which share one quadrature), or None when
#: no block pays (then the block quadrature is not compiled); b_grp, b_mult, b_k: their group,
#: multiplicity and strength variable.
#: Per group j: g_sidx (strength variable); g_tau_z, g_rho_z (index in z, -1 when fixed or
#: absent); g_tau, g_rho (the fixed values).
#: Per strength variable k: s_z (index in z or -1), s_fixed (its value when fixed).
#: Priors: pz (:class:`samplers.model.transforms.PriorZ`: eps of kind 0 half-normal(p1) or
#: 1 lognormal(p1, p2), s ~ Beta(s_a, s_b)), tau ~ Beta(tau_a, tau_b), rho uniform on
#: (-rho_max, rho_max).
#: Exposure mixture (``LIK_EXPOSURE_MIXTURE`` groups, binomial bases): per group j, g_mix[j]
#: (1 for such a group), g_pi_z, g_kap_z (index of logit pi, logit kappa in z; -1 when fixed or
#: absent), g_pi, g_kap (their fixed values); mix_prior = (pi_a, pi_b, u_a, u_b,
#: log kappa_min): pi ~ Beta(pi_a, pi_b), kappa = kappa_min^u with u = expit(z) ~ Beta(u_a,
#: u_b); n_mix, the number of mixture groups (0: the mixture code is skipped).
#: G: the distinct rows of one-run audits (``LIK_GUESSES`` groups), a
#: :class:`samplers.model.guesses.Guesses` with no rows when there are none (its code is then
#: skipped); s_cheap: the free strength variables that only such rows read (no base), which
#: :func:`samplers.exact.moves.strength_move` updates on their own (empty: no such move); their
#: coordinates are the last of z, which the fitted t proposal leaves out
#: (:class:`samplers.exact.fitted_proposal.Fitted`).
Model = namedtuple(
    "Model",
    [
        "B",
        "Q",
        "b_grp",
        "b_mult",
        "b_k",
        "g_sidx",
        "g_tau_z",
        "g_rho_z",
        "g_tau",
        "g_rho",
        "s_z",
        "s_fixed",
        "delta",
        "pz",
        "tau_a",
        "tau_b",
        "g_mix",
        "g_pi_z",
        "g_kap_z",
        "g_pi",
        "g_kap",
        "mix_prior",
        "n_mix",
        "G",
        "s_cheap",
    ],
)

#: it: iterations done; z, lp: current point and log posterior; ll_b, ll_c: its per-base log
#: likelihoods; log_scale: (joint, ridge) log step factors; chol: shape of the joint walk;
#: cov_n, cov_sum, cov_sq: running sums for the covariance; n_acc: accepted moves (joint, ridge)
#: since the last reset; win_*: count, sums and range of z over the second half of the warm-up
#: (they set the box of the table); sg_on[0]: the table's state (TABLE_* below; 0 not yet
#: built); tb: the table (:class:`samplers.exact.surrogate.Table`: its box, values and largest value
#: of each table); q: the proposal tabulated from it
#: (:class:`samplers.exact.table_proposal.Proposal`);
#: win_cross: cross sums of z over the second half of the warm-up, and fq the t proposal fitted
#: to that window (:class:`samplers.exact.fitted_proposal.Fitted`).
#: All arrays, so the kernel updates them in place.
#: The over-dispersed bases (None when there are none, so that their quadrature is not even
#: compiled): P, c_grp, c_lik, c_const, c_mult: distinct rows
#: (:func:`samplers.model.params.aux_params`), their group, likelihood code, additive constant and
#: multiplicity (bases with the same group and counts); XG, WG: Gauss-Legendre table of their
#: quadrature; c_kx, c_ky: the Jacobian table of each row's first and second count (-1: none;
#: bivariate-normal rows only), k_grp, k_n, k_c: the group, size and count of each table
#: (:func:`samplers.model.band_quadrature.fill_jacobian_tables`).
Corr = namedtuple(
    "Corr",
    ["P", "c_grp", "c_lik", "c_const", "c_mult", "XG", "WG", "c_kx", "c_ky", "k_grp", "k_n", "k_c"],
)

ChainState = namedtuple(
    "ChainState",
    [
        "it",
        "z",
        "lp",
        "ll_b",
        "ll_c",
        "log_scale",
        "chol",
        "cov_n",
        "cov_sum",
        "cov_sq",
        "n_acc",
        "win_n",
        "win_sum",
        "win_sq",
        "win_min",
        "win_max",
        "sg_on",
        "tb",
        "win_usum",
        "win_usq",
        "win_umin",
        "win_umax",
        "q",
        "win_cross",
        "fq",
    ],
)

#: tune: warm-up iterations; cov_start / cov_end: the window of the warm-up whose draws shape
#: the joint walk; target_accept: goal of both scale recursions; ridge: make the ridge move;
#: n_inner: Metropolis steps on the table per surrogate-transition move (0: no table, the ridge
#: move runs on the exact posterior after the warm-up too).
#: exact_every: with a table, the exact walk and ridge moves run every exact_every-th iteration
#: after the warm-up (they reach what lies outside the table's box). store_ll: store the
#: per-base log likelihoods of every draw.
Settings = namedtuple(
    "Settings",
    [
        "tune",
        "cov_start",
        "cov_end",
        "target_accept",
        "ridge",
        "n_inner",
        "indep",
        "exact_every",
        "exact_every_indep",
        "store_ll",
    ],
)

#: Where :func:`samplers.exact.chain.advance` stores the draws, one row each: z (rows, d), the
#: per-base log likelihoods ll_b, ll_c (only with ``Settings.store_ll``) and acc (rows, 3), the
#: acceptance of the walk, ridge and table moves (-1 where a move was not attempted).
Draws = namedtuple("Draws", ["z", "ll_b", "ll_c", "acc"])

#: Initial sd of the joint walk in every coordinate of z (before the shape is measured).
INITIAL_STEP = 0.1
#: Exponent of the Robbins-Monro gain (t + 1)^-RM_POWER.
RM_POWER = 0.6
#: Walk steps on the table per surrogate-transition move (each followed by a ridge step but
#: the last).
N_INNER = 40
#: Default of Settings.exact_every (with the table walk) and Settings.exact_every_indep (with
#: the independence move).
EXACT_EVERY = 2
EXACT_EVERY_INDEP = 10
#: state.sg_on[0]: not decided yet (0), no table and no fitted proposal (-1), table walk,
#: independence move with the table's proposal, independence move with the fitted t proposal.
TABLE_NONE, TABLE_WALK, TABLE_INDEP, TABLE_FIT = -1, 1, 2, 3


#: Scratch arrays of one call of the chain kernel: a proposal zp with its per-base log
#: likelihoods llb_p, llc_p; xi the normal draws of a walk step; yp the table walk's proposal.
Scratch = namedtuple("Scratch", ["zp", "llb_p", "llc_p", "xi", "yp"])
