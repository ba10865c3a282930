"""The stations: ids (text), names, coordinates, areas, time zones and static attributes, from a
station table or from a published dataset's attribute files (:mod:`hydroseq.ingest.published`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from hydroseq.config.ingest import StationsConfig
from hydroseq.errors import InputDataError
from hydroseq.grid import parse_timezone

REQUIRED_COLUMNS = ("station_id", "name", "lat", "lon", "area_km2")


@dataclass(frozen=True)
class Station:
    """One row of the station table; ``outline`` is its basin polygon as WKB in WGS84 longitude/latitude when
    the stations config names outlines (:mod:`hydroseq.ingest.outlines`)."""

    id: str
    name: str
    lat: float
    lon: float
    area_km2: float
    timezone: str | None = None
    static: dict[str, float] = field(default_factory=dict)
    outline: bytes | None = field(default=None, repr=False)


def table_stations(config: StationsConfig) -> list[Station]:
    """Read and check the stations of the table ``config.path``, restricted to ``config.ids`` when given.

    Raises :class:`InputDataError` naming the table and the row for a missing column, a duplicated
    id, a non-numeric coordinate/attribute, an unknown time zone, or an id in ``ids`` not in the table.
    """
    assert config.path is not None  # a config names a table or a published dataset (validated)
    path = config.path
    try:
        table = pd.read_csv(path, dtype={"station_id": str}, keep_default_na=True)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise InputDataError(path, f"cannot read the station table: {error}") from None
    missing = [c for c in (*REQUIRED_COLUMNS, *config.static_attributes) if c not in table.columns]
    if missing:
        raise InputDataError(path, f"missing column(s) {', '.join(missing)}; found {', '.join(table.columns)}")
    duplicated = table["station_id"][table["station_id"].duplicated()]
    if len(duplicated):
        raise InputDataError(path, f"station id {duplicated.iloc[0]!r} appears more than once",
                             f"line {duplicated.index[0] + 2}")
    stations = [_row_to_station(row, index, config) for index, row in table.iterrows()]
    wanted = requested_ids(config)
    if wanted is not None:
        by_id = {station.id: station for station in stations}
        unknown = [i for i in wanted if i not in by_id]
        if unknown:
            raise InputDataError(path, f"station(s) {', '.join(unknown)} listed in stations.ids are not in the table")
        stations = [by_id[i] for i in wanted]
    return without_excluded(stations, config)


def requested_ids(config: StationsConfig) -> list[str] | None:
    """The ids ``config.ids`` lists, read from its file when it names one (one id per line, blank
    lines skipped); ``None`` when it is unset (all stations)."""
    return _listed_ids(config.ids, "stations.ids")


def without_excluded(stations: list[Station], config: StationsConfig) -> list[Station]:
    """``stations`` less those ``config.exclude_ids`` lists (ids it lists that are absent are no error:
    a list of held-out basins serves datasets that hold only some of them)."""
    excluded = set(_listed_ids(config.exclude_ids, "stations.exclude_ids") or ())
    kept = [station for station in stations if station.id not in excluded]
    if excluded and not kept:
        raise InputDataError(config.label, "stations.exclude_ids leaves no station")
    return kept


def _listed_ids(listing: list[str] | Path | None, key: str) -> list[str] | None:
    if not isinstance(listing, Path):
        return listing
    try:
        text = listing.read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise InputDataError(listing, f"cannot read the station ids listed in {key}: {error}") from None
    ids = [line.strip() for line in text.splitlines() if line.strip()]
    if not ids:
        raise InputDataError(listing, f"the file of station ids ({key}) lists none")
    return ids


def _row_to_station(row: pd.Series, index: int, config: StationsConfig) -> Station:
    where = f"line {index + 2}, station {row['station_id']}"
    numbers = {}
    for column in ("lat", "lon", "area_km2", *config.static_attributes):
        try:
            numbers[column] = float(row[column])
        except (TypeError, ValueError):
            raise InputDataError(config.path, f"column {column}: {row[column]!r} is not a number", where) from None
    for column in ("lat", "lon"):
        if not math.isfinite(numbers[column]):
            raise InputDataError(config.path, f"column {column} is empty", where)
    timezone = row.get("timezone")
    timezone = None if timezone is None or pd.isna(timezone) else str(timezone)
    if timezone is not None:
        try:
            parse_timezone(timezone)
        except ValueError as error:
            raise InputDataError(config.path, str(error), where) from None
    return Station(
        id=str(row["station_id"]).strip(), name=str(row["name"]), lat=numbers["lat"], lon=numbers["lon"],
        area_km2=numbers["area_km2"], timezone=timezone,
        static={name: numbers[name] for name in config.static_attributes},
    )
