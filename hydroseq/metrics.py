"""Goodness-of-fit metrics for one station's simulated vs observed series (numpy only).

Every function takes ``obs`` and ``sim`` as 1-D arrays of the same length and ignores the time steps
where either value is NaN (missing observations are skipped, never filled). A metric that is not
defined for the remaining values (no valid pair, or a constant observed series for NSE / KGE's
alpha and r) is NaN rather than an error, so one bad station does not stop an evaluation.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray


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


def kge(obs: ArrayLike, sim: ArrayLike) -> KGE:
    """Kling-Gupta efficiency ``1 - sqrt((r-1)^2 + (alpha-1)^2 + (beta-1)^2)``.

    ``r`` is the Pearson correlation, ``alpha = std(sim) / std(obs)`` (population std), ``beta =
    mean(sim) / mean(obs)``. Components that are undefined (constant series, zero mean) are NaN,
    and so is the KGE then.
    """
    o, s = valid_pairs(obs, sim)
    if o.size < 2:
        return KGE(math.nan, math.nan, math.nan, math.nan)
    std_o, std_s = float(o.std()), float(s.std())
    mean_o, mean_s = float(o.mean()), float(s.mean())
    r = float(np.mean((o - mean_o) * (s - mean_s)) / (std_o * std_s)) if std_o > 0 and std_s > 0 else math.nan
    alpha = std_s / std_o if std_o > 0 else math.nan
    beta = mean_s / mean_o if mean_o != 0 else math.nan
    value = 1.0 - math.sqrt((r - 1.0) ** 2 + (alpha - 1.0) ** 2 + (beta - 1.0) ** 2)
    return KGE(value, r, alpha, beta)


def rmse(obs: ArrayLike, sim: ArrayLike) -> float:
    """Root mean squared error, in the units of the series. NaN without valid pairs."""
    o, s = valid_pairs(obs, sim)
    return float(np.sqrt(np.mean((s - o) ** 2))) if o.size else math.nan


def bias(obs: ArrayLike, sim: ArrayLike) -> float:
    """Mean error ``mean(sim - obs)`` in the units of the series (positive: overestimation)."""
    o, s = valid_pairs(obs, sim)
    return float(np.mean(s - o)) if o.size else math.nan


def all_metrics(obs: ArrayLike, sim: ArrayLike) -> dict[str, float]:
    """Every metric of this module for one series: nse, kge, r, alpha, beta, rmse, bias, n."""
    k = kge(obs, sim)
    o, _ = valid_pairs(obs, sim)
    return {"nse": nse(obs, sim), "kge": k.kge, "r": k.r, "alpha": k.alpha, "beta": k.beta,
            "rmse": rmse(obs, sim), "bias": bias(obs, sim), "n": float(o.size)}
