"""Model inputs for a forecast: the features the dataset stage builds, cut into fixed-length windows.

The features themselves come from :func:`hydroseq.dataset.build_features` (the one owner, shared
with training); this module only picks each station's window ending at the issue step.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from hydroseq.dataset import run_length_so_far
from hydroseq.dataset.observed import newest_observed_step


def observation_age(target: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """``[station, len(ends)]``: grid steps from the newest observed target at or before each end step.

    0 when the target is observed at the end step itself; NaN when none is observed in the window.
    """
    newest = newest_observed_step(target, ends)
    return np.where(newest >= 0, ends[None, :] - newest, np.nan)


def observation_age_hours(target: np.ndarray, ends: np.ndarray, step: pd.Timedelta) -> np.ndarray:
    """float32 ``[station, len(ends)]``: :func:`observation_age` in hours of the grid ``step``."""
    return (observation_age(target, ends) * (step / pd.Timedelta(hours=1))).astype(np.float32)


def history_lengths(valid: np.ndarray, ends: np.ndarray, seq_len: int) -> np.ndarray:
    """``[station, len(ends)]``: valid steps ending at each end step, capped at ``seq_len``."""
    return np.minimum(run_length_so_far(valid)[:, ends], seq_len)


def gather_windows(features: np.ndarray, stations: np.ndarray, ends: np.ndarray, lengths: np.ndarray,
                   seq_len: int) -> np.ndarray:
    """Right-padded ``x [rows, seq_len, F]``: row i holds steps ``ends[i]-lengths[i]+1 .. ends[i]``.

    Padding steps are zero. ``stations``, ``ends`` and ``lengths`` are 1-D of equal size.
    """
    _n_stations, n_steps, n_features = features.shape
    flat = np.concatenate([features.reshape(-1, n_features), np.zeros((1, n_features), np.float32)])
    inside = np.arange(seq_len) < lengths[:, None]
    first = stations * n_steps + ends - lengths + 1
    rows = np.where(inside, first[:, None] + np.arange(seq_len), len(flat) - 1)
    x = np.empty((len(stations), seq_len, n_features), dtype=np.float32)
    np.take(flat, rows, axis=0, out=x)
    return x
