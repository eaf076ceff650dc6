"""Prediction-powered inference (PPI++): a mean from a few human labels and many judge labels, with its interval,
and the number of human labels a target interval width needs.

The conventions of :mod:`assay.metrics.stats` hold here: 1-d per-item arrays, ``NaN`` = unscored and dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assay.metrics._errors import MetricError
from assay.metrics.stats import FloatArray, _as_1d, norm_ppf

__all__ = ["PPIResult", "ppi_mean", "ppi_sample_size"]


@dataclass(frozen=True)
class PPIResult:
    """A prediction-powered estimate of a mean beside the classical (human-only) one; see :func:`ppi_mean`."""

    estimate: float
    low: float
    high: float
    lambda_: float
    n_labeled: int
    n_unlabeled: int
    classical_low: float
    classical_high: float
    classical_estimate: float


def _ppi_lambda(s_yy_hat: float, s_hat: float, s_unlabeled: float, n: int, n_unlabeled: int) -> float:
    """Power-tuned lambda: the minimizer over [0, 1] of the estimated variance (see :func:`ppi_mean`)."""
    if n_unlabeled == 0:
        return 0.0
    denom = s_hat / n + s_unlabeled / n_unlabeled
    if denom <= 0:
        return 0.0
    return min(max((s_yy_hat / n) / denom, 0.0), 1.0)


def ppi_mean(
    y: npt.ArrayLike,
    yhat: npt.ArrayLike,
    yhat_unlabeled: npt.ArrayLike,
    *,
    confidence: float = 0.95,
    lambda_: float | None = None,
) -> PPIResult:
    """Prediction-powered estimate of a mean with the power-tuned lambda (PPI++, Angelopoulos, Duchi, Zrnic 2023).

    Inputs: human labels ``y`` and judge predictions ``yhat`` on the same n audited items, and judge predictions
    ``yhat_unlabeled`` on the N other items. With sample variances s (ddof = 1):

        theta(lambda)   = lambda * mean(yhat_u) + mean(y - lambda * yhat)
        var(lambda)     = s^2(y - lambda * yhat) / n + lambda^2 s^2(yhat_u) / N
                        = [s_yy - 2 lambda s_y,yhat + lambda^2 s_yhat,yhat] / n + lambda^2 s_u / N
        lambda (tuned)  = clip( (s_y,yhat / n) / (s_yhat,yhat / n + s_u / N), 0, 1 )
        interval        = theta -+ Phi^-1((1 + confidence) / 2) * sqrt(var)

    The tuned lambda minimizes the estimated variance exactly; when the two prediction variances agree it is the
    paper's Cov(Y, Yhat) / ((1 + n/N) Var(Yhat)). Since lambda = 0 (the classical human-only interval,
    mean(y) -+ z s_y / sqrt(n)) is inside [0, 1], the PPI interval is never wider than the classical one on the same
    data. ``lambda_`` fixes lambda instead (1.0 is plain PPI). Edge cases: pairs with a NaN side and NaN unlabeled
    predictions are dropped; N = 0 forces lambda = 0; constant predictions give lambda = 0; fewer than two audited
    pairs give NaN everywhere (no variance can be estimated).
    """
    labels, preds = _paired_arrays(y, yhat)
    unlabeled = _as_1d(yhat_unlabeled, "yhat_unlabeled")
    unlabeled = unlabeled[~np.isnan(unlabeled)]
    n, n_unl = labels.size, unlabeled.size
    if n < 2:
        nan = math.nan
        return PPIResult(nan, nan, nan, nan, n, n_unl, nan, nan, nan)
    cov = np.cov(labels, preds, ddof=1)
    s_unl = float(np.var(unlabeled, ddof=1)) if n_unl >= 2 else 0.0
    lam = _ppi_lambda(float(cov[0, 1]), float(cov[1, 1]), s_unl, n, n_unl) if lambda_ is None else float(lambda_)
    if n_unl == 0 and lam != 0.0:
        raise MetricError("ppi_mean needs judge predictions on unlabeled items for lambda != 0; pass lambda_=0.0")
    z = norm_ppf((1.0 + confidence) / 2.0)
    estimate = float(np.mean(labels - lam * preds)) + (lam * float(np.mean(unlabeled)) if n_unl else 0.0)
    variance = (cov[0, 0] - 2 * lam * cov[0, 1] + lam**2 * cov[1, 1]) / n + (lam**2 * s_unl / n_unl if n_unl else 0.0)
    half = z * math.sqrt(max(float(variance), 0.0))
    classical = float(labels.mean())
    classical_half = z * math.sqrt(float(cov[0, 0]) / n)
    return PPIResult(
        estimate, estimate - half, estimate + half, lam, n, n_unl,
        classical - classical_half, classical + classical_half, classical,
    )  # fmt: skip


def _paired_arrays(y: npt.ArrayLike, yhat: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    labels, preds = _as_1d(y, "y"), _as_1d(yhat, "yhat")
    if labels.shape != preds.shape:
        raise MetricError(f"y and yhat must be paired (same length), got {labels.size} and {preds.size}")
    keep = ~(np.isnan(labels) | np.isnan(preds))
    return labels[keep], preds[keep]


def _ppi_variance(n: int, sd_human: float, sd_judge: float, correlation: float, n_unlabeled: int | None) -> float:
    """Variance of the PPI++ estimate with n audited items, at the lambda that minimizes it over [0, 1]."""
    ratio = n / n_unlabeled if n_unlabeled else 0.0  # None (unlimited) or 0 judge-only items: no ratio
    if n_unlabeled == 0 or sd_judge == 0:
        lam = 0.0
    else:
        lam = min(max(correlation * sd_human / (sd_judge * (1.0 + ratio)), 0.0), 1.0)
    cross = 2 * lam * correlation * sd_human * sd_judge
    unlabeled_term = 0.0 if not n_unlabeled else lam**2 * sd_judge**2 / n_unlabeled
    return (sd_human**2 - cross + lam**2 * sd_judge**2) / n + unlabeled_term


def ppi_sample_size(
    target_half_width: float,
    *,
    sd_human: float,
    sd_judge: float,
    correlation: float,
    n_unlabeled: int | None,
    confidence: float = 0.95,
    max_n: int = 10**9,
) -> int:
    """Smallest number n of audited items whose PPI++ interval half-width reaches ``target_half_width``.

    Pilot estimates: ``sd_human`` = sd of human labels, ``sd_judge`` = sd of judge predictions, ``correlation``
    = their correlation on the audited pilot (e.g. ``np.std(y, ddof=1)``, ``np.corrcoef(y, yhat)[0, 1]``), and
    ``n_unlabeled`` = N judge-only items (``None`` for unlimited). For each n the variance is

        V(n) = [sd_h^2 - 2 lambda rho sd_h sd_j + lambda^2 sd_j^2] / n + lambda^2 sd_j^2 / N,
        lambda = clip(rho sd_h / (sd_j (1 + n/N)), 0, 1),

    which decreases in n; the answer is the least n >= 2 with Phi^-1((1 + confidence)/2) sqrt(V(n)) <= target.
    With N = infinity and rho inside [0, sd_j / sd_h] this is n = z^2 sd_h^2 (1 - rho^2) / target^2. ``correlation=0``
    gives the classical human-only sample size z^2 sd_h^2 / target^2.
    """
    if target_half_width <= 0 or sd_human < 0 or sd_judge < 0 or not -1.0 <= correlation <= 1.0:
        raise MetricError(
            "ppi_sample_size needs target_half_width > 0, standard deviations >= 0 and -1 <= correlation <= 1; got "
            f"{target_half_width}, {sd_human}, {sd_judge}, {correlation}"
        )
    z = norm_ppf((1.0 + confidence) / 2.0)

    def reached(n: int) -> bool:
        return z * math.sqrt(_ppi_variance(n, sd_human, sd_judge, correlation, n_unlabeled)) <= target_half_width

    high = 2
    while not reached(high):
        if high >= max_n:
            raise MetricError(f"more than max_n={max_n} audited items would be needed for +-{target_half_width}")
        high = min(high * 2, max_n)
    low = high // 2
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if reached(mid) else (mid, high)
    return high
