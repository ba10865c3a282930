"""Gridded NetCDF ``(time, lat, lon)`` extracted at stations.

``extraction: nearest`` takes the cell whose centre is nearest to the station along each axis of
the regular lat/lon grid (the cell containing it); a station more than one and a half cell widths
outside the grid is an error. ``extraction: weights``
takes a weighted mean of the cells listed for the station in ``weights_path`` (CSV
``station_id,lat,lon,weight``, e.g. cell/catchment overlap areas from a GIS), renormalised over the
cells with a valid value at each step. ``extraction: polygons`` does the same with the weights of the
station's basin outline, the area of the basin in each cell (:mod:`hydroseq.ingest.readers.basin_weights`).
Each step uses only that step's field, so the extraction cannot move information in time.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from hydroseq.config.ingest import SourceConfig
from hydroseq.errors import InputDataError
from hydroseq.ingest.readers.base import RawSeries, cached_per_file
from hydroseq.ingest.readers.integrity import check_complete
from hydroseq.ingest.readers.netcdf import _decode_times, _time_name, mask_default_fill, reference_offset
from hydroseq.ingest.stations import Station

LAT_NAMES = ("lat", "latitude", "y")
LON_NAMES = ("lon", "longitude", "x")


def station_ids(source: SourceConfig, path: Path) -> list[str] | None:
    """A grid covers any station: ``None`` means 'every station of the table'."""
    return None


def read(source: SourceConfig, path: Path, station: Station) -> RawSeries:
    """The series of ``station`` extracted from the grid."""
    times, utc_offset, lats, lons, fields = _load(path, source)
    values = extract_at_station(path, lats, lons, fields, station, source.extraction, source.weights_path)
    offsets = None if utc_offset is None else np.full(len(times), utc_offset, dtype=np.int64)
    return RawSeries(path, pd.DatetimeIndex(times).as_unit("ns"), values, None, offsets)


def extract_at_station(path: Path, lats: np.ndarray, lons: np.ndarray, fields: dict[str, np.ndarray],
                       station: Station, extraction: str, weights_path: Path | None) -> dict[str, np.ndarray]:
    """Each field's values at ``station``: the nearest cell, or the weighted mean of its cells.

    Parameters
    ----------
    path
        The gridded file (for messages).
    lats, lons
        The grid's 1-D cell-centre coordinates.
    fields
        Name -> array whose last two axes are (lat, lon); any leading axes (time, or reference
        time and step) are kept.
    extraction
        ``nearest``, ``weights`` (cells and weights of the station listed in ``weights_path``) or
        ``polygons`` (cells and weights of the station's outline, ``station.outline``).
    """
    if extraction == "nearest":
        row, col = _nearest(path, lats, lons, station)
        return {name: field[..., row, col] for name, field in fields.items()}
    if extraction == "polygons":
        from hydroseq.ingest.readers.basin_weights import station_cells  # exactextract only where it is used

        cells = station_cells(path, lats, lons, station)
        return {name: _weighted_mean(field[..., cells.rows, cells.cols], cells.area_km2)
                for name, field in fields.items()}
    assert weights_path is not None
    cells = _weights(weights_path, station)
    rows, cols = _cell_indices(path, lats, lons, cells)
    weights = cells["weight"].to_numpy(dtype=np.float64)
    return {name: _weighted_mean(field[..., rows, cols], weights) for name, field in fields.items()}


@cached_per_file(maxsize=2)
def _load(path: Path, source: SourceConfig) -> tuple[np.ndarray, int | None, np.ndarray, np.ndarray, dict]:
    check_complete(path)
    try:
        with xr.open_dataset(path, decode_times=False, engine="netcdf4") as ds:
            time_name = _time_name(path, ds, source)
            lat_name = _first(path, ds, LAT_NAMES, "latitude")
            lon_name = _first(path, ds, LON_NAMES, "longitude")
            times = _decode_times(path, ds[time_name])
            fields = {}
            for name, spec in source.variables.items():
                if spec.source not in ds.variables:
                    raise InputDataError(path, f"variable {spec.source!r} (for {name}) is not in the file")
                variable = ds[spec.source]
                dims = (ds[time_name].dims[0], ds[lat_name].dims[0], ds[lon_name].dims[0])
                if set(variable.dims) != set(dims):
                    raise InputDataError(path, f"variable {spec.source!r} has dimensions {variable.dims}, "
                                         f"expected {dims}")
                fields[name] = mask_default_fill(variable, variable.transpose(*dims).values.astype(np.float64))
            lats, lons = ds[lat_name].values.astype(np.float64), ds[lon_name].values.astype(np.float64)
            return times, reference_offset(path, ds[time_name]), lats, lons, fields
    except InputDataError:
        raise
    except (OSError, ValueError, RuntimeError, KeyError) as error:
        raise InputDataError(path, f"not a readable NetCDF file ({type(error).__name__}: {error})") from None


def _first(path: Path, ds: xr.Dataset, names: tuple[str, ...], what: str) -> str:
    for name in names:
        if name in ds.variables and ds[name].ndim == 1:
            return name
    raise InputDataError(path, f"no 1-D {what} coordinate (looked for {', '.join(names)})")


def _nearest(path: Path, lats: np.ndarray, lons: np.ndarray, station: Station) -> tuple[int, int]:
    row = int(np.argmin(np.abs(lats - station.lat)))
    col = int(np.argmin(np.abs(lons - station.lon)))
    tolerance = 1.5 * max(_spacing(lats), _spacing(lons))
    if abs(lats[row] - station.lat) > tolerance or abs(lons[col] - station.lon) > tolerance:
        raise InputDataError(path, f"station {station.id} at ({station.lat}, {station.lon}) lies outside the grid "
                             f"(lat {lats.min()}..{lats.max()}, lon {lons.min()}..{lons.max()})")
    return row, col


def _spacing(axis: np.ndarray) -> float:
    return float(np.max(np.abs(np.diff(axis)))) if len(axis) > 1 else 1.0


@functools.lru_cache(maxsize=4)
def _weights_table(path: Path) -> pd.DataFrame:
    try:
        table = pd.read_csv(path, dtype={"station_id": str})
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as error:
        raise InputDataError(path, f"cannot read the weights table: {error}") from None
    missing = {"station_id", "lat", "lon", "weight"} - set(table.columns)
    if missing:
        raise InputDataError(path, f"missing column(s) {', '.join(sorted(missing))}")
    return table


def _weights(weights_path: Path, station: Station) -> pd.DataFrame:
    table = _weights_table(weights_path)
    cells = table[table["station_id"] == station.id]
    if cells.empty:
        raise InputDataError(weights_path, f"no cells listed for station {station.id}")
    if (cells["weight"] < 0).any() or cells["weight"].sum() <= 0:
        raise InputDataError(weights_path, "weights must be non-negative with a positive sum",
                             f"station {station.id}")
    return cells


def _cell_indices(path: Path, lats: np.ndarray, lons: np.ndarray, cells: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    rows = np.abs(lats[np.newaxis, :] - cells["lat"].to_numpy()[:, np.newaxis]).argmin(axis=1)
    cols = np.abs(lons[np.newaxis, :] - cells["lon"].to_numpy()[:, np.newaxis]).argmin(axis=1)
    tolerance = 0.5 * min(_spacing(lats), _spacing(lons))
    off = ((np.abs(lats[rows] - cells["lat"].to_numpy()) > tolerance)
           | (np.abs(lons[cols] - cells["lon"].to_numpy()) > tolerance))
    if off.any():
        cell = cells.iloc[int(np.argmax(off))]
        raise InputDataError(path, f"weight cell ({cell['lat']}, {cell['lon']}) is not a cell centre of the grid")
    return rows, cols


def _weighted_mean(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    valid = ~np.isnan(values)
    total = (np.where(valid, values, 0.0) * weights).sum(axis=-1)
    norm = (valid * weights).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(norm > 0, total / np.where(norm > 0, norm, 1.0), np.nan)
