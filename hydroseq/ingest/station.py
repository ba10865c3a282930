"""The per-station work: read every source for one station and put it on the grid.

:func:`ingest_station` is a pure function of its arguments (station, plans, grid) returning plain
arrays, so it can be mapped over stations by any executor (a dask cluster in a later issue).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

import hydroseq.ingest.plausibility as plausibility
import hydroseq.ingest.units as units
from hydroseq.config.ingest import SourceConfig
from hydroseq.errors import InputDataError
from hydroseq.ingest.readers import READERS, RawSeries
from hydroseq.ingest.readers.base import format_offset
from hydroseq.ingest.resample import to_grid
from hydroseq.ingest.stations import Station
from hydroseq.ingest.timegrid import TimeGrid, interval_ends, standard_zone, zone_offsets


@dataclass(frozen=True)
class SourcePlan:
    """A source and the files of it that hold one station's data."""

    source: SourceConfig
    files: tuple[Path, ...]


@dataclass(frozen=True)
class StationResult:
    """One station's variables on the grid (float32, NaN = missing), and per variable how many of
    its observations were implausible and set missing (``on_implausible: mark_missing``)."""

    station: Station
    values: dict[str, np.ndarray]
    marked_missing: dict[str, int] = field(default_factory=dict)


def ingest_station(station: Station, plans: list[SourcePlan], grid: TimeGrid) -> StationResult:
    """Read, convert and grid every source of ``station``.

    Raises :class:`InputDataError` naming the file and the line or timestamp for unusable input:
    unparsable values, unsorted or duplicated timestamps (after conversion to UTC), wall-clock
    times that do not exist in the zone, UTC offsets in the file that contradict the source's
    zone, implausible values (``on_implausible: fail``), no overlap with the grid, or an unknown
    area where a depth/discharge conversion needs one.
    """
    values: dict[str, np.ndarray] = {}
    marked_missing: dict[str, int] = {}
    for plan in plans:
        gridded, counts = _grid_source(station, plan, grid)
        values.update(gridded)
        marked_missing.update(counts)
    return StationResult(station, values, marked_missing)


def _grid_source(station: Station, plan: SourcePlan, grid: TimeGrid) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    source = plan.source
    step = source.step
    zone = _zone(station, source)
    chronological = []
    counts = dict.fromkeys(source.variables, 0)
    for path in plan.files:
        screened, piece_counts = plausibility.screen(_read(station, source, path), source)
        chronological.append(_chronological(screened, zone, source, step))
        counts = {name: counts[name] + piece_counts[name] for name in counts}
    ends = np.concatenate([piece_ends for _, piece_ends in chronological])
    pieces = [piece for piece, _ in chronological]
    _check_order(pieces, ends)
    _check_overlap(plan, ends, grid)
    gridded = {}
    for name, spec in source.variables.items():
        raw = np.concatenate([piece.values[name] for piece in pieces])
        canonical = units.to_canonical(raw, spec, step)
        min_coverage = spec.min_coverage if spec.min_coverage is not None else source.min_coverage
        on_grid = to_grid(ends, canonical, grid, spec.aggregation, step, min_coverage, source.fill_limit)
        try:
            converted = units.to_output(on_grid, spec, grid.step, station.area_km2)
        except units.AreaMissing as error:
            raise InputDataError(source.label, f"variable {name}: {error}", f"station {station.id}") from None
        gridded[name] = converted.astype(np.float32)
    return gridded, counts


def _read(station: Station, source: SourceConfig, path: Path) -> RawSeries:
    reader = READERS[source.format]
    series = reader.read(source, path, station if source.format == "netcdf_grid" else station.id)
    lengths = {len(v) for v in series.values.values()}
    if lengths != {len(series.stamps)}:
        raise InputDataError(path, "variables and timestamps have different lengths", f"station {station.id}")
    return series


def _zone(station: Station, source: SourceConfig) -> str | None:
    if source.timezone not in ("station", "station_standard"):
        return source.timezone
    if station.timezone is None:
        raise InputDataError(source.label, f"source uses timezone: {source.timezone}, but station "
                             f"{station.id} has no timezone in the station table")
    return station.timezone if source.timezone == "station" else standard_zone(station.timezone)


def _chronological(series: RawSeries, zone: str | None, source: SourceConfig,
                   step: pd.Timedelta | None) -> tuple[RawSeries, np.ndarray]:
    """The series with its UTC end instants; rows of a repeated fall-back hour are put in time
    order (only they may move: any other disorder is left for :func:`_check_order` to report)."""
    if series.utc_offsets is not None and zone is not None:
        _check_offsets_agree(series, zone)
    try:
        ends, ambiguous = interval_ends(series.stamps, zone, source.timestamp, step, series.utc_offsets)
    except (ValueError, OverflowError) as error:  # pandas' NonExistent/AmbiguousTimeError are ValueErrors
        raise InputDataError(series.path, f"local times cannot be converted from {zone} to UTC: {error}") from None
    if not ambiguous.any() or (np.diff(ends) > 0).all() or not (np.diff(ends[~ambiguous]) > 0).all():
        return series, ends
    order = np.argsort(ends, kind="stable")
    return series.take(order), ends[order]


def _check_offsets_agree(series: RawSeries, zone: str) -> None:
    """Stamps that carry a UTC offset are converted by it; the source's zone must give the same
    offset at that instant (a fixed zone: the same offset everywhere; a DST zone: the standard or
    daylight offset in force then), otherwise the config and the file disagree on the clock."""
    assert series.utc_offsets is not None
    expected = zone_offsets(series.stamps, zone)
    wrong = expected != series.utc_offsets
    if wrong.any():
        first = int(np.argmax(wrong))
        raise InputDataError(series.path, f"the stamp's UTC offset {format_offset(int(series.utc_offsets[first]))} "
                             f"contradicts the source's timezone {zone} (offset {format_offset(int(expected[first]))} "
                             "at that instant); stamps with an offset are converted by it: set timezone to "
                             "agree with the file, or leave it unset", series.where(first))


def _check_order(pieces: list[RawSeries], ends: np.ndarray) -> None:
    if len(ends) < 2:
        return
    steps = np.diff(ends)
    bad = np.flatnonzero(steps <= 0)
    if not len(bad):
        return
    position = int(bad[0]) + 1
    piece, offset = _locate(pieces, position)
    problem = "duplicated timestamp" if steps[bad[0]] == 0 else "timestamp earlier than the one before (unsorted)"
    raise InputDataError(piece.path, f"{problem}, after conversion to UTC", piece.where(offset))


def _locate(pieces: list[RawSeries], position: int) -> tuple[RawSeries, int]:
    for piece in pieces:
        if position < len(piece.stamps):
            return piece, position
        position -= len(piece.stamps)
    return pieces[-1], len(pieces[-1].stamps) - 1


def _check_overlap(plan: SourcePlan, ends: np.ndarray, grid: TimeGrid) -> None:
    last = grid.labels[-1].value
    inside = (ends > grid.origin_ns) & (ends <= last)
    if inside.any() or (len(ends) and ends[0] <= grid.origin_ns and ends[-1] > last):
        return
    span = "no observations" if not len(ends) else (
        f"observations known from {pd.Timestamp(ends[0])} to {pd.Timestamp(ends[-1])} UTC")
    where = ", ".join(str(path) for path in plan.files[:3])
    raise InputDataError(where, f"{span}: no overlap with the grid {grid.labels[0]} .. {grid.labels[-1]} UTC")
