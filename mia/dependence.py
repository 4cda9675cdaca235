"""How much information the pooled counts of a score matrix carry: a design effect per side.

The held-out decisions of a score matrix are not independent. Two sources matter
(``docs/validation/lira.md``, "Dependence of the pooled counts", derives every formula used here):

* **within a target**, every held-out IN model is tested against the same OUT fit, so the
  target's FN count is over-dispersed, about ``1 + (n1 - 1) phi(Phi^-1 beta)^2 v_T /
  (beta (1 - beta))`` times the binomial variance, ``v_T`` the variance of the fitted threshold
  in units of the IN scores' variance; the FP count (leave-one-out OUT fits) is under- or
  about binomially dispersed;
* **across targets**, a model that shifts all of its scores together makes its decisions
  correlated across targets. With cross-fed fits (every target's fit uses the other models)
  this shift enters a target's count as the model's shift minus the mean shift of the fit's
  models, which cancels in the FP counts and, in a balanced design, nearly so in the FN counts:
  the per-model rates vary more than binomial while the pooled counts hardly do.

:func:`estimate_dependence` turns a matrix of held-out decisions into a
:class:`DependenceDiagnostic`: for each side the *design effect* ``Var(pooled count) /
(binomial variance)`` and its inverse, the *information ratio* (the information the pooled
counts carry about a rate shared by the targets, relative to what independence assumes).
:func:`effective_counts` deflates the counts by the design effect (Kish's effective sample
size), so that a binomial model of the deflated counts has the variance of the real ones.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass

import numpy as np
from scipy import special

from bayes_dp import AttackCounts
from bayes_dp.core.exceptions import DependenceWarning

__all__ = [
    "DEPENDENCE_INFO_MIN",
    "DependenceDiagnostic",
    "effective_counts",
    "estimate_dependence",
]

#: Below this information ratio (on either side) the pooled counts are called dependent: a
#: :class:`~bayes_dp.core.exceptions.DependenceWarning` is raised and an uncorrected claim is marked
#: not reliable.
DEPENDENCE_INFO_MIN = 0.5

_FITS = ("cross_fed", "fixed")


@dataclass(frozen=True)
class DependenceDiagnostic:
    """Dependence of the held-out decisions of a score matrix, per side (FP and FN).

    A *design effect* is ``Var(pooled count) / binomial variance`` of the pooled FP (or FN)
    count, ``within + between``; the *information ratio* is its inverse: the information the
    pooled counts carry about a rate shared by all targets, relative to independent decisions.

    Attributes
    ----------
    fp_within, fn_within : float
        Within-target dispersion (variance of a target's count over its binomial variance,
        averaged with binomial-variance weights). FP: estimated from the spread of the targets'
        FP counts around the pooled FP rate (targets' FP rates differing inflate it: a
        conservative error). FN: the design formula with each target's fitted-threshold
        variance from the jackknife over its OUT models (1 for a threshold fixed in advance).
    fp_between, fn_between : float
        Excess of the pooled count's variance from the per-model effect shared by all targets,
        in units of the pooled binomial variance (0 for FP with cross-fed fits, where it
        cancels to first order; see ``docs/validation/lira.md``).
    fp_model_dispersion, fn_model_dispersion : float
        Variance of the per-model residual error counts over what independence predicts
        (about 1 without a per-model effect): how much the per-model error rates vary.
    model_score_sd, model_score_sd_expected : float
        Standard deviation over models of the per-model mean score residual (each score minus
        its target's mean on its side), and what independent scores would give.
    n_models, n_targets : int
        Size of the matrix the decisions came from (counted targets).
    fit : {"cross_fed", "fixed"}
        How the thresholds were fitted.
    corrected : bool
        Whether the evidence built from these counts corrects for the dependence (effective
        counts, or a likelihood that models it). Set by whoever builds the evidence.
    """

    fp_within: float
    fn_within: float
    fp_between: float
    fn_between: float
    fp_model_dispersion: float
    fn_model_dispersion: float
    model_score_sd: float
    model_score_sd_expected: float
    n_models: int
    n_targets: int
    fit: str = "cross_fed"
    corrected: bool = False

    @property
    def fp_design_effect(self) -> float:
        """Design effect of the pooled FP count (``fp_within + fp_between``, at least 1e-6)."""
        return max(self.fp_within + self.fp_between, 1e-6)

    @property
    def fn_design_effect(self) -> float:
        """Design effect of the pooled FN count (``fn_within + fn_between``, at least 1e-6)."""
        return max(self.fn_within + self.fn_between, 1e-6)

    @property
    def fp_info_ratio(self) -> float:
        """Information of the pooled FP count relative to independence (1 / design effect)."""
        return 1.0 / self.fp_design_effect

    @property
    def fn_info_ratio(self) -> float:
        """Information of the pooled FN count relative to independence (1 / design effect)."""
        return 1.0 / self.fn_design_effect

    @property
    def info_ratio(self) -> float:
        """The smaller of the two information ratios."""
        return min(self.fp_info_ratio, self.fn_info_ratio)

    @property
    def dependent(self) -> bool:
        """True when the pooled counts carry less than half the information independence assumes.

        (``info_ratio <`` :data:`DEPENDENCE_INFO_MIN`.)
        """
        return self.info_ratio < DEPENDENCE_INFO_MIN

    def to_dict(self) -> dict:
        """Return the fields and the derived ratios as a JSON-ready dict."""
        out = {
            k: (v if not isinstance(v, float) or math.isfinite(v) else None)
            for k, v in asdict(self).items()
        }
        out.update(
            fp_design_effect=self.fp_design_effect,
            fn_design_effect=self.fn_design_effect,
            fp_info_ratio=self.fp_info_ratio,
            fn_info_ratio=self.fn_info_ratio,
            info_ratio=self.info_ratio,
            dependent=self.dependent,
        )
        return out

    def sentence(self) -> str:
        """Say in words how much information the pooled counts carry."""
        side = "FN" if self.fn_info_ratio <= self.fp_info_ratio else "FP"
        return (
            f"the pooled {side} counts carry {self.info_ratio:.2f} of the information that "
            f"independent decisions would (design effect FP {self.fp_design_effect:.2f}, FN "
            f"{self.fn_design_effect:.2f}; decisions share the models' fits)"
        )

    def __repr__(self) -> str:
        flag = ", DEPENDENT" if self.dependent else ""
        fix = ", corrected" if self.corrected else ""
        return (
            f"DependenceDiagnostic(information ratio FP {self.fp_info_ratio:.2f}, FN "
            f"{self.fn_info_ratio:.2f}{flag}{fix}; design effect FP {self.fp_within:.2f} within "
            f"+ {self.fp_between:.2f} between, FN {self.fn_within:.2f} + {self.fn_between:.2f}; "
            f"per-model rate dispersion FP {self.fp_model_dispersion:.2f}, FN "
            f"{self.fn_model_dispersion:.2f}; per-model mean score sd "
            f"{self.model_score_sd:.3g} (independence: {self.model_score_sd_expected:.3g}))"
        )


def _binomial_weights(k, n):
    """Unbiased plug-in of ``n p (1 - p)`` per target from ``k`` of ``n`` (0 where n < 2)."""
    n = n.astype(np.float64)
    p = k / n
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(n > 1, n * n / (n - 1) * p * (1 - p), 0.0)
    return w


def _side_terms(y, cell, counts_k, counts_n):
    """Per-model residual statistics of one side.

    ``y`` (models x targets) holds the errors (FP: decided member; FN: decided non-member),
    ``cell`` the cells of this side. Returns ``(sum_m E_m^2, sum e^2, sum_m N_m (N_m - 1))``
    with ``e = y - p_t`` the residual from the target's error rate and ``E_m`` its sum over
    the model's cells.
    """
    p = counts_k / counts_n
    e = np.where(cell, y - p, 0.0)
    e_m = e.sum(axis=1)
    n_m = cell.sum(axis=1).astype(np.float64)
    return float((e_m**2).sum()), float((e * e).sum()), float((n_m * (n_m - 1)).sum())


def estimate_dependence(
    decisions,
    keep,
    *,
    threshold_var=None,
    scores=None,
    fit: str = "cross_fed",
) -> DependenceDiagnostic:
    """Estimate the design effect of the pooled FP and FN counts from held-out decisions.

    Parameters
    ----------
    decisions : array_like of bool, shape (n_models, n_targets)
        "Member" decision of every held-out (model, target) pair (only counted targets).
    keep : array_like of bool, shape (n_models, n_targets)
        True where the model trained on the target (an FN cell), False where not (an FP cell).
    threshold_var : float or array_like of float, shape (n_targets,), optional
        Variance of each target's fitted decision threshold in units of the variance of its IN
        scores (``v_T``; about ``(1 + z_alpha^2 / 2) / n0`` for a normal OUT fit). 0 for a
        threshold fixed in advance. Default: the normal-fit value ``(1 + z^2 / 2) / n_out``
        with ``z = Phi^-1(1 - FP rate)``.
    scores : array_like of float, shape (n_models, n_targets), optional
        The scores, for the descriptive per-model mean-score spread (NaN without).
    fit : {"cross_fed", "fixed"}
        ``"cross_fed"``: every target's threshold is fitted on the other models' scores (the
        per-model effect cancels to first order, ``docs/validation/lira.md``); ``"fixed"``:
        thresholds do
        not depend on the models' scores (the per-model effect adds fully).

    Returns
    -------
    DependenceDiagnostic

    Examples
    --------
    >>> import mia
    >>> scores, keep = mia.simulate_score_matrix(32, 200, mu=1.0, seed=0)
    >>> res = mia.counts_from_score_matrix(scores, keep, alpha=0.1)
    >>> d = res.dependence
    >>> bool(1.3 < d.fn_design_effect < 3.0), d.fit
    (True, 'cross_fed')
    """
    dec = np.asarray(decisions)
    k = np.asarray(keep)
    if dec.dtype != bool or k.dtype != bool:
        raise TypeError(
            f"`decisions` and `keep` must be boolean arrays; found {dec.dtype} and {k.dtype}"
        )
    if dec.ndim != 2 or dec.shape != k.shape:
        raise ValueError(
            f"`decisions` and `keep` must be 2-D of the same shape; found {dec.shape} and {k.shape}"
        )
    if fit not in _FITS:
        raise ValueError(f"`fit` must be one of {_FITS}; found {fit!r}")
    n_models, n_targets = dec.shape
    n1 = k.sum(axis=0)
    n0 = n_models - n1
    if (n1 < 1).any() or (n0 < 1).any():
        raise ValueError("`keep`: every target needs at least one IN and one OUT model")
    fp_y = dec & ~k
    fn_y = ~dec & k
    fp = fp_y.sum(axis=0)
    fn = fn_y.sum(axis=0)

    # -- FP within: spread of the targets' counts around the pooled rate ------------------------
    p_fp = fp.sum() / n0.sum()
    v_fp = (n0 * p_fp * (1 - p_fp)).sum()
    if n_targets > 1 and v_fp > 0:
        fp_within = float(((fp - n0 * p_fp) ** 2).sum() / v_fp * n_targets / (n_targets - 1))
    else:
        fp_within = 1.0

    # -- FN within: the design formula, target by target -----------------------------------------
    beta = (fn + 0.5) / (n1 + 1.0)
    if threshold_var is None:
        z = special.ndtri(1.0 - np.clip(p_fp, 1e-6, 0.5))
        v_t = (1.0 + 0.5 * z * z) / n0
    else:
        v_t = np.broadcast_to(np.asarray(threshold_var, dtype=np.float64), (n_targets,))
        if not (np.isfinite(v_t).all() and (v_t >= 0).all()):
            raise ValueError("`threshold_var` must be finite and >= 0")
    dens = np.exp(-0.5 * special.ndtri(beta) ** 2) / math.sqrt(2 * math.pi)
    d_fn = 1.0 + (n1 - 1) * dens**2 * v_t / (beta * (1 - beta))
    w_fn = _binomial_weights(fn, n1)
    fn_within = float((d_fn * w_fn).sum() / w_fn.sum()) if w_fn.sum() > 0 else 1.0

    # -- per-model effect -----------------------------------------------------------------------
    terms = {}
    for side, y, cell, cnt, n in (("fp", fp_y, ~k, fp, n0), ("fn", fn_y, k, fn, n1)):
        ee_m, ee, pairs = _side_terms(y, cell, cnt, n)
        disp = ee_m / ee if ee > 0 else 1.0
        cov = (ee_m - ee) / pairs if pairs > 0 else 0.0  # same model, two targets
        terms[side] = (disp, max(cov, 0.0), pairs)
    w_fp = _binomial_weights(fp, n0)
    if fit == "fixed":
        fp_between = terms["fp"][1] * terms["fp"][2] / max(w_fp.sum(), 1e-300)
        fn_between = terms["fn"][1] * terms["fn"][2] / max(w_fn.sum(), 1e-300)
    else:
        # FP: the leave-one-out fits absorb the shift exactly (to first order): no excess.
        fp_between = 0.0
        # FN: the shift of the target's IN models minus the mean shift of its OUT fit; summed
        # over targets it is sum_m a_m w_m with w_m = N_in_m - sum_{t OUT in m} n1_t / n0_t;
        # the within-target part of it is already in fn_within.
        w_m = k.sum(axis=1) - np.where(~k, n1 / n0, 0.0).sum(axis=1)
        within = (n1.astype(float) ** 2 * (1.0 / n1 + 1.0 / n0)).sum()
        fn_between = terms["fn"][1] * float((w_m**2).sum() - within) / max(w_fn.sum(), 1e-300)

    # -- per-model mean score spread (descriptive) ----------------------------------------------
    sd = sd_exp = float("nan")
    if scores is not None:
        x = np.asarray(scores, dtype=np.float64)
        if x.shape != dec.shape:
            raise ValueError(f"`scores` must have shape {dec.shape}; found {x.shape}")
        m_in = np.where(k, x, 0.0).sum(axis=0) / n1
        m_out = np.where(~k, x, 0.0).sum(axis=0) / n0
        r = x - np.where(k, m_in, m_out)
        per_model = r.mean(axis=1)
        if n_models > 1:
            sd = float(per_model.std(ddof=1))
            sd_exp = (
                float(math.sqrt((r * r).sum() / (n_models * n_targets - 2 * n_targets) / n_targets))
                if n_models > 2
                else float("nan")
            )
    return DependenceDiagnostic(
        fp_within=fp_within,
        fn_within=fn_within,
        fp_between=float(fp_between),
        fn_between=float(fn_between),
        fp_model_dispersion=float(terms["fp"][0]),
        fn_model_dispersion=float(terms["fn"][0]),
        model_score_sd=sd,
        model_score_sd_expected=sd_exp,
        n_models=int(n_models),
        n_targets=int(n_targets),
        fit=fit,
    )


def warn_if_dependent(diag: DependenceDiagnostic, stacklevel: int = 3) -> None:
    """Raise a :class:`~bayes_dp.core.exceptions.DependenceWarning` when ``diag.dependent``."""
    if diag.dependent:
        warnings.warn(
            DependenceWarning(
                f"{diag.sentence()}: a binomial posterior of these counts is optimistic (its "
                "intervals too narrow); use mia.effective_counts(...) or a likelihood that "
                "models the dependence",
                info_ratio=diag.info_ratio,
                fp_design_effect=diag.fp_design_effect,
                fn_design_effect=diag.fn_design_effect,
            ),
            stacklevel=stacklevel,
        )


def effective_counts(counts: AttackCounts, dependence: DependenceDiagnostic) -> AttackCounts:
    """Deflate the counts by the design effect of each side (Kish's effective sample size).

    Every target's ``n_neg`` and ``fp`` are divided by the FP design effect and ``n_pos``,
    ``fn`` by the FN design effect, each at least 1 (never inflated), and rounded: ``n`` to
    the nearest integer >= 1, the error counts cumulatively over targets (the pooled error
    count keeps its deflated value to within 1, every target's is within 1 of its own).
    A binomial model of the deflated pooled counts has about the variance of the real ones;
    the per-target counts lose the same fraction of their information.

    Parameters
    ----------
    counts : bayes_dp.AttackCounts
        The counts (``ScoreMatrixCounts.counts``).
    dependence : DependenceDiagnostic
        Their diagnostic (``ScoreMatrixCounts.dependence``).

    Returns
    -------
    bayes_dp.AttackCounts

    Examples
    --------
    >>> d = DependenceDiagnostic(1.0, 2.0, 0.0, 0.0, 1.0, 1.0, float("nan"), float("nan"), 8, 1)
    >>> c = effective_counts(AttackCounts(fp=4, n_neg=32, fn=10, n_pos=32), d)
    >>> c.fp.tolist(), c.n_neg.tolist(), c.fn.tolist(), c.n_pos.tolist()
    ([4], [32], [5], [16])
    """
    if not isinstance(counts, AttackCounts):
        raise TypeError(f"`counts` must be an AttackCounts; found {type(counts).__name__}")
    if not isinstance(dependence, DependenceDiagnostic):
        raise TypeError(
            f"`dependence` must be a DependenceDiagnostic; found {type(dependence).__name__}"
        )

    def deflate(k, n, factor):
        factor = max(factor, 1.0)
        n_eff = np.maximum(np.rint(n / factor), 1).astype(np.int64)
        # cumulative rounding: the pooled error count keeps its value to within 1 and every
        # target's is within 1 of its share (rounding each target alone would bias small rates)
        cum = np.floor(np.cumsum(k * n_eff / n) + 1e-9)
        k_eff = np.diff(np.concatenate([[0.0], cum])).astype(np.int64)
        return np.clip(k_eff, 0, n_eff), n_eff

    fp, n_neg = deflate(counts.fp, counts.n_neg, dependence.fp_design_effect)
    fn, n_pos = deflate(counts.fn, counts.n_pos, dependence.fn_design_effect)
    return AttackCounts(fp=fp, n_neg=n_neg, fn=fn, n_pos=n_pos)
