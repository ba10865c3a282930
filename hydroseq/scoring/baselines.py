"""Reference forecasts every model must beat on the same steps: persistence of the issue step and climatology.

Both ``hydroseq evaluate`` (training stage) and hindcast scoring (forecast stage) use them; the
local day of year they key climatology on is :meth:`hydroseq.grid.GridSpec.day_of_year`.
"""

from __future__ import annotations

import numpy as np

DAYS = 367  # table index 1..366; index 0 unused


def issue_step_persistence(target: np.ndarray, lead: int) -> np.ndarray:
    """``Q(t + lead) = Q(t)``: the observation of the issue step itself, the observed series shifted ``lead``
    steps later (NaN before the start); what ``hydroseq evaluate`` calls persistence.

    ``target`` is ``[station, time]`` on a regular grid; the result has the same shape. A missing
    observation at ``t`` stays missing at ``t + lead`` (it is not filled from an earlier step): unlike the
    hindcast's :func:`hydroseq.forecast.baselines.newest_observation_persistence`, which carries a late
    gauge's newest value forward, as an operational forecaster would.
    """
    shifted = np.full_like(target, np.nan, dtype=np.float64)
    shifted[:, lead:] = target[:, :-lead] if lead else target
    return shifted


class DayOfYearMeans:
    """Per-station mean of a target by local day of year, accumulated chunk by chunk.

    Feeding the training period in pieces (:meth:`add`) keeps memory bounded by one piece.
    """

    def __init__(self, n_stations: int) -> None:
        self.sums = np.zeros((n_stations, DAYS))
        self.counts = np.zeros((n_stations, DAYS))

    def add(self, target: np.ndarray, day_of_year: np.ndarray) -> None:
        """Add ``target [station, time]`` observed on the local days ``day_of_year [time]`` (NaN skipped)."""
        values = target.astype(np.float64)
        valid = np.isfinite(values)
        days = np.broadcast_to(day_of_year, values.shape)
        for station in range(values.shape[0]):
            np.add.at(self.sums[station], days[station][valid[station]], values[station][valid[station]])
            np.add.at(self.counts[station], days[station][valid[station]], 1.0)

    def table(self) -> np.ndarray:
        """``[station, 367]`` means; day 366 falls back to day 365 when it has no value, others stay NaN."""
        with np.errstate(invalid="ignore", divide="ignore"):
            table = np.where(self.counts > 0, self.sums / self.counts, np.nan)
        table[:, 366] = np.where(np.isnan(table[:, 366]), table[:, 365], table[:, 366])
        return table


def doy_climatology(target: np.ndarray, day_of_year: np.ndarray, fit_mask: np.ndarray,
                    at: np.ndarray | None = None) -> np.ndarray:
    """Per-station mean of ``target`` by day of year, fitted on the steps in ``fit_mask`` only.

    Parameters
    ----------
    target
        ``[station, time]`` observations (NaN missing).
    day_of_year
        ``[time]`` local day of year of every step (see :meth:`hydroseq.grid.GridSpec.day_of_year`).
    fit_mask
        ``[time]`` booleans: the training period. Nothing outside it influences the result.
    at
        ``[time]`` booleans: return only these steps (default: every step).

    Returns
    -------
    ``[station, time]``: for every step (any period) the training-period mean of its day of year.
    Day 366 (leap years only) falls back to day 365 when the training period has no value for it;
    a day without any training value stays NaN.
    """
    means = DayOfYearMeans(target.shape[0])
    means.add(target[:, fit_mask], day_of_year[fit_mask])
    return means.table()[:, day_of_year if at is None else day_of_year[at]]


def doy_quantile_table(target: np.ndarray, day_of_year: np.ndarray, fit_mask: np.ndarray,
                       levels: tuple[float, ...], window_days: int = 15) -> np.ndarray:
    """The climatological distribution: per-station quantiles of ``target`` by local day of year.

    For day d the sample is every step in ``fit_mask`` (the training period; nothing else is read)
    whose day of year lies within ``window_days`` of d (circularly), about ``(2 * window + 1) x
    years`` values. Returns ``[station, 367, level]`` indexed by day of year (index 0 unused; NaN
    where a station has no value).
    """
    fit_values = target[:, fit_mask].astype(np.float64)
    fit_days = day_of_year[fit_mask]
    table = np.full((target.shape[0], DAYS, len(levels)), np.nan)
    stations = np.flatnonzero(np.isfinite(fit_values).any(axis=1))
    for day in range(1, DAYS):
        distance = np.abs(fit_days - day)
        near = np.minimum(distance, 366 - distance) <= window_days
        sample = fit_values[stations][:, near]
        known = np.isfinite(sample).any(axis=1)
        if known.any():
            table[stations[known], day] = np.nanquantile(sample[known], levels, axis=1).T
    return table


def doy_climatology_quantiles(target: np.ndarray, day_of_year: np.ndarray, fit_mask: np.ndarray,
                              levels: tuple[float, ...], window_days: int = 15) -> np.ndarray:
    """``[station, time, level]``: :func:`doy_quantile_table` looked up for every step of ``target``."""
    return doy_quantile_table(target, day_of_year, fit_mask, levels, window_days)[:, day_of_year]
