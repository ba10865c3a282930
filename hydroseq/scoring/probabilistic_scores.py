"""Per-station verification of a quantile forecast against its baselines and flood thresholds.

One function serves ``hydroseq evaluate`` (training stage) and the hindcast (forecast stage). CRPS
is computed on the forecast's own quantile levels for the model and the climatological distribution
alike (:func:`hydroseq.scoring.verification.crps_quantiles`), so the two are on one scale; persistence is a
point forecast, whose CRPS on symmetric levels is its absolute error (scored the same way).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from hydroseq.scoring.quantiles import central_interval_levels, coverage_by_station, exceedance_probability, pit
from hydroseq.scoring.thresholds import StationThresholds
from hydroseq.scoring.verification import (
    brier_score,
    brier_skill_score,
    contingency_scores,
    crps_quantiles,
    reliability_table,
)

WARNING_PROBABILITY = 0.5  # a warning is "issued" when the exceedance probability reaches this
RELIABILITY_LEVEL = "2-year"  # the threshold whose reliability diagram evaluate and the hindcast draw


@dataclass
class ProbabilisticScores:
    """What :func:`score_quantile_forecast` returns for one lead.

    Attributes
    ----------
    stations
        One row per station: ``crps``, ``crps_climatology``, ``crps_persistence``,
        ``crpss_climatology``, ``crpss_persistence``, ``coverage50``, ``coverage90``, and per threshold
        level L: ``brier_<L>``, ``bss_<L>`` (against the station's training-period frequency),
        ``events_<L>``, and ``pod_<L>``, ``far_<L>``, ``csi_<L>`` of a warning issued at
        :data:`WARNING_PROBABILITY`.
    pooled
        Scores over all stations and steps together: ``brier_<L>``, ``bss_<L>``, ``pod_<L>``,
        ``far_<L>``, ``csi_<L>``, ``events_<L>``.
    pit
        Every PIT value (for the histogram).
    reliability
        ``{threshold level: reliability table}`` pooled over stations.
    """

    stations: pd.DataFrame
    pooled: dict[str, float]
    pit: np.ndarray
    reliability: dict[str, pd.DataFrame] = field(default_factory=dict)


def score_quantile_forecast(quantiles: np.ndarray, levels: tuple[float, ...], obs: np.ndarray,
                            climatology: np.ndarray, persistence: np.ndarray, station_ids: list[str],
                            thresholds: StationThresholds | None = None,
                            base_rates: np.ndarray | None = None) -> ProbabilisticScores:
    """Score ``quantiles [S, T, K]`` at ``levels`` against ``obs [S, T]`` on the steps where both exist.

    ``climatology [S, T, K]`` is the climatological distribution on the same levels,
    ``persistence [S, T]`` a point forecast. ``thresholds`` (for ``station_ids``) give the events;
    ``base_rates [S, level]`` the training-period frequency of each event, the reference of the
    Brier skill score.
    """
    scored = np.isfinite(obs) & np.isfinite(quantiles).all(axis=-1)
    obs = np.where(scored, obs, np.nan)
    crps = _station_mean(crps_quantiles(quantiles, levels, obs))
    crps_climatology = _station_mean(crps_quantiles(climatology, levels, obs))
    crps_persistence = _station_mean(np.abs(persistence - obs))
    with np.errstate(invalid="ignore", divide="ignore"):  # a reference with zero CRPS: skill undefined
        skill_climatology, skill_persistence = 1 - crps / crps_climatology, 1 - crps / crps_persistence
    rows = pd.DataFrame({"station": station_ids, "crps": crps, "crps_climatology": crps_climatology,
                         "crps_persistence": crps_persistence,
                         "crpss_climatology": skill_climatology, "crpss_persistence": skill_persistence,
                         "coverage50": _coverage(quantiles, levels, obs, 0.5),
                         "coverage90": _coverage(quantiles, levels, obs, 0.9)})
    pooled: dict[str, float] = {}
    reliability = {}
    if thresholds is not None:
        for k, level in enumerate(thresholds.levels):
            threshold = thresholds.values[:, k][:, None]
            known = np.isfinite(threshold[:, 0])
            valid = known[:, None] & scored
            probability = np.where(valid, exceedance_probability(quantiles, levels, threshold), np.nan)
            event = np.where(valid, obs > threshold, np.nan)
            reference = np.broadcast_to(base_rates[:, k][:, None] if base_rates is not None else np.nan, obs.shape)
            rows[f"brier_{level}"] = [brier_score(probability[s], event[s]) for s in range(len(station_ids))]
            rows[f"bss_{level}"] = [brier_skill_score(probability[s], event[s], reference[s])
                                    for s in range(len(station_ids))]
            rows[f"events_{level}"] = np.nansum(event, axis=1)
            by_station = [contingency_scores(probability[s][valid[s]] >= WARNING_PROBABILITY, event[s][valid[s]] > 0)
                          for s in range(len(station_ids))]
            for name in ("pod", "far", "csi"):
                rows[f"{name}_{level}"] = [float(scores[name]) for scores in by_station]
            pooled[f"brier_{level}"] = brier_score(probability[known], event[known])
            pooled[f"bss_{level}"] = brier_skill_score(probability[known], event[known], reference[known])
            pooled[f"events_{level}"] = float(np.nansum(event[known]))
            warned = contingency_scores(probability[valid] >= WARNING_PROBABILITY, event[valid] > 0)
            pooled.update({f"{name}_{level}": float(warned[name]) for name in ("pod", "far", "csi")})
            reliability[level] = reliability_table(probability[valid], event[valid])
    pit_values = pit(quantiles, levels, obs)
    return ProbabilisticScores(rows, pooled, pit_values[np.isfinite(pit_values)], reliability)


def event_base_rates(target: np.ndarray, thresholds: StationThresholds) -> np.ndarray:
    """``[station, level]``: how often each station's ``target [S, T]`` exceeded each threshold (NaN skipped).

    Pass the training period: it is the climatological probability the Brier skill score compares with.
    """
    rates = np.full(thresholds.values.shape, np.nan)
    finite = np.isfinite(target)
    counts = finite.sum(axis=1)
    for k in range(len(thresholds.levels)):
        exceed = (target > thresholds.values[:, k][:, None]) & finite
        with np.errstate(invalid="ignore", divide="ignore"):
            rates[:, k] = np.where((counts > 0) & np.isfinite(thresholds.values[:, k]), exceed.sum(axis=1) / counts,
                                   np.nan)
    return rates


def _coverage(quantiles: np.ndarray, levels: tuple[float, ...], obs: np.ndarray, central: float) -> np.ndarray:
    """Each station's coverage of the ``central`` interval; NaN when the model has not both of its levels."""
    try:
        central_interval_levels(levels, central)
    except ValueError:
        return np.full(obs.shape[0], np.nan)
    return coverage_by_station(quantiles, levels, obs, central)


def _station_mean(values: np.ndarray) -> np.ndarray:
    counts = np.isfinite(values).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, np.nansum(values, axis=1) / counts, np.nan)
