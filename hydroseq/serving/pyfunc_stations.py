"""The station table the served model carries, so that it returns the forecast CSV's m³/s, names and areas.

``hydroseq forecast`` reads each station's name (``station_name``), catchment area (``area_km2``) and
the target's units from the ingested file (:meth:`hydroseq.forecast.IngestedFile.info`) and writes the
discharge in m³/s beside the depth rate (:mod:`hydroseq.forecast.discharge`). The served model gets
no such file, so the table is read when the model is logged, from the ingested file it was trained on
(every station of that file), and stored as its artifact ``stations`` (JSON: ``units``, ``stations``,
``names``, ``area_km2`` with ``null`` where unknown; floats written exactly). For a forecast from
that file at the same issue time the served ``value_m3s`` equals the CSV's. A station not in the
table gets NaN m³/s (unless the input gives its ``area_km2``), and a model logged before the table
was recorded returns no m³/s, name or area columns.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from hydroseq.config.units import can_convert
from hydroseq.errors import InputDataError
from hydroseq.export import ExportMetadata
from hydroseq.forecast.data_window import IngestedFile
from hydroseq.forecast.table import AREA_COLUMN

STATIONS_ARTIFACT = "stations"  # the pyfunc's artifact key, a JSON file
STATIONS_FILE = "stations.json"


@dataclass(frozen=True)
class StationTable:
    """Names and catchment areas (km², NaN: unknown) of the training file's stations, and the target's units."""

    units: str
    stations: tuple[str, ...]
    names: tuple[str | None, ...]  # None: the file names none
    area_km2: tuple[float, ...]

    def converts(self, step: pd.Timedelta) -> bool:
        """The target's values have an m³/s counterpart on a grid of ``step`` (given an area)."""
        return can_convert(self.units, step)

    def areas(self, stations: tuple[str, ...], given: dict[str, float] | None = None) -> dict[str, float]:
        """``{station: area}`` for ``stations``: ``given`` where it has one, else the table's, else NaN."""
        known = dict(zip(self.stations, self.area_km2, strict=True)) | (given or {})
        return {station: known.get(station, math.nan) for station in stations}

    def names_of(self, stations: tuple[str, ...]) -> list[str | None]:
        """Each station's name (None: not in the table)."""
        known = dict(zip(self.stations, self.names, strict=True))
        return [known.get(station) for station in stations]


def derive_stations(data_path: str | Path, metadata: ExportMetadata) -> StationTable:
    """The table ``hydroseq forecast`` reads from ``data_path`` for a model with ``metadata``."""
    with IngestedFile(data_path, metadata) as source:
        info, ids = source.info(), source.station_ids
    areas = info.areas if info.areas is not None else np.full(len(ids), np.nan)
    return StationTable(info.target_units, tuple(ids), info.names or (None,) * len(ids),
                        tuple(float(area) for area in areas))


def write_stations(table: StationTable, path: Path) -> Path:
    """``table`` as JSON at ``path`` (read back exactly by :func:`read_stations`)."""
    areas = [area if math.isfinite(area) else None for area in table.area_km2]
    path.write_text(json.dumps({"units": table.units, "stations": list(table.stations), "names": list(table.names),
                                "area_km2": areas}, indent=1))
    return path


def read_stations(path: str | Path) -> StationTable:
    """The table :func:`write_stations` wrote."""
    table = json.loads(Path(path).read_text())
    return StationTable(table["units"], tuple(table["stations"]), tuple(table["names"]),
                        tuple(math.nan if area is None else float(area) for area in table["area_km2"]))


def given_areas(frame: pd.DataFrame, input_name: str) -> dict[str, float]:
    """The optional input column ``area_km2``: ``{station: area}`` of the stations with a value there.

    Raises
    ------
    InputDataError
        If a station's rows give different areas.
    """
    if AREA_COLUMN not in frame.columns:
        return {}
    areas = pd.to_numeric(frame[AREA_COLUMN], errors="coerce")
    per_station = areas.groupby(frame["station"].astype(str)).agg(["min", "max"]).dropna()
    differ = per_station.index[per_station["min"] != per_station["max"]]
    if len(differ):
        raise InputDataError(input_name, f"{AREA_COLUMN} differs between the rows of station {differ[0]!r}")
    return {str(station): float(area) for station, area in per_station["min"].items()}
