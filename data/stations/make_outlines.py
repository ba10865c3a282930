"""Draw ``caravan_camels_us_outlines.geojson``: example basin outlines for the 31 basins of ``caravan_camels_us.csv``.

These are NOT the real basin boundaries. Each outline is a regular 64-sided polygon centred on the gauge
(``lat``, ``lon``) whose area is the basin's ``area_km2``, drawn in a Lambert azimuthal equal-area projection
of the WGS84 ellipsoid centred on the gauge and written in longitude/latitude (EPSG:4326, 5 decimals, about 1 m).
They exist to try ``stations.outlines`` and ``extraction: polygons`` on the bundled data; use the real CAMELS
boundaries (Newman et al. 2014, doi:10.5065/D6MW2F4D) for real work.

Run from the project root: ``python data/stations/make_outlines.py``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
from pyproj import Transformer

HERE = Path(__file__).resolve().parent
SIDES = 64


def drawn_outline(lat: float, lon: float, area_km2: float) -> list[list[float]]:
    """The closed ring (counter-clockwise, lon/lat) of a regular polygon of ``area_km2`` centred on (lat, lon)."""
    radius_m = math.sqrt(2 * area_km2 * 1e6 / (SIDES * math.sin(2 * math.pi / SIDES)))
    angles = 2 * np.pi * np.arange(SIDES) / SIDES
    to_lonlat = Transformer.from_crs(f"+proj=laea +lat_0={lat} +lon_0={lon} +ellps=WGS84 +units=m", "EPSG:4326",
                                     always_xy=True)
    lons, lats = to_lonlat.transform(radius_m * np.cos(angles), radius_m * np.sin(angles))
    ring = [[round(float(x), 5), round(float(y), 5)] for x, y in zip(lons, lats, strict=True)]
    return [*ring, ring[0]]


def main() -> None:
    table = pd.read_csv(HERE / "caravan_camels_us.csv", dtype={"station_id": str})
    features = [
        json.dumps({"type": "Feature",
                    "properties": {"station_id": row.station_id, "name": row.name, "area_km2": row.area_km2},
                    "geometry": {"type": "Polygon", "coordinates": [drawn_outline(row.lat, row.lon, row.area_km2)]}},
                   ensure_ascii=False, separators=(",", ":"))
        for row in table.itertuples()
    ]
    header = '{"type":"FeatureCollection","name":"caravan_camels_us_outlines (drawn, not real)","features":[\n'
    text = header + ",\n".join(features) + "\n]}\n"
    (HERE / "caravan_camels_us_outlines.geojson").write_text(text)


if __name__ == "__main__":
    main()
