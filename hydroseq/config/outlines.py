"""Configuration of the basin outlines a station table may point to (``stations.outlines``).

The outlines are read by :mod:`hydroseq.ingest.outlines`; gridded sources with ``extraction: polygons``
average each field over them (:mod:`hydroseq.ingest.readers.basin_weights`).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from hydroseq.config.base import StrictModel


class OutlinesConfig(StrictModel):
    """Basin outlines: one polygon or multipolygon per station in a GeoJSON, Shapefile or GeoPackage file, in
    any coordinate reference system the file declares (reprojected to WGS84 longitude/latitude on reading)."""

    path: Path = Field(description="the outlines file: GeoJSON, Shapefile (.shp, with its .prj) or GeoPackage")
    id_field: str = Field("station_id", description="the attribute holding each outline's station id, read as "
                          "text (store ids with leading zeros as text, not as numbers)")
    layer: str | None = Field(None, description="the layer to read in a file holding several (a GeoPackage); "
                              "default: the first")
