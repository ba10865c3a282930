"""The newest observation at or before a step: what a gauge last reported (numpy only).

The model's inputs (the observation age), the forecast's features and the operator's persistence
forecast all read the gauge through it, so "last reading" means one thing everywhere.
"""

from __future__ import annotations

import numpy as np


def newest_observed_step(target: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """``[station, len(ends)]``: the step of the newest finite ``target`` at or before each end step (-1: none)."""
    steps = np.arange(target.shape[1])
    return np.maximum.accumulate(np.where(np.isfinite(target), steps, -1), axis=1)[:, ends]


def newest_observed(target: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """``[station, len(ends)]``: the newest finite ``target`` value at or before each step of ``ends``.

    What an operator's persistence forecast uses at an issue step: the last reading the gauge sent,
    however old within ``target`` (NaN when there is none). Nothing after an end step is read.
    """
    newest = newest_observed_step(target, ends)
    values = np.take_along_axis(target, np.maximum(newest, 0), axis=1)
    return np.where(newest >= 0, values, np.nan)
