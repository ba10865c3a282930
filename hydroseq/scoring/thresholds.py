"""Per-station flood thresholds: read from a table, or derived from a training period's discharge.

Derived thresholds are return-period flows (a Gumbel or GEV distribution fitted to each station's
annual maxima, :func:`return_period_flows`) and high percentiles of the discharge. They must come
from the training period only: thresholds computed on the period a forecast is evaluated on
would let that period's floods decide what counts as a flood.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from hydroseq.errors import InputDataError

MIN_YEARS = 5  # fewer valid annual maxima than this: no return-period flow
TABLE_COLUMNS = ("station", "level", "discharge")
Distribution = Literal["gumbel", "gev"]


@dataclass(frozen=True, eq=False)
class StationThresholds:
    """Discharge thresholds ``values [station, level]`` (NaN where unknown) and where they come from.

    Attributes
    ----------
    levels
        Threshold names, e.g. ``"2-year"``, ``"5-year"``, ``"q95"``.
    stations
        Station ids, the rows of ``values``.
    values
        ``[station, level]`` discharge (read-only).
    source
        ``"table <file>"`` or ``"training period <first>..<last>, gumbel"``.
    """

    levels: tuple[str, ...]
    stations: tuple[str, ...]
    values: NDArray[np.float64]
    source: str

    def __post_init__(self) -> None:
        values = np.array(self.values, dtype=np.float64)
        if values.shape != (len(self.stations), len(self.levels)):
            raise ValueError(f"values have shape {values.shape}, expected "
                             f"({len(self.stations)} stations, {len(self.levels)} levels)")
        for name, ids in (("station", self.stations), ("level", self.levels)):
            if len(set(ids)) != len(ids):
                raise ValueError(f"{name} names repeat: {sorted({i for i in ids if ids.count(i) > 1})}")
        values.setflags(write=False)
        object.__setattr__(self, "values", values)

    def for_stations(self, station_ids: Sequence[str]) -> StationThresholds:
        """The thresholds of ``station_ids`` in that order; a station not held here gets NaN."""
        row = {station: i for i, station in enumerate(self.stations)}
        values = np.full((len(station_ids), len(self.levels)), np.nan)
        for i, station in enumerate(station_ids):
            if station in row:
                values[i] = self.values[row[station]]
        return StationThresholds(self.levels, tuple(station_ids), values, self.source)


def water_years(times: ArrayLike, water_year_start_month: int = 10) -> NDArray[np.int64]:
    """The water year of each time: a year starts on the 1st of ``water_year_start_month`` and is
    named by the calendar year it ends in (with October: 1 Oct 2000 - 30 Sep 2001 is 2001)."""
    if not 1 <= water_year_start_month <= 12:
        raise ValueError(f"water_year_start_month must be 1..12, got {water_year_start_month}")
    stamps = np.asarray(times, dtype="datetime64[s]")
    years = stamps.astype("datetime64[Y]").astype(np.int64) + 1970
    months = stamps.astype("datetime64[M]").astype(np.int64) % 12 + 1
    if water_year_start_month == 1:
        return years
    return years + (months >= water_year_start_month)


def annual_maxima(values: ArrayLike, times: ArrayLike, water_year_start_month: int = 10,
                  min_coverage: float = 0.8) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Each station's maximum discharge in each water year (:func:`water_years`).

    Parameters
    ----------
    values
        ``[S, T]`` discharge, NaN where missing.
    times
        ``[T]`` strictly increasing times of a regular grid.
    water_year_start_month
        The month on whose 1st a water year starts.
    min_coverage
        The fraction of the year's steps (a full year at the grid's step, so that a year the
        series only partly covers counts as incomplete) that must be finite for a maximum.

    Returns
    -------
    years, maxima
        ``[Y]`` the water years the times touch, ``[S, Y]`` their maxima (NaN below ``min_coverage``).
    """
    flows = np.asarray(values, dtype=np.float64)
    stamps = np.asarray(times, dtype="datetime64[s]")
    if flows.ndim != 2 or stamps.shape != (flows.shape[1],):
        raise ValueError(f"values have shape {flows.shape} and times {stamps.shape}, expected [S, T] and [T]")
    if stamps.size < 2 or np.any(np.diff(stamps) <= np.timedelta64(0, "s")):
        raise ValueError("times must hold at least two strictly increasing steps")
    step = np.median(np.diff(stamps).astype(np.int64))
    labels = water_years(stamps, water_year_start_month)
    years, starts = np.unique(labels, return_index=True)
    first_year = 0 if water_year_start_month == 1 else 1
    year_starts = np.array([f"{year - first_year + k:04d}-{water_year_start_month:02d}-01" for year in years
                            for k in (0, 1)], dtype="datetime64[s]").reshape(-1, 2)
    expected = (year_starts[:, 1] - year_starts[:, 0]).astype(np.int64) / step
    finite = np.add.reduceat(np.isfinite(flows), starts, axis=1)
    maxima = np.fmax.reduceat(flows, starts, axis=1)
    return years, np.where(finite >= min_coverage * expected, maxima, np.nan)


def _fitted_flows(maxima: NDArray[np.float64], periods: Sequence[float], distribution: Distribution,
                  min_years: int) -> NDArray[np.float64]:
    """The return-period flows of one station's annual maxima (NaN with fewer than ``min_years``)."""
    valid = maxima[np.isfinite(maxima)]
    if valid.size < min_years:
        return np.full(len(periods), np.nan)
    exceedance = 1.0 / np.asarray(periods, dtype=np.float64)
    if np.ptp(valid) == 0.0:
        return np.full(len(periods), valid[0])
    from scipy import stats  # here, not at the top: 1 s of every forecast's start (which never fits)

    location, scale = stats.gumbel_r.fit(valid)
    if distribution == "gumbel":
        return np.asarray(stats.gumbel_r.isf(exceedance, location, scale), dtype=np.float64)
    # Started from the Gumbel fit (shape 0): scipy's default start can end in a far worse local optimum.
    parameters = stats.genextreme.fit(valid, 0.0, loc=location, scale=scale)
    return np.asarray(stats.genextreme.isf(exceedance, *parameters), dtype=np.float64)


def return_period_flows(values: ArrayLike, times: ArrayLike, periods: Sequence[float] = (2, 5),
                        distribution: Distribution = "gumbel", water_year_start_month: int = 10,
                        min_coverage: float = 0.8, min_years: int = MIN_YEARS) -> NDArray[np.float64]:
    """``[S, P]``: each station's flow exceeded with probability ``1 / period`` in a year.

    A ``scipy.stats.gumbel_r`` or ``genextreme`` distribution (the latter started from the Gumbel
    fit) is fitted by maximum likelihood to the station's annual maxima (:func:`annual_maxima`,
    with ``water_year_start_month`` and ``min_coverage``) and its ``isf(1 / period)`` taken.
    Stations with fewer than ``min_years`` valid maxima are NaN; maxima all equal give that value.

    Raises
    ------
    ValueError
        If a period is not above 1 year or the distribution is unknown.
    """
    if any(not period > 1 for period in periods):
        raise ValueError(f"return periods must exceed 1 year, got {list(periods)}")
    if distribution not in ("gumbel", "gev"):
        raise ValueError(f"distribution must be 'gumbel' or 'gev', got {distribution!r}")
    _, maxima = annual_maxima(values, times, water_year_start_month, min_coverage)
    flows = [_fitted_flows(row, periods, distribution, min_years) for row in maxima]
    return np.array(flows, dtype=np.float64).reshape(maxima.shape[0], len(periods))


def derived_thresholds(values: ArrayLike, times: ArrayLike, station_ids: Sequence[str],
                       periods: Sequence[float] = (2, 5), percentiles: Sequence[float] = (95.0, 99.0),
                       distribution: Distribution = "gumbel", period_label: str = "") -> StationThresholds:
    """Thresholds from a training period: return-period flows and percentiles of the discharge.

    Pass the training period's values only: an evaluation period must not feed its own
    thresholds (see the module docstring).

    Parameters
    ----------
    values
        ``[S, T]`` training-period discharge, NaN where missing.
    times
        ``[T]`` its times (regular grid).
    station_ids
        The ``S`` station ids of the rows.
    periods
        Return periods in years: levels ``"2-year"``, ``"5-year"`` (:func:`return_period_flows`).
    percentiles
        Percentiles of all finite steps: levels ``"q95"``, ``"q99"`` (the flow exceeded 5 % and
        1 % of the time; NaN for a station without any finite value).
    distribution
        ``"gumbel"`` or ``"gev"``.
    period_label
        How ``source`` names the period; by default the first and last dates of ``times``.
    """
    flows = np.asarray(values, dtype=np.float64)
    if flows.ndim != 2 or flows.shape[0] != len(station_ids):
        raise ValueError(f"values have shape {flows.shape}, expected [{len(station_ids)} stations, time]")
    stamps = np.asarray(times, dtype="datetime64[s]")
    returns = return_period_flows(flows, stamps, periods, distribution)
    known = np.isfinite(flows).any(axis=1)
    quantiles = np.full((flows.shape[0], len(percentiles)), np.nan)
    if known.any():
        quantiles[known] = np.nanpercentile(flows[known], list(percentiles), axis=1).T
    label = period_label or "..".join(np.datetime_as_string(stamps[[0, -1]], unit="D"))
    levels = tuple(f"{period:g}-year" for period in periods) + tuple(f"q{p:g}" for p in percentiles)
    return StationThresholds(levels, tuple(station_ids), np.concatenate([returns, quantiles], axis=1),
                             f"training period {label}, {distribution}")


def _discharge(text: str, path: Path, line: int) -> float:
    """The discharge of one table row, or an :class:`InputDataError` naming the line."""
    try:
        value = float(text)
    except ValueError:
        raise InputDataError(path, f"discharge {text!r} is not a number", f"line {line}") from None
    if not math.isfinite(value):
        raise InputDataError(path, f"discharge {text!r} is not a finite number", f"line {line}")
    if value < 0.0:
        raise InputDataError(path, f"discharge {text} is negative", f"line {line}")
    return value


def read_threshold_table(path: str | Path, station_ids: Sequence[str]) -> StationThresholds:
    """Read thresholds from a CSV with the columns ``station``, ``level``, ``discharge``.

    Station ids are read as text (leading zeros kept). Each station may list its own levels; the
    result has every level the file names, in the order of first appearance, and NaN where a
    station lacks one and for the ``station_ids`` the file does not list. Other columns are ignored.

    Raises
    ------
    InputDataError
        One line naming the file, the line and the problem: unreadable or empty file, a missing
        column, an empty station or level, a discharge that is not a finite non-negative number,
        a (station, level) given twice, or a station not among ``station_ids``.
    """
    path = Path(path)
    wanted = {station: i for i, station in enumerate(station_ids)}
    found: dict[tuple[str, str], tuple[float, int]] = {}
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            header = [name.strip() for name in reader.fieldnames or []]
            if not header:
                raise InputDataError(path, f"is empty, expected the header {','.join(TABLE_COLUMNS)}")
            missing = [column for column in TABLE_COLUMNS if column not in header]
            if missing:
                raise InputDataError(path, f"missing column {', '.join(missing)} (has {', '.join(header)})", "line 1")
            reader.fieldnames = header
            for row in reader:
                line = reader.line_num
                station, level = (str(row[column] or "").strip() for column in TABLE_COLUMNS[:2])
                if not station or not level:
                    raise InputDataError(path, "station and level must not be empty", f"line {line}")
                discharge = _discharge(str(row["discharge"] or "").strip(), path, line)
                if station not in wanted:
                    raise InputDataError(path, f"station {station!r} is not one of the {len(wanted)} stations "
                                               "of the data", f"line {line}")
                if (station, level) in found:
                    raise InputDataError(path, f"station {station} level {level!r} is already given on line "
                                               f"{found[station, level][1]}", f"line {line}")
                found[station, level] = (discharge, line)
    except OSError as error:
        raise InputDataError(path, f"cannot be read ({error.strerror or type(error).__name__})") from None
    except (UnicodeDecodeError, csv.Error) as error:
        raise InputDataError(path, f"is not a readable CSV text file ({error})") from None
    levels = tuple(dict.fromkeys(level for _, level in found))
    column = {level: j for j, level in enumerate(levels)}
    values = np.full((len(station_ids), len(levels)), np.nan)
    for (station, level), (discharge, _) in found.items():
        values[wanted[station], column[level]] = discharge
    return StationThresholds(levels, tuple(station_ids), values, f"table {path}")
