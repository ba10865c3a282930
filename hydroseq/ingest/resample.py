"""Observations (known from UTC instant ``b``) onto the grid, causally.

Fine-to-coarse: right-closed, right-labelled bins on ``b`` with a coverage threshold.
Coarse-to-fine: each value lands on the first label at or after ``b`` and is carried forward,
bounded, never backwards. Both are explicit integer binning (the same as pandas
``resample(closed="right", label="right", origin=<grid start>)``) so the rule is visible here.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from hydroseq.ingest.timegrid import TimeGrid, bin_index


def to_grid(ends_ns: np.ndarray, values: np.ndarray, grid: TimeGrid, aggregation: str,
            source_step: pd.Timedelta | None, min_coverage: float, fill_limit: int | None) -> np.ndarray:
    """Values on the grid (float64, NaN where missing) from observations known at ``ends_ns``.

    Parameters
    ----------
    ends_ns
        Strictly increasing UTC instants (int64 ns) from which each observation is known.
    values
        Observations in canonical units, NaN where missing.
    aggregation
        ``sum``, ``mean``, ``min`` or ``max`` over the valid observations of a grid step.
    source_step
        Native step, or ``None`` for irregular instantaneous readings (then one valid reading
        suffices for a grid step).
    min_coverage
        Fine-to-coarse: a grid step with fewer than ``min_coverage`` of its expected observations
        valid is NaN (never 0).
    fill_limit
        Coarse-to-fine: how many further grid steps a value is carried forward (default: until
        the next source value is due).
    """
    if source_step is not None and source_step > grid.step:
        return _carry_forward(ends_ns, values, grid, source_step, fill_limit)
    return _aggregate(ends_ns, values, grid, aggregation, _required(grid, source_step, min_coverage))


def _required(grid: TimeGrid, source_step: pd.Timedelta | None, min_coverage: float) -> int:
    if source_step is None:
        return 1
    expected = math.floor(grid.step / source_step + 1e-9)
    return max(1, math.ceil(min_coverage * expected - 1e-9))


def _aggregate(ends_ns: np.ndarray, values: np.ndarray, grid: TimeGrid, aggregation: str,
               required: int) -> np.ndarray:
    index = bin_index(ends_ns, grid)
    keep = (index >= 0) & (index < len(grid)) & ~np.isnan(values)
    frame = pd.DataFrame({"bin": index[keep], "value": values[keep]})
    grouped = frame.groupby("bin", sort=True)["value"].agg(["count", aggregation])
    result = np.full(len(grid), np.nan)
    enough = grouped["count"].to_numpy() >= required
    result[grouped.index.to_numpy()[enough]] = grouped[aggregation].to_numpy()[enough]
    return result


def _carry_forward(ends_ns: np.ndarray, values: np.ndarray, grid: TimeGrid, source_step: pd.Timedelta,
                   fill_limit: int | None) -> np.ndarray:
    index = bin_index(ends_ns, grid)
    inside = (index >= 0) & (index < len(grid))
    placed = np.full(len(grid), np.nan)
    # Several values in one grid step cannot happen for a coarser source unless its stamps are
    # irregular; the latest one known at the label wins.
    placed[index[inside]] = values[inside]
    present = np.zeros(len(grid), dtype=bool)
    present[index[inside]] = True
    limit = fill_limit if fill_limit is not None else math.ceil(source_step / grid.step) - 1
    if limit == 0:
        return placed
    # Carry the last placed observation (even a missing one, which stops older values) forward.
    position = np.where(present, np.arange(len(grid)), -1)
    last = np.maximum.accumulate(position)
    age = np.arange(len(grid)) - last
    usable = (last >= 0) & (age <= limit)
    result = np.full(len(grid), np.nan)
    result[usable] = placed[last[usable]]
    return result
