"""A predictive distribution given by its quantile values (numpy only).

A forecast is ``values [..., Q]``: the discharge at each of ``Q`` probability levels (e.g.
:data:`DEFAULT_QUANTILES`), non-decreasing along the last axis. Its cumulative distribution
function is the piecewise-linear curve through the points ``(value_i, level_i)``, closed by two
tails:

- below the lowest quantile ``q_0`` F falls to 0 along the first segment's slope, reaching 0 at
  ``q_0 - (q_1 - q_0) * level_0 / (level_1 - level_0)``; discharge is non-negative, so that end
  is raised to 0 when it would lie below it (the lower tail is then steeper). A lowest quantile
  that is itself negative keeps the unraised end.
- above the highest quantile ``q_-1`` F rises to 1 along the last segment's slope, reaching 1 at
  ``q_-1 + (q_-1 - q_-2) * (1 - level_-1) / (level_-1 - level_-2)``.

The probability of exceeding a threshold (:func:`exceedance_probability`) takes other tails beyond the
outermost quantiles: exponential ones that stay within the mass the quantiles leave there and never reach
0 or 1, so that a threshold beyond them is never "certain" or "impossible" by extrapolation alone.

Equal quantile values (ties) make a jump of F: a point mass, e.g. on zero flow. F is
right-continuous there (F at the tied value is the highest tied level), which needs no division by
a zero width. A NaN among a forecast's values, or in the point asked for, gives NaN.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

DEFAULT_QUANTILES: tuple[float, ...] = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)
LEVEL_TOLERANCE = 1e-9  # how close a level must be to the one an interval asks for


def check_levels(levels: ArrayLike) -> tuple[float, ...]:
    """The probability levels as a tuple of floats, after checking them.

    Raises
    ------
    ValueError
        If there are none, one is not strictly between 0 and 1, or they are not strictly increasing.
    """
    checked = tuple(float(level) for level in np.asarray(levels, dtype=np.float64).ravel())
    if not checked:
        raise ValueError("no quantile levels given")
    outside = [level for level in checked if not 0.0 < level < 1.0]
    if outside:
        raise ValueError(f"quantile levels must lie strictly between 0 and 1, got {outside}")
    if np.any(np.diff(checked) <= 0):
        raise ValueError(f"quantile levels must be strictly increasing, got {list(checked)}")
    return checked


def _checked_values(values: ArrayLike, levels: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``values`` as float64 and the checked levels, with at least two levels matching its last axis."""
    level_arr = np.asarray(check_levels(levels))
    value_arr = np.asarray(values, dtype=np.float64)
    if value_arr.ndim == 0 or value_arr.shape[-1] != level_arr.size:
        raise ValueError(f"values have shape {value_arr.shape}, expected a last axis of {level_arr.size} levels")
    if level_arr.size < 2:
        raise ValueError("a distribution needs at least two quantile levels")
    if np.any(np.diff(value_arr, axis=-1) < 0):
        raise ValueError("quantile values decrease along the last axis; sort them first (np.sort(values, axis=-1))")
    return value_arr, level_arr


def _tail_ends(v: NDArray[np.float64], p: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Where the CDF of checked values ``v`` at levels ``p`` reaches 0 and 1 (see the module docstring)."""
    lower = v[..., 0] - (v[..., 1] - v[..., 0]) * p[0] / (p[1] - p[0])
    lower = np.where(v[..., 0] < 0.0, lower, np.maximum(lower, 0.0))
    upper = v[..., -1] + (v[..., -1] - v[..., -2]) * (1.0 - p[-1]) / (p[-1] - p[-2])
    return lower, upper


def cdf_at(values: ArrayLike, levels: ArrayLike, x: ArrayLike) -> NDArray[np.float64]:
    """The non-exceedance probability ``F(x) = P(X <= x)`` of each quantile forecast.

    Parameters
    ----------
    values
        ``[..., Q]`` quantile values, non-decreasing along the last axis (ties allowed).
    levels
        The ``Q`` probability levels of the last axis (:func:`check_levels`).
    x
        The points, broadcast together with ``values.shape[:-1]``.

    Returns
    -------
    ndarray
        F in [0, 1] with the broadcast shape; NaN where ``x`` or any of the forecast's values is NaN.

    Raises
    ------
    ValueError
        If the levels are invalid (:func:`check_levels`), fewer than two, do not match the last
        axis of ``values``, the values decrease along it, or ``x`` does not broadcast with
        ``values.shape[:-1]``.
    """
    v, p = _checked_values(values, levels)
    lower, upper = _tail_ends(v, p)
    points = np.asarray(x, dtype=np.float64)
    shape = np.broadcast_shapes(v.shape[:-1], points.shape)
    knots = np.broadcast_to(np.concatenate([lower[..., None], v, upper[..., None]], axis=-1), (*shape, p.size + 2))
    probabilities = np.concatenate([[0.0], p, [1.0]])
    points = np.broadcast_to(points, shape)
    # knots[below - 1] <= x < knots[below]: the bracket has a positive width, ties included.
    below = np.count_nonzero(knots <= points[..., None], axis=-1)
    left = np.clip(below - 1, 0, p.size)
    x_left = np.take_along_axis(knots, left[..., None], axis=-1)[..., 0]
    x_right = np.take_along_axis(knots, left[..., None] + 1, axis=-1)[..., 0]
    width = x_right - x_left
    fraction = np.clip((points - x_left) / np.where(width > 0, width, 1.0), 0.0, 1.0)
    inside = probabilities[left] + (probabilities[left + 1] - probabilities[left]) * fraction
    cdf = np.where(below == 0, 0.0, np.where(below == p.size + 2, 1.0, inside))
    missing = np.isnan(points) | np.broadcast_to(np.isnan(v).any(axis=-1), shape)
    return np.where(missing, np.nan, cdf)


def exceedance_probability(values: ArrayLike, levels: ArrayLike, threshold: ArrayLike) -> NDArray[np.float64]:
    """``P(X > threshold)`` of each forecast: ``1 - F(threshold)`` between the outermost quantiles (:func:`cdf_at`),
    and tails beyond them that keep to the mass the quantiles leave there without inventing certainty.

    Above the highest quantile ``q_-1`` (level ``p_-1``, e.g. 0.95) the probability is at most ``1 - p_-1`` (5 %)
    and decays exponentially, ``(1 - p_-1) · exp(-(x - q_-1) / s)``, with ``s`` the length of :func:`cdf_at`'s
    linear tail (the density at ``q_-1`` is the last segment's): it never reaches 0, where the linear tail gives
    exactly 0 from ``q_-1 + s`` on. Below the lowest quantile ``q_0`` (level ``p_0``, e.g. 0.05) it is at least
    ``1 - p_0`` (95 %) and rises towards 1 as ``1 - p_0 · exp(-(q_0 - x) / s_0)``, never reaching it. A tail whose
    segment has no width (tied quantiles: a point mass) gives 0 above it (1 below), as the forecast says.

    ``threshold`` broadcasts with ``values.shape[:-1]``, e.g. ``[S, 1]`` per-station flood
    thresholds against ``[S, T, Q]`` forecasts. NaN where the threshold or the forecast is NaN.
    """
    v, p = _checked_values(values, levels)
    x = np.asarray(threshold, dtype=np.float64)
    inside = 1.0 - cdf_at(v, p, x)
    lowest, highest = v[..., 0], v[..., -1]
    low_scale = (v[..., 1] - lowest) * p[0] / (p[1] - p[0])
    high_scale = (highest - v[..., -2]) * (1.0 - p[-1]) / (p[-1] - p[-2])
    with np.errstate(divide="ignore", invalid="ignore"):
        above = (1.0 - p[-1]) * np.exp(-np.maximum(x - highest, 0.0) / high_scale)
        below = 1.0 - p[0] * np.exp(-np.maximum(lowest - x, 0.0) / low_scale)
    return np.where(x > highest, above, np.where(x < lowest, below, inside))


def pit(values: ArrayLike, levels: ArrayLike, obs: ArrayLike) -> NDArray[np.float64]:
    """Probability integral transform: each forecast's ``F`` at its observation (NaN where obs is NaN).

    For a calibrated forecast the PIT values are uniform on [0, 1]. An observation inside a point
    mass (tied quantiles) gets the top of the jump; no randomisation is applied.
    """
    return cdf_at(values, levels, obs)


def central_interval_levels(levels: ArrayLike, central: float) -> tuple[int, int]:
    """The indices of the levels ``(1 - central) / 2`` and ``(1 + central) / 2`` in ``levels``.

    Raises
    ------
    ValueError
        If ``central`` is not strictly between 0 and 1 or either level is not in ``levels``.
    """
    checked = np.asarray(check_levels(levels))
    if not 0.0 < central < 1.0:
        raise ValueError(f"a central interval's probability must lie strictly between 0 and 1, got {central}")
    indices = []
    for wanted in ((1.0 - central) / 2.0, (1.0 + central) / 2.0):
        found = np.flatnonzero(np.abs(checked - wanted) < LEVEL_TOLERANCE)
        if found.size == 0:
            raise ValueError(f"the {central:g} central interval needs level {wanted:g}, not in {list(checked)}")
        indices.append(int(found[0]))
    return indices[0], indices[1]


def interval_coverage(values: ArrayLike, levels: ArrayLike, obs: ArrayLike, central: float) -> NDArray[np.float64]:
    """1.0 where the observation lies in the forecast's central interval ``[lower, upper]``, else 0.0.

    Parameters
    ----------
    values
        ``[..., Q]`` quantile values.
    levels
        The ``Q`` levels; they must hold ``(1 - central) / 2`` and ``(1 + central) / 2``.
    obs
        Observations broadcasting with ``values.shape[:-1]``.
    central
        The interval's probability, e.g. 0.9 for the levels 0.05 and 0.95.

    Returns
    -------
    ndarray
        Floats of the broadcast shape; NaN where obs or either bound is NaN.
    """
    lower_index, upper_index = central_interval_levels(levels, central)
    v, _ = _checked_values(values, levels)
    lower, upper, observed = np.broadcast_arrays(v[..., lower_index], v[..., upper_index],
                                                 np.asarray(obs, dtype=np.float64))
    inside = ((lower <= observed) & (observed <= upper)).astype(np.float64)
    return np.where(np.isnan(lower) | np.isnan(upper) | np.isnan(observed), np.nan, inside)


def coverage_by_station(values: ArrayLike, levels: ArrayLike, obs: ArrayLike, central: float) -> NDArray[np.float64]:
    """``[S]``: each station's fraction of steps whose observation lies in the central interval.

    ``values`` is ``[S, T, Q]`` and ``obs`` ``[S, T]``; steps where the coverage is NaN (missing
    observation or forecast) are skipped, and a station without any valid step is NaN. A calibrated
    forecast covers a fraction close to ``central``.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 3:
        raise ValueError(f"values have shape {v.shape}, expected [station, time, level]")
    covered = interval_coverage(v, levels, obs, central)
    valid = np.count_nonzero(~np.isnan(covered), axis=1)
    hits = np.nansum(covered, axis=1)
    return np.where(valid > 0, hits / np.maximum(valid, 1), np.nan)


def mixture_quantiles(values: ArrayLike, levels: ArrayLike) -> NDArray[np.float32]:
    """The quantiles at ``levels`` of the equal-weight mixture of the distributions ``values [..., member, Q]``.

    Each member's distribution is :func:`cdf_at`'s (linear through its quantiles, with its tails), so
    the mixture's CDF, their mean, is linear between the members' knots and is inverted exactly there.
    The mixture of one distribution is that distribution. NaN where any member's values are.

    Raises
    ------
    ValueError
        As :func:`cdf_at`.
    """
    v, p = _checked_values(np.sort(np.asarray(values, dtype=np.float64), axis=-1), levels)
    rows = v.reshape(-1, v.shape[-2], v.shape[-1])
    out = np.full((len(rows), p.size), np.nan)
    complete = np.asarray(np.isfinite(rows).all(axis=(1, 2)))
    for first in range(0, len(rows), _MIXTURE_ROWS):
        block = rows[first:first + _MIXTURE_ROWS][complete[first:first + _MIXTURE_ROWS]]
        if len(block):
            out[first:first + _MIXTURE_ROWS][complete[first:first + _MIXTURE_ROWS]] = _mixture_inverse(block, p)
    return out.reshape(*v.shape[:-2], p.size).astype(np.float32)


_MIXTURE_ROWS = 4096


def _mixture_inverse(v: NDArray[np.float64], p: NDArray[np.float64]) -> NDArray[np.float64]:
    """``[row, member, Q]`` -> ``[row, Q]``: the mixture's CDF at every member knot, inverted linearly."""
    lower, upper = _tail_ends(v, p)
    knots = np.sort(np.concatenate([lower[..., None], v, upper[..., None]], axis=-1).reshape(len(v), -1), axis=-1)
    mixture = np.stack([cdf_at(v, p, knots[:, k, None]).mean(axis=-1) for k in range(knots.shape[1])], axis=-1)
    rows = np.arange(len(v))
    out = np.empty((len(v), p.size))
    for k, level in enumerate(p):
        hit = np.argmax(mixture >= level - 1e-12, axis=1)
        previous = np.maximum(hit - 1, 0)
        f_low, f_high = mixture[rows, previous], mixture[rows, hit]
        share = np.clip((level - f_low) / np.where(f_high > f_low, f_high - f_low, 1.0), 0.0, 1.0)
        out[:, k] = np.where(f_high > f_low, knots[rows, previous] + share * (knots[rows, hit] - knots[rows, previous]),
                             knots[rows, hit])
    return out


def ensemble_quantiles(members: ArrayLike, levels: ArrayLike) -> NDArray[np.float32]:
    """``[..., level]`` quantiles (linear between order statistics) of the ensemble ``[..., member]``; NaN where
    any member is."""
    points = np.asarray(members, dtype=np.float64)
    complete = np.asarray(np.isfinite(points).all(axis=-1))
    filled = np.where(complete[..., None], points, 0.0)
    quantiles = np.moveaxis(np.quantile(filled, np.asarray(check_levels(levels)), axis=-1), 0, -1)
    return np.where(complete[..., None], quantiles, np.nan).astype(np.float32)
