"""The per-station work: read every source for one station and put it on the grid.

:func:`ingest_station` is a pure function of its arguments (station, plans, grid) returning plain
arrays, so it can be mapped over stations by any executor (a dask cluster in a later issue).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from hydroseq.config.ingest import SourceConfig, parse_step
from hydroseq.errors import InputDataError
from hydroseq.ingest import units
from hydroseq.ingest.readers import READERS, RawSeries
from hydroseq.ingest.resample import to_grid
from hydroseq.ingest.stations import Station
from hydroseq.ingest.timegrid import TimeGrid, interval_ends, standard_zone


@dataclass(frozen=True)
class SourcePlan:
    """A source and the files of it that hold one station's data."""

    source: SourceConfig
    files: tuple[Path, ...]


@dataclass(frozen=True)
class StationResult:
    """One station's variables on the grid (float32, NaN = missing)."""

    station: Station
    values: dict[str, np.ndarray]


def ingest_station(station: Station, plans: list[SourcePlan], grid: TimeGrid) -> StationResult:
    """Read, convert and grid every source of ``station``.

    Raises :class:`InputDataError` naming the file and the line or timestamp for unusable input:
    unparsable values, unsorted or duplicated timestamps (after conversion to UTC), wall-clock
    times that do not exist in the zone, no overlap with the grid, or an unknown area where a
    depth/discharge conversion needs one.
    """
    values: dict[str, np.ndarray] = {}
    for plan in plans:
        values.update(_grid_source(station, plan, grid))
    return StationResult(station, values)


def _grid_source(station: Station, plan: SourcePlan, grid: TimeGrid) -> dict[str, np.ndarray]:
    source = plan.source
    step = None if source.frequency == "irregular" else parse_step(source.frequency)
    zone = _zone(station, source)
    pieces = [_chronological(_read(station, source, path), zone, source, step) for path in plan.files]
    ends = np.concatenate([piece_ends for _, piece_ends in pieces])
    pieces = [piece for piece, _ in pieces]
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
    return gridded


def _read(station: Station, source: SourceConfig, path: Path) -> RawSeries:
    reader = READERS[source.format]
    series = reader.read(source, path, station if source.format == "netcdf_grid" else station.id)
    lengths = {len(v) for v in series.values.values()}
    if lengths != {len(series.stamps)}:
        raise InputDataError(path, "variables and timestamps have different lengths", f"station {station.id}")
    return series


def _zone(station: Station, source: SourceConfig) -> str:
    if source.timezone not in ("station", "station_standard"):
        return source.timezone
    if station.timezone is None:
        raise InputDataError(source.label, f"source uses timezone: {source.timezone}, but station "
                             f"{station.id} has no timezone in the station table")
    return station.timezone if source.timezone == "station" else standard_zone(station.timezone)


def _chronological(series: RawSeries, zone: str, source: SourceConfig,
                   step: pd.Timedelta | None) -> tuple[RawSeries, np.ndarray]:
    """The series with its UTC end instants; rows of a repeated fall-back hour are put in time
    order (only they may move: any other disorder is left for :func:`_check_order` to report)."""
    try:
        ends, ambiguous = interval_ends(series.stamps, zone, source.timestamp, step)
    except (ValueError, OverflowError) as error:  # pandas' NonExistent/AmbiguousTimeError are ValueErrors
        raise InputDataError(series.path, f"local times cannot be converted from {zone} to UTC: {error}") from None
    if not ambiguous.any() or (np.diff(ends) > 0).all() or not (np.diff(ends[~ambiguous]) > 0).all():
        return series, ends
    order = np.argsort(ends, kind="stable")
    reordered = RawSeries(series.path, series.stamps[order], {k: v[order] for k, v in series.values.items()},
                          None if series.lines is None else series.lines[order])
    return reordered, ends[order]


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
