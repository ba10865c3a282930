"""The stations of a published large-sample dataset, read from its attribute files as distributed.

* **Caravan** (``dataset: caravan``, ``source: camels``): ``<root>/attributes/<source>/`` holds
  ``attributes_other_<source>.csv`` (``gauge_id,gauge_name,country,gauge_lat,gauge_lon,area``,
  area in km²), ``attributes_caravan_<source>.csv`` (climate indices), ``attributes_hydroatlas_<source>.csv``
  and any other ``attributes_*_<source>.csv``, all keyed by ``gauge_id`` = ``<source>_<basin>``.
  A station's id is the basin (``camels_01022500`` -> ``01022500``), as the sources give it with
  ``station_id_prefix: <source>_``.
* **CAMELS-US** (``dataset: camels_us``): ``<root>/camels_attributes_v2.0/camels_*.txt``
  (``;``-separated, keyed by ``gauge_id``; ``gauge_name`` in ``camels_name.txt``, ``gauge_lat``,
  ``gauge_lon`` in ``camels_topo.txt``). The area is the one in the third header line of the basin's
  forcing file (``basin_mean_forcing/<product>/[<huc2>/]<id>_lump_*_forcing_leap.txt``, m²), the
  area CAMELS used to express streamflow as a depth; without a forcing file, ``area_gages2``.

A static attribute is any numeric column of any attribute file, joined by ``gauge_id``. A station's
time zone is ``stations.timezones[id]``, else a ``timezone`` attribute column where a file has one,
else the zone at its coordinates (``timezonefinder``, offline; a point at sea has none).
"""

from __future__ import annotations

import functools
import glob
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from timezonefinder import TimezoneFinder

from hydroseq.config.ingest import StationsConfig
from hydroseq.errors import InputDataError
from hydroseq.grid import parse_timezone
from hydroseq.ingest.stations import Station, requested_ids, without_excluded

CAMELS_ATTRIBUTES = "camels_attributes_v2.0"
CAMELS_AREA_LINE = 3  # the forcing-file header line holding the basin area in m²


@dataclass(frozen=True)
class _AttributeFile:
    """One attribute file: its rows by station id and each row's line in the file."""

    path: Path
    rows: pd.DataFrame
    lines: dict[str, int]

    def where(self, station_id: str) -> str:
        return f"line {self.lines[station_id]}, basin {station_id}"


def published_stations(config: StationsConfig) -> list[Station]:
    """The stations of ``config.dataset`` under ``config.root`` (all, or those ``config.ids`` lists).

    Raises :class:`InputDataError` naming the file and the basin for a missing root or attribute
    file, a basin not in the attributes, an attribute that is missing or not a number, an empty
    latitude or longitude, an unknown time zone, or coordinates where no time zone is found.
    """
    root = config.root
    assert root is not None  # the config's validator requires it with a dataset
    if not root.is_dir():
        raise InputDataError(root, f"the {config.dataset} root folder does not exist")
    if config.dataset == "caravan":
        assert config.source is not None  # the config's validator requires it for caravan
        files = _caravan_files(root, config.source)
        prefix = f"{config.source}_"
    else:
        files = _camels_files(root)
        prefix = ""
    listing = _holding(files, "gauge_name")
    wanted = requested_ids(config)
    ids = list(listing.rows.index) if wanted is None else [_strip(i, prefix) for i in wanted]
    for station_id in ids:
        if station_id not in listing.rows.index:
            raise InputDataError(listing.path, f"basin {station_id} (stations.ids) is not in the attributes")
    return without_excluded([_station(station_id, files, config, root) for station_id in ids], config)


def _caravan_files(root: Path, source: str) -> list[_AttributeFile]:
    folder = root / "attributes" / source
    other = folder / f"attributes_other_{source}.csv"
    if not other.is_file():
        raise InputDataError(other, f"attribute file missing: a Caravan root has attributes/{source}/"
                             f"attributes_other_{source}.csv (gauge names, coordinates, areas)")
    paths = [other, *(path for path in sorted(folder.glob(f"attributes_*_{source}.csv")) if path != other)]
    return [_read_attributes(path, ",", f"{source}_") for path in paths]


def _camels_files(root: Path) -> list[_AttributeFile]:
    folder = root / CAMELS_ATTRIBUTES
    for name in ("camels_name.txt", "camels_topo.txt"):
        if not (folder / name).is_file():
            raise InputDataError(folder / name, f"attribute file missing: a CAMELS-US root has "
                                 f"{CAMELS_ATTRIBUTES}/{name}")
    return [_read_attributes(path, ";", "") for path in sorted(folder.glob("camels_*.txt"))]


def _read_attributes(path: Path, separator: str, prefix: str) -> _AttributeFile:
    try:
        frame = pd.read_csv(path, sep=separator, dtype={"gauge_id": str})
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise InputDataError(path, f"cannot read the attribute file: {error}") from None
    if "gauge_id" not in frame.columns:
        raise InputDataError(path, f"no gauge_id column; found {', '.join(map(str, frame.columns))}", "line 1")
    ids = frame["gauge_id"].astype(str).str.strip().map(lambda gauge: _strip(gauge, prefix))
    duplicated = ids[ids.duplicated()]
    if len(duplicated):
        raise InputDataError(path, f"basin {duplicated.iloc[0]} appears more than once",
                             f"line {duplicated.index[0] + 2}")
    lines = {station_id: position + 2 for position, station_id in enumerate(ids)}
    return _AttributeFile(path, frame.set_index(ids.to_numpy()), lines)


def _strip(station_id: str, prefix: str) -> str:
    return station_id[len(prefix):] if prefix and station_id.startswith(prefix) else station_id


def _holding(files: list[_AttributeFile], column: str) -> _AttributeFile:
    """The one attribute file with ``column``; raises if none or several have it."""
    holding = [file for file in files if column in file.rows.columns]
    if len(holding) != 1:
        found = "none of the attribute files" if not holding else f"{len(holding)} attribute files"
        raise InputDataError(files[0].path.parent, f"attribute {column!r} is in {found} "
                             f"({', '.join(file.path.name for file in holding or files)})")
    return holding[0]


def _value(files: list[_AttributeFile], column: str, station_id: str) -> tuple[Any, _AttributeFile]:
    file = _holding(files, column)
    if station_id not in file.rows.index:
        raise InputDataError(file.path, f"basin {station_id} is not in this attribute file")
    return file.rows.at[station_id, column], file


def _number(files: list[_AttributeFile], column: str, station_id: str) -> float:
    value, file = _value(files, column, station_id)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InputDataError(file.path, f"attribute {column}: {value!r} is not a number",
                             file.where(station_id)) from None


def _station(station_id: str, files: list[_AttributeFile], config: StationsConfig, root: Path) -> Station:
    lat, lon = (_number(files, column, station_id) for column in ("gauge_lat", "gauge_lon"))
    for column, number in (("gauge_lat", lat), ("gauge_lon", lon)):
        if not math.isfinite(number):
            file = _holding(files, column)
            raise InputDataError(file.path, f"attribute {column} is empty", file.where(station_id))
    name, _ = _value(files, "gauge_name", station_id)
    area = _number(files, "area", station_id) if config.dataset == "caravan" else _camels_area(root, files, station_id)
    return Station(id=station_id, name=str(name), lat=lat, lon=lon, area_km2=area,
                   timezone=_timezone(station_id, lat, lon, files, config),
                   static={column: _number(files, column, station_id) for column in config.static_attributes})


def _camels_area(root: Path, files: list[_AttributeFile], station_id: str) -> float:
    """The basin area in km² from the header of the basin's first forcing file, else ``area_gages2``."""
    folder = root / "basin_mean_forcing"
    name = f"{glob.escape(station_id)}_lump_*_forcing_leap.txt"
    forcing = sorted([*folder.glob(f"*/{name}"), *folder.glob(f"*/*/{name}")])
    if not forcing:
        return _number(files, "area_gages2", station_id)
    try:
        header = forcing[0].read_text().splitlines()[:CAMELS_AREA_LINE]
        return float(header[CAMELS_AREA_LINE - 1]) / 1e6
    except (OSError, UnicodeDecodeError, IndexError, ValueError):
        raise InputDataError(forcing[0], "no basin area (m²) in the header", f"line {CAMELS_AREA_LINE}") from None


def _timezone(station_id: str, lat: float, lon: float, files: list[_AttributeFile], config: StationsConfig) -> str:
    if station_id in config.timezones:
        return config.timezones[station_id]
    if any("timezone" in file.rows.columns for file in files):
        zone, file = _value(files, "timezone", station_id)
        if not pd.isna(zone):
            try:
                parse_timezone(str(zone))
            except ValueError as error:
                raise InputDataError(file.path, str(error), file.where(station_id)) from None
            return str(zone)
    found = _finder().timezone_at_land(lng=lon, lat=lat)
    if found is None:
        listing = _holding(files, "gauge_lat")
        raise InputDataError(listing.path, f"no time zone found at lat {lat}, lon {lon} (not on land): give "
                             "the station's zone in stations.timezones", listing.where(station_id))
    return found


@functools.cache
def _finder() -> TimezoneFinder:
    """The offline zone finder, its polygons loaded once per process."""
    return TimezoneFinder(in_memory=True)
