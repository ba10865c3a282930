"""Delft-FEWS PI-XML time series (``format: pi_xml``): the files a FEWS General Adapter exports.

A file holds ``series``, each with a header (``locationId``, ``parameterId``, ``type``, ``timeStep``,
``missVal``, ``units``) and its ``event`` elements (``date``, ``time``, ``value``), all in the document's
``timeZone`` (:mod:`hydroseq.fileio.pi_xml` reads the file). The station is the ``locationId`` (after
``station_id_prefix`` and ``station_map``); each variable of the source reads the series whose ``parameterId``
is its ``source``.
Values equal to the header's ``missVal``, or ``NaN``, are missing; the ``flag`` attribute is not read.

A series must agree with its source, else a one-line error names the file and the header's line:

* ``type`` ``mean`` or ``accumulative`` (stamped at the end of the interval a value covers) needs
  ``timestamp: interval_end``, ``instantaneous`` needs ``timestamp: instantaneous``;
* an equidistant ``timeStep`` must be the source's ``frequency``, ``nonequidistant`` needs ``irregular``;
* ``units``, when the header has them, must be the variable's (``m3/s`` and ``m3 s-1`` agree);
* one series per location and parameter: an ensemble member or a qualifier of the same one is refused.

Events are read with their line: a duplicated or an out-of-order time in a series names it. With a
``timeZone`` the times are converted to UTC by it (and a source ``timezone`` must agree with it); without
one they are wall-clock times of the source's ``timezone``. Values are stored in a ``.bin`` file beside
the XML when the General Adapter exports binary; those files are refused (export without ``exportBinFile``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from hydroseq.config.ingest import SourceConfig
from hydroseq.config.units import same_units
from hydroseq.errors import InputDataError
from hydroseq.fileio.pi_xml import PiSeries, read_pi_series
from hydroseq.ingest.readers.base import RawSeries, cached_per_file

STAMPED_AT_END = ("mean", "accumulative")


def station_ids(source: SourceConfig, path: Path) -> list[str]:
    """The locations of ``path`` with a series of one of the source's parameters (as station ids)."""
    wanted = {spec.source for spec in source.variables.values()}
    return sorted({station for station, parameter in _load(path, source).series if parameter in wanted})


def read(source: SourceConfig, path: Path, station_id: str) -> RawSeries:
    """The source's variables at ``station_id``, on the union of their series' times (NaN where one has none)."""
    indexed = _load(path, source)
    chosen: dict[str, PiSeries] = {}
    for name, spec in source.variables.items():
        candidates = indexed.series.get((station_id, spec.source), [])
        if not candidates:
            raise InputDataError(path, f"no series of parameter {spec.source!r} (variable {name}) for location "
                                 f"{station_id}")
        if len(candidates) > 1:
            raise InputDataError(path, f"{len(candidates)} series of {candidates[0].label} (the next one: "
                                 f"{candidates[1].label}); a source reads one series per location and parameter",
                                 f"line {candidates[1].header_line}")
        chosen[name] = _checked(path, candidates[0], source, spec.units, spec.convert, indexed.offset)
    stamps = pd.DatetimeIndex(np.unique(np.concatenate([series.stamps.asi8 for series in chosen.values()]))
                              ).as_unit("ns")
    values, lines = {}, np.zeros(len(stamps), dtype=np.int64)
    for name, series in reversed(chosen.items()):  # the first variable's line wins where several have a time
        positions = stamps.get_indexer(series.stamps)
        values[name] = np.full(len(stamps), np.nan)
        values[name][positions] = series.values
        lines[positions] = series.lines
    offsets = None if indexed.offset is None else np.full(len(stamps), indexed.offset.value, dtype=np.int64)
    return RawSeries(path, stamps, {name: values[name] for name in source.variables}, lines, offsets)


@dataclass(frozen=True)
class _Indexed:
    """A file's series by (station id, parameter), and its ``timeZone``."""

    series: dict[tuple[str, str], list[PiSeries]]
    offset: pd.Timedelta | None


@cached_per_file(maxsize=4)
def _load(path: Path, source: SourceConfig) -> _Indexed:
    document = read_pi_series(path)
    if any(not len(series.stamps) for series in document.series) and path.with_suffix(".bin").exists():
        raise InputDataError(path, f"the values are in the binary file {path.with_suffix('.bin').name}, which "
                             "hydroseq does not read: export the series with their events (exportBinFile false)")
    by_key: dict[tuple[str, str], list[PiSeries]] = {}
    for series in document.series:
        by_key.setdefault((_station(series.location, source), series.parameter), []).append(series)
    return _Indexed(by_key, document.offset)


def _station(location: str, source: SourceConfig) -> str:
    prefix = source.station_id_prefix
    stripped = location[len(prefix):] if prefix and location.startswith(prefix) else location
    return source.station_map.get(stripped, stripped)


def _checked(path: Path, series: PiSeries, source: SourceConfig, units: str, convert: bool,
             offset: pd.Timedelta | None) -> PiSeries:
    """``series`` if its header agrees with the source and its times increase; else the error naming the line."""
    where = f"line {series.header_line}"
    wanted = "interval_end" if series.kind in STAMPED_AT_END else "instantaneous"
    if source.timestamp != wanted:
        raise InputDataError(path, f"{series.label}: type {series.kind} stamps each value at "
                             f"{'the end of its interval' if wanted == 'interval_end' else 'its instant'}: set the "
                             f"source's timestamp to {wanted} (not {source.timestamp})", where)
    if series.step != source.step:
        written = "nonequidistant" if series.step is None else f"{series.step / pd.Timedelta(hours=1):g} h"
        raise InputDataError(path, f"{series.label}: timeStep {written} is not the source's frequency "
                             f"{source.frequency}", where)
    if series.units is not None and not (same_units(series.units, units) if convert else series.units == units):
        raise InputDataError(path, f"{series.label}: units {series.units!r} in the file, the source declares "
                             f"{units!r}", where)
    steps = np.diff(series.stamps.asi8)
    if (steps <= 0).any():
        bad = int(np.argmax(steps <= 0)) + 1
        problem = "duplicated timestamp" if steps[bad - 1] == 0 else "timestamp earlier than the one before (unsorted)"
        zone = " UTC" if offset is not None else ""
        raise InputDataError(path, f"{series.label}: {problem} {series.stamps[bad]}{zone}",
                             f"line {int(series.lines[bad])}")
    return series
