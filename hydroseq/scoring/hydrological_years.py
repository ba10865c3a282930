"""Calendar and water years of a regular time axis, as positions of its steps (the signatures' years)."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike


def grid_step(times: ArrayLike) -> pd.Timedelta:
    """The step of a regular time axis (its first difference).

    Raises
    ------
    ValueError
        If ``times`` has fewer than two stamps or its steps differ.
    """
    index = pd.DatetimeIndex(times)
    if len(index) < 2:
        raise ValueError("a time axis needs at least two stamps to have a step")
    steps = np.diff(index.to_numpy())
    if np.any(steps != steps[0]) or steps[0] <= np.timedelta64(0):
        raise ValueError("times must be a regular ascending axis")
    return pd.Timedelta(steps[0])


def full_years(times: ArrayLike, first_month: int) -> list[slice]:
    """The positions of each full year (1 ``first_month`` 00:00 to the day before a year later) in ``times``.

    The first year starts on the first 1 ``first_month`` at or after ``times[0]``; a year is
    full when the series reaches its last step (it may have missing values). ``times`` is regular
    (:func:`grid_step`).
    """
    index = pd.DatetimeIndex(times)
    return full_years_of_index(index, grid_step(index), first_month) if len(index) >= 2 else []


def full_years_of_index(index: pd.DatetimeIndex, step: pd.Timedelta, first_month: int) -> list[slice]:
    """:func:`full_years` of an index whose ``step`` is known."""
    return [slice(*bounds) for bounds in _year_positions(index[0], index[-1], step, first_month)]


@functools.lru_cache(maxsize=256)  # a table scores many series on the same time axis
def _year_positions(first: pd.Timestamp, last: pd.Timestamp, step: pd.Timedelta,
                    first_month: int) -> tuple[tuple[int, int], ...]:
    start = pd.Timestamp(year=first.year, month=first_month, day=1)
    if start < first:
        start = pd.Timestamp(year=first.year + 1, month=first_month, day=1)
    end = start + pd.DateOffset(years=1)
    positions = []
    while end - step <= last:
        positions.append((-((first - start) // step), -((first - end) // step)))  # steps before start, end
        start, end = end, end + pd.DateOffset(years=1)
    return tuple(positions)
