"""Which grid steps belong to a configured period (the rule of ``docs/dataset-format.md``)."""

from __future__ import annotations

import datetime as dt
from typing import Protocol

import numpy as np
import pandas as pd


class DatePeriod(Protocol):
    """Anything with ``start`` and ``end`` dates, such as :class:`hydroseq.config.Period`."""

    start: dt.date
    end: dt.date


def parse_day_boundary(day_boundary: str) -> pd.Timedelta:
    """Convert an ``HH:MM`` clock time into the offset from local midnight.

    Raises
    ------
    ValueError
        If the text is not a clock time between 00:00 and 23:59.
    """
    try:
        hours, minutes = (int(part) for part in day_boundary.split(":"))
    except ValueError:
        raise ValueError(f"day boundary {day_boundary!r} is not an HH:MM clock time") from None
    if not (0 <= hours < 24 and 0 <= minutes < 60):
        raise ValueError(f"day boundary {day_boundary!r} is not an HH:MM clock time")
    return pd.Timedelta(hours=hours, minutes=minutes)


def period_mask(times: np.ndarray | pd.DatetimeIndex, period: DatePeriod, grid_timezone: str,
                day_boundary: str = "00:00") -> np.ndarray:
    """Boolean mask of the grid labels that belong to ``period``.

    A step labelled ``t`` (the UTC end of its interval) belongs to ``[start, end]`` when ``t``,
    expressed in ``grid_timezone``, lies in ``(start + day_boundary, end + 1 day + day_boundary]``.
    For a daily grid these are exactly the local days ``start..end``.

    Parameters
    ----------
    times
        Grid labels in UTC (naive ``datetime64`` values are read as UTC).
    period
        Object with ``start`` and ``end`` dates (local calendar days, both included).
    grid_timezone
        IANA name of the zone in which the grid's days are defined, e.g. ``Etc/GMT+8``.
    day_boundary
        Local clock time at which a day ends, ``HH:MM``.
    """
    index = pd.DatetimeIndex(times)
    index = index.tz_localize("UTC") if index.tz is None else index.tz_convert("UTC")
    local = index.tz_convert(grid_timezone).tz_localize(None)
    boundary = parse_day_boundary(day_boundary)
    lower = pd.Timestamp(period.start) + boundary
    upper = pd.Timestamp(period.end) + pd.Timedelta(days=1) + boundary
    return np.asarray((local > lower) & (local <= upper), dtype=bool)


def local_day_of_year(times: np.ndarray, grid_timezone: str, day_boundary: str = "00:00") -> np.ndarray:
    """Day of year (1..366) of the local day each interval-end label ``times`` (UTC) belongs to.

    A label marks the end of its interval, so a daily value labelled at the day boundary belongs
    to the day before: one nanosecond is taken off before flooring.
    """
    index = pd.DatetimeIndex(times)
    index = index.tz_localize("UTC") if index.tz is None else index.tz_convert("UTC")
    local = index.tz_convert(grid_timezone).tz_localize(None)
    day = (local - parse_day_boundary(day_boundary) - pd.Timedelta(1, "ns")).floor("D")
    return np.asarray(day.day_of_year)
