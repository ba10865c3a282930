"""Per-station scores of a split prediction, and the summaries printed and logged from them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from hydroseq.scoring import metrics
from hydroseq.scoring.peak_metrics import missed_window, timing_window

SCORE_COLUMNS = ["nse", "kge", "r", "alpha", "beta", "beta_nse", "fhv", "fms", "flv", "peak_timing", "missed_peaks",
                 "peak_mape", "rmse", "bias", "n"]
# Summarised by their median only (in the summary file, not MLflow's metrics): the diagnostic metrics of the fit.
SIGNATURE_COLUMNS = ("r", "alpha", "beta_nse", "fhv", "fms", "flv", "peak_timing", "missed_peaks", "peak_mape")
DAY = dt.timedelta(days=1)


def score_stations(obs: np.ndarray, sim: np.ndarray, station_ids: Sequence[str], step: dt.timedelta = DAY
                   ) -> pd.DataFrame:
    """One row per station with :func:`hydroseq.scoring.metrics.all_metrics` of ``obs``/``sim [station, time]``.

    ``step`` (the grid step) sets the peak windows: :func:`hydroseq.scoring.peak_metrics.timing_window`.
    """
    windows = {"timing_window": timing_window(step), "missed_window": missed_window(step)}
    rows = [metrics.all_metrics(obs[i], sim[i], **windows) for i in range(len(station_ids))]
    frame = pd.DataFrame(rows, columns=SCORE_COLUMNS)
    frame.insert(0, "station", list(station_ids))
    return frame


def summarise(scores: pd.DataFrame, columns: Sequence[str] = ("nse", "kge", "rmse", "bias"),
              statistics: Sequence[str] = ("median", "mean")) -> dict[str, float]:
    """Median and/or mean over stations of each column, as ``{"median_nse": ..., "mean_nse": ...}`` (NaN skipped)."""
    functions: dict[str, Callable[[np.ndarray], np.floating]] = {"median": np.median, "mean": np.mean}
    summary: dict[str, float] = {}
    for column in columns:
        values = scores[column].to_numpy(dtype=np.float64)
        finite = values[np.isfinite(values)]
        for name in statistics:
            summary[f"{name}_{column}"] = float(functions[name](finite)) if finite.size else float("nan")
    return summary


def scaled_mse(sim_scaled: np.ndarray, obs_scaled: np.ndarray) -> float:
    """MSE over the pairs where both are finite, in the scaled units the training loss sees.

    ``obs_scaled`` is broadcast to the shape of ``sim_scaled`` (one observed series serves every lead).
    """
    obs_scaled = np.broadcast_to(obs_scaled, sim_scaled.shape)
    valid = np.isfinite(sim_scaled) & np.isfinite(obs_scaled)
    return float(np.mean((sim_scaled[valid] - obs_scaled[valid]) ** 2)) if valid.any() else float("nan")
