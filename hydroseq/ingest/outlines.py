"""Basin outlines (``stations.outlines``): one polygon per station from a GeoJSON, Shapefile or GeoPackage file,
read with geopandas (through pyogrio), reprojected to WGS84 longitude/latitude and kept on each
:class:`~hydroseq.ingest.stations.Station` as WKB (``Station.outline``).

geopandas and shapely are imported only when a config names outlines, so other ingests (and the forecast
command, which imports this stage) do not pay for them.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

from hydroseq.config.outlines import OutlinesConfig
from hydroseq.errors import InputDataError
from hydroseq.ingest.stations import Station

if TYPE_CHECKING:
    import geopandas  # type: ignore[import-untyped]

WGS84 = "EPSG:4326"


def with_outlines(stations: list[Station], config: OutlinesConfig) -> list[Station]:
    """``stations`` with their ``outline`` set from the outlines file ``config.path``.

    Raises
    ------
    InputDataError
        Naming the outlines file: it cannot be read, lacks the id field or a coordinate reference system,
        lists a station twice, holds an outline that is empty or not a polygon, or has no outline for one of
        ``stations``.
    """
    outlines = read_outlines(config)
    missing = [station.id for station in stations if station.id not in outlines]
    if missing:
        more = f" (and {len(missing) - 1} more station(s))" if len(missing) > 1 else ""
        unpadded = missing[0].lstrip("0")
        hint = (f"; the file has {unpadded}: write the ids as text to keep their leading zeros"
                if unpadded != missing[0] and unpadded in outlines else "")
        raise InputDataError(config.path, f"no outline for station {missing[0]}{more}: every station needs one "
                             f"(matched by the field {config.id_field!r}){hint}")
    return [dataclasses.replace(station, outline=outlines[station.id]) for station in stations]


def read_outlines(config: OutlinesConfig) -> dict[str, bytes]:
    """Station id -> its outline as WKB (a polygon or multipolygon in WGS84 longitude/latitude).

    An invalid polygon (a self-touching ring, say) is repaired with ``shapely.make_valid``, keeping its
    polygonal parts. Outlines of ids that no station has are read and ignored.

    Raises
    ------
    InputDataError
        As :func:`with_outlines` says.
    """
    import shapely  # type: ignore[import-untyped]

    frame = _read_frame(config)
    if config.id_field not in frame.columns:
        fields = ", ".join(str(column) for column in frame.columns if column != frame.geometry.name)
        raise InputDataError(config.path, f"no field {config.id_field!r} (set stations.outlines.id_field); "
                             f"the outlines have {fields or 'no fields'}")
    if frame.crs is None:
        raise InputDataError(config.path, "the outlines declare no coordinate reference system (a Shapefile needs "
                             "its .prj file); write them with one, e.g. EPSG:4326")
    if not frame.crs.equals(WGS84):
        frame = frame.to_crs(WGS84)
    outlines: dict[str, bytes] = {}
    for row, (station_id, geometry) in enumerate(zip(frame[config.id_field], frame.geometry, strict=True)):
        where = f"feature {row + 1}"
        if station_id is None or (isinstance(station_id, float) and np.isnan(station_id)):
            raise InputDataError(config.path, f"the field {config.id_field!r} is empty", where)
        is_whole = isinstance(station_id, (float, np.floating)) and float(station_id).is_integer()
        key = str(int(station_id)) if is_whole else str(station_id).strip()
        if key in outlines:
            raise InputDataError(config.path, f"station {key} has more than one outline", where)
        outlines[key] = shapely.to_wkb(_polygonal(config, geometry, key, where))
    return outlines


def _read_frame(config: OutlinesConfig) -> geopandas.GeoDataFrame:
    import geopandas

    try:
        return geopandas.read_file(config.path, layer=config.layer, engine="pyogrio")
    except (OSError, RuntimeError, ValueError) as error:
        problem = " ".join(str(error).split())
        raise InputDataError(config.path, f"cannot read the basin outlines: {problem}") from None


def _polygonal(config: OutlinesConfig, geometry: Any, station_id: str, where: str) -> Any:
    import shapely

    if geometry is None or geometry.is_empty:
        raise InputDataError(config.path, f"the outline of station {station_id} is empty", where)
    if not geometry.is_valid:
        geometry = shapely.make_valid(geometry)
    parts = [part for part in shapely.get_parts(shapely.get_parts(geometry)) if part.geom_type == "Polygon"]
    if not parts:
        raise InputDataError(config.path, f"the outline of station {station_id} is a {geometry.geom_type}, "
                             "not a polygon", where)
    return parts[0] if len(parts) == 1 else shapely.MultiPolygon(parts)
