"""Per-station scores of a split prediction, and the summaries printed and logged from them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from hydroseq import metrics

SCORE_COLUMNS = ["nse", "kge", "r", "alpha", "beta", "rmse", "bias", "n"]


def score_stations(obs: np.ndarray, sim: np.ndarray, station_ids: Sequence[str]) -> pd.DataFrame:
    """One row per station with :func:`hydroseq.metrics.all_metrics` of ``obs``/``sim [station, time]``."""
    rows = [metrics.all_metrics(obs[i], sim[i]) for i in range(len(station_ids))]
    frame = pd.DataFrame(rows, columns=SCORE_COLUMNS)
    frame.insert(0, "station", list(station_ids))
    return frame


def summarise(scores: pd.DataFrame, columns: Sequence[str] = ("nse", "kge", "rmse", "bias")) -> dict[str, float]:
    """Median and mean over stations of each column, as ``{"median_nse": ..., "mean_nse": ...}`` (NaN skipped)."""
    summary: dict[str, float] = {}
    for column in columns:
        values = scores[column].to_numpy(dtype=np.float64)
        finite = values[np.isfinite(values)]
        summary[f"median_{column}"] = float(np.median(finite)) if finite.size else float("nan")
        summary[f"mean_{column}"] = float(np.mean(finite)) if finite.size else float("nan")
    return summary


def scaled_mse(sim_scaled: np.ndarray, obs_scaled: np.ndarray) -> float:
    """MSE over the pairs where both are finite, in the scaled units the training loss sees.

    ``obs_scaled`` is broadcast to the shape of ``sim_scaled`` (one observed series serves every lead).
    """
    obs_scaled = np.broadcast_to(obs_scaled, sim_scaled.shape)
    valid = np.isfinite(sim_scaled) & np.isfinite(obs_scaled)
    return float(np.mean((sim_scaled[valid] - obs_scaled[valid]) ** 2)) if valid.any() else float("nan")
