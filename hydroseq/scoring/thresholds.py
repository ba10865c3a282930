"""Per-station thresholds: the user's table (discharges, or stages through rating curves) or, without one,
derived from a training period's discharge.

Derived thresholds are return-period flows of the water-year maxima (:mod:`.return_periods`: by default
Gumbel by L-moments, with a bootstrap confidence interval) and high percentiles of the discharge, all of
the series as given: daily means on a daily grid, so the levels read "2-year daily-mean flow", not flood
flows. They must come from the training period only: thresholds computed on the period a forecast is
evaluated on would let that period's high flows decide what counts as one. A user's table takes precedence
over them entirely (:func:`station_thresholds`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from hydroseq.errors import InputDataError
from hydroseq.scoring.rating_curve import RatingCurves
from hydroseq.scoring.return_periods import FrequencyAnalysis, fit_return_periods
from hydroseq.scoring.station_tables import known_station, table_number, table_rows
from hydroseq.scoring.table_units import TargetUnits, column_units, length_factor, to_target

TABLE_COLUMNS = ("station", "level", "discharge")  # "discharge [m3/s]" (units in the header), or "stage [m]"
_PERCENTILE_LEVEL = re.compile(r"q\d+(\.\d+)?")  # a derived percentile's level id: q95, q99.5
_NOT_GIVEN: NDArray[Any] = np.empty((0, 0))  # an interval or years not given: NaN and 0 of the thresholds' shape


@dataclass(frozen=True, eq=False)
class StationThresholds:
    """Discharge thresholds ``values [station, level]`` (NaN where unknown), where they come from, and for
    derived return-period flows their confidence interval and the water years they were fitted to.

    Attributes
    ----------
    levels
        Threshold ids, e.g. ``"2-year"``, ``"5-year"``, ``"q95"``: the names in column and variable names
        (``p_exceed_2-year``), stable.
    stations
        Station ids, the rows of ``values``.
    values
        ``[station, level]`` discharge (read-only, as are the arrays below).
    source
        ``"table <file>"`` or ``"training period <first>..<last>, Gumbel fitted by L-moments ..."``.
    labels
        What a person reads for each level: ``"2-year daily-mean flow"``; by default the level id.
    lower, upper
        ``[station, level]`` bounds of the ``confidence`` interval; NaN where there is none.
    years
        ``[station, level]`` water-year maxima a return-period level was fitted to; 0 for other levels.
    notes
        Per station, why it has no return-period flow (``""`` where it has, or where none was derived).
    confidence
        The share the interval covers (0.9); None when no level has an interval.
    """

    levels: tuple[str, ...]
    stations: tuple[str, ...]
    values: NDArray[np.float64]
    source: str
    labels: tuple[str, ...] = ()
    lower: NDArray[np.float64] = field(default_factory=lambda: _NOT_GIVEN)
    upper: NDArray[np.float64] = field(default_factory=lambda: _NOT_GIVEN)
    years: NDArray[np.int64] = field(default_factory=lambda: _NOT_GIVEN)
    notes: tuple[str, ...] = ()
    confidence: float | None = None

    def __post_init__(self) -> None:
        shape = (len(self.stations), len(self.levels))
        for name, ids in (("station", self.stations), ("level", self.levels)):
            if len(set(ids)) != len(ids):
                raise ValueError(f"{name} names repeat: {sorted({i for i in ids if ids.count(i) > 1})}")
        for name, fill in (("values", np.nan), ("lower", np.nan), ("upper", np.nan), ("years", 0)):
            given = getattr(self, name)
            array = np.full(shape, fill) if given is _NOT_GIVEN else np.array(given)
            array = array.astype(np.int64 if name == "years" else np.float64)
            if array.shape != shape:
                raise ValueError(f"{name} have shape {array.shape}, expected "
                                 f"({len(self.stations)} stations, {len(self.levels)} levels)")
            array.setflags(write=False)
            object.__setattr__(self, name, array)
        object.__setattr__(self, "labels", tuple(self.labels) or self.levels)
        object.__setattr__(self, "notes", tuple(self.notes) or ("",) * len(self.stations))
        if len(self.labels) != len(self.levels) or len(self.notes) != len(self.stations):
            raise ValueError(f"{len(self.labels)} labels and {len(self.notes)} notes for {len(self.levels)} levels "
                             f"and {len(self.stations)} stations")

    def label(self, level: str) -> str:
        """What a person reads for the level id ``level``."""
        return self.labels[self.levels.index(level)]

    @property
    def flood(self) -> tuple[bool, ...]:
        """Per level: a flood threshold (a table's level, a return-period flow), not a high flow (a derived
        percentile such as ``q95``, exceeded on 5 % of the days whatever the year): what a flood outlook counts."""
        table = self.source.startswith("table ")
        return tuple(table or _PERCENTILE_LEVEL.fullmatch(level) is None for level in self.levels)

    def for_stations(self, station_ids: Sequence[str]) -> StationThresholds:
        """The thresholds of ``station_ids`` in that order; a station not held here gets NaN."""
        row = {station: i for i, station in enumerate(self.stations)}
        index = np.array([row.get(station, -1) for station in station_ids], dtype=np.int64)
        held = (index >= 0)[:, None]

        def take(array: NDArray[np.float64] | NDArray[np.int64], fill: float) -> NDArray[np.float64]:
            if not self.stations:
                return np.full((index.size, len(self.levels)), fill)
            return np.where(held, array[np.maximum(index, 0)], fill)

        return StationThresholds(self.levels, tuple(station_ids), take(self.values, np.nan), self.source,
                                 self.labels, take(self.lower, np.nan), take(self.upper, np.nan),
                                 take(self.years, 0).astype(np.int64),
                                 tuple(self.notes[i] if i >= 0 else "" for i in index), self.confidence)


def mean_flow_name(times: ArrayLike) -> str:
    """``"daily-mean"`` for a daily series (``"hourly-mean"``, ``"6-hour-mean"``, ...): what one value is."""
    stamps = np.asarray(times, dtype="datetime64[s]")
    seconds = int(np.median(np.diff(stamps).astype(np.int64))) if stamps.size > 1 else 86400
    if seconds == 86400:
        return "daily-mean"
    if seconds == 3600:
        return "hourly-mean"
    if seconds % 3600 == 0:
        return f"{seconds // 3600}-hour-mean"
    return f"{seconds // 60}-minute-mean" if seconds % 60 == 0 else f"{seconds}-second-mean"


def derived_thresholds(values: ArrayLike, times: ArrayLike, station_ids: Sequence[str],
                       periods: Sequence[float] = (2, 5), percentiles: Sequence[float] = (95.0, 99.0),
                       analysis: FrequencyAnalysis | None = None, period_label: str = "") -> StationThresholds:
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
        Return periods in years: levels ``"2-year"``, ``"5-year"`` (:func:`.return_periods.fit_return_periods`),
        labelled ``"2-year daily-mean flow"``, with their interval, water years and notes.
    percentiles
        Percentiles of all finite steps: levels ``"q95"``, ``"q99"``, labelled ``"daily-mean flow exceeded 5 %
        of the time"`` (NaN for a station without any finite value).
    analysis
        How the return-period flows are fitted (default: Gumbel by L-moments, 90 % bootstrap interval).
    period_label
        How ``source`` names the period; by default the first and last dates of ``times``.
    """
    flows = np.asarray(values, dtype=np.float64)
    if flows.ndim != 2 or flows.shape[0] != len(station_ids):
        raise ValueError(f"values have shape {flows.shape}, expected [{len(station_ids)} stations, time]")
    analysis = analysis if analysis is not None else FrequencyAnalysis()
    stamps = np.asarray(times, dtype="datetime64[s]")
    fit = fit_return_periods(flows, stamps, periods, analysis)
    known = np.isfinite(flows).any(axis=1)
    quantiles = np.full((flows.shape[0], len(percentiles)), np.nan)
    if known.any():
        quantiles[known] = np.nanpercentile(flows[known], list(percentiles), axis=1).T
    label = period_label or "..".join(np.datetime_as_string(stamps[[0, -1]], unit="D"))
    mean = mean_flow_name(stamps)
    levels = tuple(f"{period:g}-year" for period in periods) + tuple(f"q{p:g}" for p in percentiles)
    labels = (tuple(f"{period:g}-year {mean} flow" for period in periods)
              + tuple(f"{mean} flow exceeded {100.0 - p:g} % of the time" for p in percentiles))
    beside = np.full(quantiles.shape, np.nan)
    years = np.concatenate([np.repeat(fit.years[:, None], len(periods), axis=1),
                            np.zeros(quantiles.shape, dtype=np.int64)], axis=1)
    return StationThresholds(levels, tuple(station_ids), np.concatenate([fit.flows, quantiles], axis=1),
                             f"training period {label}, {mean} flows; return periods: {analysis.describe()}",
                             labels, np.concatenate([fit.lower, beside], axis=1),
                             np.concatenate([fit.upper, beside], axis=1), years, fit.notes,
                             analysis.confidence if analysis.has_interval and periods else None)


def read_threshold_table(path: str | Path, station_ids: Sequence[str], target: TargetUnits,
                         rating_curves: RatingCurves | None = None) -> StationThresholds:
    """Read thresholds from a CSV with the columns ``station``, ``level`` and ``discharge [UNITS]`` or
    ``stage [UNITS]``, the units in the header (:mod:`.table_units`): ``station,level,discharge [m3/s]``.

    Station ids are read as text (leading zeros kept). Each station may list its own levels; the
    result has every level the file names, in the order of first appearance, and NaN where a
    station lacks one and for the ``station_ids`` the file does not list. A discharge is converted to the
    ``target``'s units (a volume rate to a depth rate through the station's catchment area); a stage is first
    converted to the units of its station's rating curve in ``rating_curves``, which turns it into a discharge
    (:mod:`.rating_curve`, already in the target's units). Other columns are ignored, but not a ``units`` column.

    Raises
    ------
    InputDataError
        One line naming the file, the line and the problem: unreadable or empty file, a missing
        column, a number column whose header names no units (or units of another quantity), a ``units`` column,
        an empty station or level, a discharge that is not a finite non-negative number,
        a row with both or neither of discharge and stage, a stage without a rating curve for its
        station or outside its curve, a (station, level) given twice, a station not among ``station_ids``, or a
        discharge that needs a catchment area its station lacks.
    """
    path = Path(path)
    wanted = {station: i for i, station in enumerate(station_ids)}
    units: dict[str, str] = {}
    rows = list(table_rows(path, TABLE_COLUMNS[:2], one_of=("discharge", "stage"), units=units))
    columns = {column: column_units(path, units, column, kinds) for column, kinds in
               (("discharge", ("depth_rate", "volume_rate")), ("stage", ("depth",))) if column in units}
    found: dict[tuple[str, str], tuple[float, int]] = {}
    any_stage = False
    for line, row in rows:
        station, level = row["station"], row["level"]
        if not station or not level:
            raise InputDataError(path, "station and level must not be empty", f"line {line}")
        known_station(station, wanted, path, line)
        discharge_text, stage_text = row.get("discharge", ""), row.get("stage", "")
        if discharge_text and stage_text:
            raise InputDataError(path, "give a discharge or a stage, not both", f"line {line}")
        if stage_text:
            any_stage = True
            discharge = _stage_discharge(table_number(stage_text, "stage", path, line, non_negative=False),
                                         columns["stage"], station, level, rating_curves, path, line)
        else:
            discharge = to_target(table_number(discharge_text, "discharge", path, line), columns["discharge"],
                                  station, target, path, line)
        if (station, level) in found:
            raise InputDataError(path, f"station {station} level {level!r} is already given on line "
                                       f"{found[station, level][1]}", f"line {line}")
        found[station, level] = (discharge, line)
    levels = tuple(dict.fromkeys(level for _, level in found))
    column = {level: j for j, level in enumerate(levels)}
    values = np.full((len(station_ids), len(levels)), np.nan)
    for (station, level), (discharge, _) in found.items():
        values[wanted[station], column[level]] = discharge
    given = ", ".join(f"{name} in {text}" for name, text in columns.items())
    rated = f", stages through the rating curves of {rating_curves.path}" if any_stage and rating_curves else ""
    return StationThresholds(levels, tuple(station_ids), values, f"table {path} ({given}){rated}")


def _stage_discharge(stage: float, units: str, station: str, level: str, rating_curves: RatingCurves | None,
                     path: Path, line: int) -> float:
    """The discharge of a threshold given as a stage in ``units``, or an :class:`InputDataError` naming the line."""
    if rating_curves is None:
        raise InputDataError(path, f"station {station} level {level!r} is a stage: a rating curve table must "
                                   "turn it into a discharge (--rating-curve FILE)", f"line {line}")
    curve = rating_curves.curves.get(station)
    if curve is None:
        raise InputDataError(path, f"station {station} level {level!r} is a stage, and {rating_curves.path} has "
                                   "no rating curve for the station", f"line {line}")
    try:
        return curve.discharge(stage * length_factor(units, rating_curves.stage_units))
    except ValueError as error:
        raise InputDataError(path, f"station {station} level {level!r}: {error} ({rating_curves.path}, in "
                                   f"{rating_curves.stage_units})",
                             f"line {line}") from None


def station_thresholds(target: ArrayLike, times: ArrayLike, station_ids: Sequence[str],
                       table: str | Path | None = None, rating_curves: RatingCurves | None = None,
                       analysis: FrequencyAnalysis | None = None, period_label: str = "",
                       units: TargetUnits | None = None) -> StationThresholds:
    """The thresholds a forecast uses: the user's ``table`` when given (it replaces the derived ones whole:
    the agency's levels, no 2-year flow beside them; read into ``units``, the target's), else
    :func:`derived_thresholds` of the training-period ``target`` ``[S, T]`` at ``times``."""
    if table is not None:
        if units is None:
            raise ValueError("a thresholds table is read into the target's units: give units")
        return read_threshold_table(table, station_ids, units, rating_curves)
    return derived_thresholds(target, times, station_ids, analysis=analysis, period_label=period_label)
