"""Goodness-of-fit metrics for one station's simulated vs observed series (numpy only, peaks with scipy).

Every function takes ``obs`` and ``sim`` as 1-D arrays of the same length and ignores the time steps
where either value is NaN (missing observations are skipped, never filled). A metric that is not
defined for the remaining values (no valid pair, or a constant observed series for NSE / KGE's
alpha and r) is NaN rather than an error, so one bad station does not stop an evaluation.

The flow-duration-curve biases (:func:`fdc_fhv`, :func:`fdc_fms`, :func:`fdc_flv`; Yilmaz et al.
2008) and the NSE decomposition (:func:`alpha_nse`, :func:`beta_nse`; Gupta et al. 2009) follow
NeuralHydrology's definitions, percentages included, so that the numbers compare with published
ones; the peak metrics live in :mod:`hydroseq.scoring.peak_metrics`, the signatures of a single series
in :mod:`hydroseq.scoring.signatures`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from hydroseq.scoring.peak_metrics import mean_peak_timing, missed_peaks, peak_mape

# What NeuralHydrology puts in place of zero flows before taking logs (and adds to log denominators).
LOG_FLOOR = 1e-6


class KGE(NamedTuple):
    """Kling-Gupta efficiency (Gupta et al. 2009) and its three components."""

    kge: float
    r: float
    alpha: float
    beta: float


def valid_pairs(obs: ArrayLike, sim: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The (obs, sim) values at the steps where both are finite, as float64.

    Raises
    ------
    ValueError
        If the two series differ in shape.
    """
    obs_arr = np.asarray(obs, dtype=np.float64).ravel()
    sim_arr = np.asarray(sim, dtype=np.float64).ravel()
    if obs_arr.shape != sim_arr.shape:
        raise ValueError(f"obs has {obs_arr.size} values but sim has {sim_arr.size}")
    keep = np.isfinite(obs_arr) & np.isfinite(sim_arr)
    return obs_arr[keep], sim_arr[keep]


def nse(obs: ArrayLike, sim: ArrayLike) -> float:
    """Nash-Sutcliffe efficiency: ``1 - sum((sim - obs)^2) / sum((obs - mean(obs))^2)``.

    1 is a perfect fit, 0 is as good as the observed mean of the same period, negative is worse.
    NaN when fewer than two valid pairs or the observations are constant.
    """
    o, s = valid_pairs(obs, sim)
    if o.size < 2:
        return math.nan
    denominator = float(np.sum((o - o.mean()) ** 2))
    if denominator == 0.0:
        return math.nan
    return 1.0 - float(np.sum((s - o) ** 2)) / denominator


def pearson_r(obs: ArrayLike, sim: ArrayLike) -> float:
    """Pearson correlation of the valid pairs; NaN with fewer than two pairs or a constant series."""
    o, s = valid_pairs(obs, sim)
    std_o, std_s = (float(o.std()), float(s.std())) if o.size >= 2 else (0.0, 0.0)
    if std_o == 0.0 or std_s == 0.0:
        return math.nan
    return float(np.mean((o - o.mean()) * (s - s.mean())) / (std_o * std_s))


def alpha_nse(obs: ArrayLike, sim: ArrayLike) -> float:
    """``std(sim) / std(obs)`` (population std; Gupta et al. 2009): 1 is the observed variability.

    The same number as KGE's alpha. NaN with fewer than two pairs or constant observations.
    """
    o, s = valid_pairs(obs, sim)
    std_o = float(o.std()) if o.size >= 2 else 0.0
    return float(s.std()) / std_o if std_o > 0 else math.nan


def beta_nse(obs: ArrayLike, sim: ArrayLike) -> float:
    """``(mean(sim) - mean(obs)) / std(obs)`` (Gupta et al. 2009): the bias in observed standard deviations.

    0 is unbiased (KGE's beta, the mean ratio, is 1 then). NaN with fewer than two pairs or
    constant observations.
    """
    o, s = valid_pairs(obs, sim)
    std_o = float(o.std()) if o.size >= 2 else 0.0
    return (float(s.mean()) - float(o.mean())) / std_o if std_o > 0 else math.nan


def kge(obs: ArrayLike, sim: ArrayLike) -> KGE:
    """Kling-Gupta efficiency ``1 - sqrt((r-1)^2 + (alpha-1)^2 + (beta-1)^2)``.

    ``r`` is the Pearson correlation, ``alpha = std(sim) / std(obs)`` (population std), ``beta =
    mean(sim) / mean(obs)``. Components that are undefined (constant series, zero mean) are NaN,
    and so is the KGE then.
    """
    o, s = valid_pairs(obs, sim)
    if o.size < 2:
        return KGE(math.nan, math.nan, math.nan, math.nan)
    r, alpha = pearson_r(o, s), alpha_nse(o, s)
    mean_o = float(o.mean())
    beta = float(s.mean()) / mean_o if mean_o != 0 else math.nan
    value = 1.0 - math.sqrt((r - 1.0) ** 2 + (alpha - 1.0) ** 2 + (beta - 1.0) ** 2)
    return KGE(value, r, alpha, beta)


def _check_fraction(name: str, value: float) -> None:
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {value}")


def _log_fdc(values: NDArray[np.float64], floor_all: bool) -> NDArray[np.float64]:
    """The natural log of ``values`` sorted in descending order (the flow duration curve).

    Zeros become :data:`LOG_FLOOR` first, and with ``floor_all`` (simulations) negative values too;
    a negative observation has no log and makes the result NaN.
    """
    floored = np.where((values <= 0.0) if floor_all else (values == 0.0), LOG_FLOOR, values)
    with np.errstate(invalid="ignore"):
        return np.log(np.sort(floored)[::-1])


def fdc_fhv(obs: ArrayLike, sim: ArrayLike, h: float = 0.02) -> float:
    """High-flow bias of the flow duration curve in percent (Yilmaz et al. 2008).

    ``100 * sum(Qs_i - Qo_i) / sum(Qo_i)`` over the ``round(h * n)`` highest flows of each series,
    sorted separately (the top 2 % by default). Positive: the peak flows are too high; a simulation
    of ``1.1 * obs`` scores +10. NaN when ``h * n`` rounds to 0 or those observations sum to 0.
    """
    _check_fraction("h", h)
    o, s = valid_pairs(obs, sim)
    top = int(np.round(h * o.size))
    if top == 0:
        return math.nan
    observed = float(np.sort(o)[::-1][:top].sum())
    simulated = float(np.sort(s)[::-1][:top].sum())
    return 100.0 * (simulated - observed) / observed if observed != 0 else math.nan


def fdc_fms(obs: ArrayLike, sim: ArrayLike, lower: float = 0.2, upper: float = 0.7) -> float:
    """Bias of the slope of the flow duration curve's middle segment in percent (Yilmaz et al. 2008).

    With ``Q(p)`` the flow at exceedance fraction ``p`` of the descending FDC (position ``round(p * n)``):
    ``100 * ((log Qs(lower) - log Qs(upper)) - (log Qo(lower) - log Qo(upper))) / (log Qo(lower) -
    log Qo(upper) + 1e-6)``. Positive: the simulated mid-range flows vary too much. Zero flows are
    taken as 1e-6 (also negative simulated flows). NaN with too few pairs to reach ``upper``.
    """
    _check_fraction("lower", lower)
    _check_fraction("upper", upper)
    if lower >= upper:
        raise ValueError(f"lower ({lower}) must be below upper ({upper})")
    o, s = valid_pairs(obs, sim)
    i, j = int(np.round(lower * o.size)), int(np.round(upper * o.size))
    if j >= o.size:
        return math.nan
    log_o, log_s = _log_fdc(o, floor_all=False), _log_fdc(s, floor_all=True)
    slope_o, slope_s = log_o[i] - log_o[j], log_s[i] - log_s[j]
    return float(100.0 * (slope_s - slope_o) / (slope_o + LOG_FLOOR))


def fdc_flv(obs: ArrayLike, sim: ArrayLike, low: float = 0.3) -> float:
    """Low-flow bias of the flow duration curve in percent (Yilmaz et al. 2008).

    Over the ``round(low * n)`` lowest flows of each series (30 % by default), in logs:
    ``-100 * (sum(log Qs_i - log Qs_min) - sum(log Qo_i - log Qo_min)) / (sum(log Qo_i - log Qo_min)
    + 1e-6)``, the area between the low-flow segment and the minimum flow. Positive: the simulated
    low flows sit closer to their minimum than the observed ones (too flat a recession in logs).
    Zero flows are taken as 1e-6 (also negative simulated flows). NaN when ``low * n`` rounds to 0.
    """
    _check_fraction("low", low)
    o, s = valid_pairs(obs, sim)
    count = int(np.round(low * o.size))
    if count == 0:
        return math.nan
    log_o, log_s = _log_fdc(o, floor_all=False)[-count:], _log_fdc(s, floor_all=True)[-count:]
    area_o, area_s = float(np.sum(log_o - log_o.min())), float(np.sum(log_s - log_s.min()))
    return 100.0 * (area_o - area_s) / (area_o + LOG_FLOOR)


def rmse(obs: ArrayLike, sim: ArrayLike) -> float:
    """Root mean squared error, in the units of the series. NaN without valid pairs."""
    o, s = valid_pairs(obs, sim)
    return float(np.sqrt(np.mean((s - o) ** 2))) if o.size else math.nan


def bias(obs: ArrayLike, sim: ArrayLike) -> float:
    """Mean error ``mean(sim - obs)`` in the units of the series (positive: overestimation)."""
    o, s = valid_pairs(obs, sim)
    return float(np.mean(s - o)) if o.size else math.nan


def all_metrics(obs: ArrayLike, sim: ArrayLike, timing_window: int = 3, missed_window: int = 1) -> dict[str, float]:
    """Every metric of this module and :mod:`hydroseq.scoring.peak_metrics` for one series.

    Keys: nse, kge, r (Pearson), alpha (alpha-NSE, KGE's alpha), beta (KGE's mean ratio),
    beta_nse, fhv, fms, flv (percent), peak_timing (steps), missed_peaks (fraction), peak_mape (percent),
    rmse, bias, n.
    The windows are in steps (:func:`hydroseq.scoring.peak_metrics.timing_window` and
    :func:`~hydroseq.scoring.peak_metrics.missed_window` give NeuralHydrology's for a grid step; the
    defaults are those of a daily grid).
    """
    k = kge(obs, sim)
    o, _ = valid_pairs(obs, sim)
    return {"nse": nse(obs, sim), "kge": k.kge, "r": k.r, "alpha": k.alpha, "beta": k.beta,
            "beta_nse": beta_nse(obs, sim), "fhv": fdc_fhv(obs, sim), "fms": fdc_fms(obs, sim),
            "flv": fdc_flv(obs, sim), "peak_timing": mean_peak_timing(obs, sim, timing_window),
            "missed_peaks": missed_peaks(obs, sim, missed_window), "peak_mape": peak_mape(obs, sim),
            "rmse": rmse(obs, sim), "bias": bias(obs, sim), "n": float(o.size)}
