"""What a forecast needs to know of each station's history at its issue steps: how long and how old.

The features come from :func:`hydroseq.dataset.build_features` and the windows are cut by
:mod:`hydroseq.dataset.window` (the owners, shared with training).
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
