"""Reference forecasts every model must beat on the same period: persistence and climatology."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hydroseq.dataset.periods import parse_day_boundary


def persistence(target: np.ndarray, lead: int) -> np.ndarray:
    """``Q(t + lead) = Q(t)``: the observed series shifted ``lead`` steps later (NaN before the start).

    ``target`` is ``[station, time]`` on a regular grid; the result has the same shape. A missing
    observation at ``t`` stays missing at ``t + lead`` (it is not filled from an earlier step).
    """
    shifted = np.full_like(target, np.nan, dtype=np.float64)
    shifted[:, lead:] = target[:, :-lead] if lead else target
    return shifted


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


def doy_climatology(target: np.ndarray, day_of_year: np.ndarray, fit_mask: np.ndarray) -> np.ndarray:
    """Per-station mean of ``target`` by day of year, fitted on the steps in ``fit_mask`` only.

    Parameters
    ----------
    target
        ``[station, time]`` observations (NaN missing).
    day_of_year
        ``[time]`` local day of year of every step (see :func:`local_day_of_year`).
    fit_mask
        ``[time]`` booleans: the training period. Nothing outside it influences the result.

    Returns
    -------
    ``[station, time]``: for every step (any period) the training-period mean of its day of year.
    Day 366 (leap years only) falls back to day 365 when the training period has no value for it;
    a day without any training value stays NaN.
    """
    sums = np.zeros((target.shape[0], 367))
    counts = np.zeros((target.shape[0], 367))
    train = target[:, fit_mask].astype(np.float64)
    valid = np.isfinite(train)
    days = np.broadcast_to(day_of_year[fit_mask], train.shape)
    for station in range(target.shape[0]):
        np.add.at(sums[station], days[station][valid[station]], train[station][valid[station]])
        np.add.at(counts[station], days[station][valid[station]], 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        table = np.where(counts > 0, sums / counts, np.nan)
    table[:, 366] = np.where(np.isnan(table[:, 366]), table[:, 365], table[:, 366])
    return table[:, day_of_year]
