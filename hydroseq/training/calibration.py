"""Calibrating a quantile model's spread on the validation period, after training.

A network trained with the pinball loss, and more so the mean of several, can be too wide or too
narrow out of sample. For each lead and level the distance of the quantile from the median is
multiplied by one factor, chosen so that on the validation period (pooled over stations) the
observation falls below the calibrated quantile at the level's own frequency; the median (the
point forecast) is untouched. Factors are made non-decreasing outwards from the median so the
quantiles stay ordered (an outer level is then at least as wide, relative to its distance, as the
one inside it). The test period never feeds it.
"""

from __future__ import annotations

import numpy as np

from hydroseq.training.predict import SplitPrediction

SCALE_RANGE = (0.05, 20.0)
BISECTION_STEPS = 60


def fit_quantile_scale(prediction: SplitPrediction) -> np.ndarray:
    """``[lead, level]`` factors for the spread of ``prediction``'s quantiles (1 at the median)."""
    assert prediction.quantiles is not None and prediction.quantile_levels is not None
    levels = prediction.quantile_levels
    middle = levels.index(0.5)
    scale = np.ones((len(prediction.leads), len(levels)))
    for row in range(len(prediction.leads)):
        quantiles = prediction.quantiles[row]
        scored = np.isfinite(prediction.obs) & np.isfinite(quantiles).all(axis=-1)
        obs, median = prediction.obs[scored], quantiles[scored][:, middle]
        for k, level in enumerate(levels):
            if k != middle:
                scale[row, k] = _factor(obs, median, quantiles[scored][:, k] - median, level)
        scale[row, middle + 1:] = np.maximum.accumulate(scale[row, middle + 1:])
        scale[row, :middle] = np.maximum.accumulate(scale[row, :middle][::-1])[::-1]
    return scale


def _factor(obs: np.ndarray, median: np.ndarray, distance: np.ndarray, level: float) -> float:
    """The factor c at which the observations fall below ``max(median + c * distance, 0)`` at ``level``'s
    frequency, by bisection (the frequency is monotone in c)."""
    if obs.size == 0:
        return 1.0
    low, high = SCALE_RANGE
    upper_level = level > 0.5  # then the frequency grows with c; below the median it shrinks

    def frequency(c: float) -> float:  # below a lower quantile means strictly below (zero flow on a zero quantile
        bound = np.maximum(median + c * distance, 0.0)  # is inside the interval, as in the coverage)
        return float(np.mean(obs <= bound if upper_level else obs < bound))
    for _ in range(BISECTION_STEPS):
        middle = 0.5 * (low + high)
        too_narrow = frequency(middle) < level if upper_level else frequency(middle) > level
        low, high = (middle, high) if too_narrow else (low, middle)
    return 0.5 * (low + high)
