"""Cell weights of basin outlines over a regular latitude/longitude grid (``extraction: polygons``).

A station's weight on a cell is the area, in km², of the part of its basin outline inside the cell, on a
sphere of radius :data:`EARTH_RADIUS_KM`. exactextract finds the cells an outline touches and the fraction of
each it covers. A cell covered whole weighs its own area, ``R² Δλ (sin φ_north - sin φ_south)`` (so weights
grow with the cosine of the latitude); a cell covered in part weighs the area of the outline clipped to the
cell, integrated on the sphere (``R² ∮ -sin φ dλ`` along its edges, which are straight in longitude and
latitude, as GIS files and exactextract take them). The weighted mean of a field that is constant in each
cell is then its exact area-weighted mean over the basin. Multiplying the coverage fraction by the cell's area
instead would be off by up to 2e-4 of the mean on a 1° grid and 5e-6 on a 0.1° grid (real country outlines, a
field varying from cell to cell): within a cell the area per degree changes with the latitude.

Weights are computed once per outline and grid (:func:`functools.lru_cache` on the outline's WKB and the
grid's first centres, steps and sizes), so every time step and every product file of the same grid reuses them.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import shapely  # type: ignore[import-untyped]
from exactextract import exact_extract  # type: ignore[import-untyped]
from exactextract.feature import JSONFeatureSource  # type: ignore[import-untyped]
from exactextract.raster import NumPyRasterSource  # type: ignore[import-untyped]

from hydroseq.errors import InputDataError
from hydroseq.ingest.stations import Station

EARTH_RADIUS_KM = 6371.0088  # the IUGG mean radius
MIN_INSIDE_SHARE = 0.99  # a basin with less of its area inside the grid is refused
REGULAR_TOLERANCE = 1e-3  # centres may be off a regular spacing by this share of a step (float32 coordinates)


@dataclass(frozen=True)
class RegularGrid:
    """A regular latitude/longitude grid as a file orders it: the first cell centre, the signed step and the
    number of cells along each axis (latitudes run north to south in ERA5 and ECMWF files: a negative step)."""

    lat_first: float
    lat_step: float
    n_lat: int
    lon_first: float
    lon_step: float
    n_lon: int

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """The outer cell edges: west, south, east, north (in degrees)."""
        lats = (self.lat_first, self.lat_first + (self.n_lat - 1) * self.lat_step)
        lons = (self.lon_first, self.lon_first + (self.n_lon - 1) * self.lon_step)
        half_lat, half_lon = abs(self.lat_step) / 2, abs(self.lon_step) / 2
        return min(lons) - half_lon, min(lats) - half_lat, max(lons) + half_lon, max(lats) + half_lat

    def describe(self) -> str:
        """The grid's extent for messages: ``lon W..E, lat S..N (cell edges)``."""
        west, south, east, north = self.bounds
        return f"lon {west:g}..{east:g}, lat {south:g}..{north:g} (cell edges)"


@dataclass(frozen=True)
class BasinCells:
    """The cells of one outline on one grid: the file's row (latitude) and column (longitude) index of each
    cell, the area of the basin inside it (km²), and the share of the basin's area inside the grid."""

    rows: np.ndarray
    cols: np.ndarray
    area_km2: np.ndarray
    inside_share: float


def regular_grid(path: Path | str, lats: np.ndarray, lons: np.ndarray) -> RegularGrid:
    """The :class:`RegularGrid` of 1-D cell-centre coordinates ``lats``, ``lons`` (ascending or descending).

    Raises
    ------
    InputDataError
        Naming ``path``, if an axis has fewer than 2 cells or its centres are not evenly spaced.
    """
    axes = []
    for name, centres in (("latitude", lats), ("longitude", lons)):
        centres = np.asarray(centres, dtype=np.float64)
        if centres.ndim != 1 or len(centres) < 2 or not np.isfinite(centres).all():
            raise InputDataError(path, f"extraction polygons needs at least 2 finite {name} cell centres")
        step = (centres[-1] - centres[0]) / (len(centres) - 1)
        off = np.abs(centres - (centres[0] + step * np.arange(len(centres))))
        if step == 0 or off.max() > REGULAR_TOLERANCE * abs(step):
            raise InputDataError(path, f"extraction polygons needs a regular grid, but the {name} centres are not "
                                 f"evenly spaced (up to {off.max():.3g} degrees off a step of {step:.6g})")
        axes.append((float(centres[0]), float(step), len(centres)))
    (lat_first, lat_step, n_lat), (lon_first, lon_step, n_lon) = axes
    return RegularGrid(lat_first, lat_step, n_lat, lon_first, lon_step, n_lon)


def station_cells(path: Path | str, lats: np.ndarray, lons: np.ndarray, station: Station) -> BasinCells:
    """The cells and weights of ``station``'s outline on the grid of ``lats``, ``lons`` (cached per outline
    and grid).

    Raises
    ------
    InputDataError
        Naming ``path`` (the gridded file) and the station: it has no outline, the grid is not regular, or
        less than :data:`MIN_INSIDE_SHARE` of the basin's area lies inside the grid.
    """
    if station.outline is None:
        raise InputDataError(path, f"station {station.id} has no basin outline; extraction polygons needs "
                             "stations.outlines")
    grid = regular_grid(path, lats, lons)
    cells = outline_cells(station.outline, grid)
    if cells.inside_share < MIN_INSIDE_SHARE:
        where = ("lies outside the grid" if cells.inside_share == 0
                 else f"has only {cells.inside_share:.1%} of its area inside the grid (at least "
                      f"{MIN_INSIDE_SHARE:.0%} needed)")
        raise InputDataError(path, f"the basin outline of station {station.id} {where}: {grid.describe()}")
    return cells


@functools.lru_cache(maxsize=32768)
def outline_cells(outline: bytes, grid: RegularGrid) -> BasinCells:
    """The cells of the outline (WKB, longitude/latitude) on ``grid``, without the checks of :func:`station_cells`.

    An outline in -180..180 on a grid in 0..360 (or the reverse) is shifted by 360 degrees first.
    """
    basin = _shifted_into(shapely.from_wkb(outline), grid)
    west, south, east, north = grid.bounds
    lat_size, lon_size = abs(grid.lat_step), abs(grid.lon_step)
    # exactextract reads the raster's rows from the north; its values are not needed, only its cells
    raster = NumPyRasterSource(np.broadcast_to(np.float32(0), (grid.n_lat, grid.n_lon)), west, south, east, north)
    feature = {"type": "Feature", "properties": {}, "geometry": basin.__geo_interface__}
    result = exact_extract(raster, JSONFeatureSource([feature]), ["cell_id", "coverage"])[0]["properties"]
    cell_id = np.asarray(result["cell_id"], dtype=np.int64)
    coverage = np.asarray(result["coverage"], dtype=np.float64)
    from_north, from_west = np.divmod(cell_id, grid.n_lon)
    cell_north = np.minimum(north - from_north * lat_size, 90.0)
    cell_south = np.maximum(north - (from_north + 1) * lat_size, -90.0)
    cell_west = west + from_west * lon_size
    area = (EARTH_RADIUS_KM**2 * np.radians(lon_size)
            * (np.sin(np.radians(cell_north)) - np.sin(np.radians(cell_south))))
    partial = coverage < 1.0
    if partial.any():
        cut = shapely.box(cell_west[partial], cell_south[partial], cell_west[partial] + lon_size, cell_north[partial])
        area[partial] = spherical_area_km2(shapely.intersection(basin, cut))
    rows = from_north if grid.lat_step < 0 else grid.n_lat - 1 - from_north
    cols = from_west if grid.lon_step > 0 else grid.n_lon - 1 - from_west
    basin_area = float(spherical_area_km2(np.array([basin]))[0])
    share = float(area.sum() / basin_area) if basin_area > 0 else 0.0
    for array in (rows, cols, area):
        array.flags.writeable = False  # shared by every caller through the cache
    return BasinCells(rows, cols, area, share)


def spherical_area_km2(geometries: np.ndarray) -> np.ndarray:
    """The area in km² on the sphere of each (multi)polygon of ``geometries`` (longitude/latitude with straight
    edges; other parts, such as lines where a polygon touches a cell, count nothing)."""
    parts, owner = shapely.get_parts(geometries, return_index=True)
    polygons = shapely.get_type_id(parts) == shapely.GeometryType.POLYGON
    # exteriors counter-clockwise, holes clockwise: the ring integral then adds the one and takes off the other
    rings, ring_part = shapely.get_rings(shapely.orient_polygons(parts[polygons]), return_index=True)
    coords, vertex_ring = shapely.get_coordinates(rings, return_index=True)
    lon, lat = np.radians(coords[:, 0]), np.radians(coords[:, 1])
    segment = vertex_ring[1:] == vertex_ring[:-1]
    d_lon, d_lat, mid_lat = np.diff(lon), np.diff(lat), (lat[1:] + lat[:-1]) / 2
    # the integral of -sin(lat) d(lon) along a straight segment, in a form without cancellation
    integral = -d_lon * np.sin(mid_lat) * np.sinc(d_lat / (2 * np.pi))
    segment_owner = owner[polygons][ring_part[vertex_ring[:-1]]]
    total = np.bincount(segment_owner[segment], weights=integral[segment], minlength=len(geometries))
    return np.asarray(EARTH_RADIUS_KM**2 * total, dtype=np.float64)


def _shifted_into(basin: Any, grid: RegularGrid) -> Any:
    """``basin`` moved by 0, +360 or -360 degrees of longitude, whichever overlaps the grid most."""
    west, _, east, _ = grid.bounds
    basin_west, _, basin_east, _ = basin.bounds
    overlap = {shift: min(basin_east + shift, east) - max(basin_west + shift, west) for shift in (0.0, 360.0, -360.0)}
    shift = max(overlap, key=lambda s: (overlap[s], s == 0.0))
    return basin if shift == 0.0 else shapely.transform(basin, lambda xy: xy + np.array([shift, 0.0]))


def basin_weights(stations: Iterable[Station], lats: np.ndarray, lons: np.ndarray,
                  path: Path | str = "<grid>") -> pd.DataFrame:
    """The weights of every station's outline on the grid ``lats``, ``lons``, as the hand-made weights table.

    Parameters
    ----------
    stations
        Stations with outlines (:func:`hydroseq.ingest.load_stations` with ``stations.outlines`` set).
    lats, lons
        The grid's 1-D cell-centre coordinates, as the gridded file holds them.
    path
        The gridded file, for messages.

    Returns
    -------
    pandas.DataFrame
        Columns ``station_id, lat, lon, weight``: one row per cell a basin covers, the cell's centre as the
        file gives it, and the area of the basin inside the cell in km² (its sum is the basin's area).
        ``extraction: weights`` with this table gives what ``extraction: polygons`` gives.
    """
    lats, lons = np.asarray(lats, dtype=np.float64), np.asarray(lons, dtype=np.float64)
    frames = []
    for station in stations:
        cells = station_cells(path, lats, lons, station)
        frames.append(pd.DataFrame({"station_id": station.id, "lat": lats[cells.rows], "lon": lons[cells.cols],
                                    "weight": cells.area_km2}))
    columns = {"station_id": str, "lat": np.float64, "lon": np.float64, "weight": np.float64}
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(columns)).astype(columns)


def write_weights_csv(stations: Iterable[Station], lats: np.ndarray, lons: np.ndarray, out: Path | str,
                      path: Path | str = "<grid>") -> Path:
    """Write :func:`basin_weights` to the CSV ``out`` (the ``weights_path`` layout) to inspect or edit it;
    returns ``out``. Numbers are written in full, so the cell centres match the file's."""
    out = Path(out)
    basin_weights(stations, lats, lons, path).to_csv(out, index=False)
    return out
