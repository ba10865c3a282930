"""A weather ensemble through the model: each member of the ensemble forecast drives the model once, and the
forecast combines the weather's spread with the model's own.

How they are combined (docs/forecast.md "Ensemble weather forecasts"):

- a model with a quantile head (one network or seed members): the forecast distribution is the equal-weight
  **mixture** of the model's distributions given each weather member, ``F(x) = mean_m F_m(x)``. A mixture
  keeps both sources of spread: the model's (each ``F_m``) and the weather's (how far apart the ``F_m``
  lie). Averaging the members' quantiles instead (what a seed ensemble does) would keep only the
  average width and lose the weather's spread. Each ``F_m`` is linear between its quantiles, with
  the mass below the lowest (above the highest) level at that quantile;
- a point model: every weather member's point forecast (each seed member's, for a seed ensemble) is a
  member of the forecast ensemble, and its quantiles are the ensemble's (:data:`ENSEMBLE_LEVELS`).

The members published (``realization``) are the weather members' point forecasts (their medians).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hydroseq.forecast.core import CoreForecast

ENSEMBLE_LEVELS = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)  # the probabilistic configs' levels
ROWS_PER_CHUNK = 4096


def weather_attributes(n_members: int) -> dict[str, str]:
    """Global attributes of the forecast files of a forecast driven by an ensemble weather forecast."""
    return {"weather_ensemble_members": str(n_members),
            "weather_ensemble_combination": "each weather member drove the model; quantiles of the equal-weight "
                                            "mixture of the model's distributions given each member (a point model: "
                                            "of the pooled member forecasts); realization: each weather member's "
                                            "point forecast"}


def combine_weather_members(cores: Sequence[CoreForecast], model_levels: Sequence[float]) -> tuple[np.ndarray,
                                                                                                    np.ndarray]:
    """The combined forecast ``[issue, station, lead, level]`` (levels: ``model_levels``, or
    :data:`ENSEMBLE_LEVELS` for a point model) and the weather members' point forecasts
    ``[issue, station, lead, member]``, from one core forecast per weather member."""
    if model_levels:
        stacked = np.stack([core.values for core in cores], axis=-2)  # [issue, station, lead, member, level]
        members = stacked[..., list(model_levels).index(0.5)]
        return mixture_quantiles(stacked, tuple(model_levels)), members
    members = np.stack([core.values for core in cores], axis=-1)
    pooled = np.concatenate([core.members if core.members is not None else core.values[..., None]
                             for core in cores], axis=-1)
    return ensemble_quantiles(pooled, ENSEMBLE_LEVELS), members


def ensemble_quantiles(points: np.ndarray, levels: Sequence[float]) -> np.ndarray:
    """``[..., level]`` quantiles (linear between order statistics) of the ensemble ``[..., member]``; NaN
    where any member is."""
    complete = np.isfinite(points).all(axis=-1)
    filled = np.where(complete[..., None], points, 0.0)
    quantiles = np.moveaxis(np.quantile(filled, np.asarray(levels), axis=-1), 0, -1)
    return np.where(complete[..., None], quantiles, np.nan).astype(np.float32)


def mixture_quantiles(member_quantiles: np.ndarray, levels: tuple[float, ...]) -> np.ndarray:
    """``[..., level]`` quantiles of the equal-weight mixture of the distributions ``[..., member, level]``
    (each given by its quantiles at ``levels``); NaN where any member's are."""
    shape = member_quantiles.shape
    rows = member_quantiles.reshape(-1, shape[-2], shape[-1]).astype(np.float64)
    out = np.full((len(rows), len(levels)), np.nan)
    complete = np.asarray(np.isfinite(rows).all(axis=(1, 2)))
    for first in range(0, len(rows), ROWS_PER_CHUNK):
        block = slice(first, first + ROWS_PER_CHUNK)
        ok = complete[block]
        if ok.any():
            out[block][ok] = _mixture_block(rows[block][ok], np.asarray(levels, dtype=np.float64))
    return out.reshape(*shape[:-2], len(levels)).astype(np.float32)


def _mixture_block(quantiles: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """``[row, member, level]`` -> ``[row, level]``: evaluate the mixture's CDF at every member quantile
    (its knots), then invert it linearly between them. The mass beyond the highest level lies just
    above the highest quantile, so the mixture of one distribution is that distribution."""
    quantiles = np.sort(quantiles, axis=-1)  # a quantile head never crosses; guard against rounding
    knots = np.sort(quantiles.reshape(len(quantiles), -1), axis=-1)  # [row, knot]
    x = knots[:, :, None, None]  # [row, knot, 1, 1]
    lower, upper = quantiles[:, None, :, :-1], quantiles[:, None, :, 1:]  # [row, 1, member, segment]
    width = np.where(upper > lower, upper - lower, 1.0)
    inside = np.clip((x - lower) / width, 0.0, 1.0)
    inside = np.where(upper > lower, inside, (x >= upper).astype(np.float64))
    cdf = levels[0] * (x[..., 0] >= quantiles[:, None, :, 0])  # [row, knot, member]
    cdf = cdf + (inside * np.diff(levels)[None, None, None, :]).sum(axis=-1)
    cdf = cdf + (1.0 - levels[-1]) * (x[..., 0] > quantiles[:, None, :, -1])
    mixture = cdf.mean(axis=-1)  # [row, knot], non-decreasing
    out = np.empty((len(quantiles), len(levels)))
    for k, level in enumerate(levels):
        above = mixture >= level - 1e-12
        hit = np.argmax(above, axis=1)
        previous = np.maximum(hit - 1, 0)
        rows = np.arange(len(quantiles))
        f_low, f_high = mixture[rows, previous], mixture[rows, hit]
        x_low, x_high = knots[rows, previous], knots[rows, hit]
        share = np.where(f_high > f_low, (level - f_low) / np.where(f_high > f_low, f_high - f_low, 1.0), 1.0)
        out[:, k] = np.where(hit == 0, knots[:, 0], x_low + np.clip(share, 0.0, 1.0) * (x_high - x_low))
    return out
