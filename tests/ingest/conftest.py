"""Builders for the ingest tests: small source files in each format and a one-station ingest."""

from __future__ import annotations

from pathlib import Path

import netCDF4
import numpy as np
import pandas as pd
import pytest

from hydroseq.config import validate_config
from hydroseq.config.ingest import GridConfig, SourceConfig
from hydroseq.ingest import SourcePlan, build_grid, ingest_station
from hydroseq.ingest.stations import Station

STATION = Station(id="0001", name="test", lat=35.3, lon=-80.8, area_km2=100.0, timezone="America/New_York")


def grid_values(source: dict, grid: dict, files: list[Path],
                station: Station = STATION) -> tuple[pd.DatetimeIndex, dict]:
    """Run the per-station ingest of one source; returns the grid labels and the gridded values."""
    source_config = validate_config(source, SourceConfig)
    grid_config = validate_config(grid, GridConfig)
    time_grid = build_grid(grid_config)
    result = ingest_station(station, [SourcePlan(source_config, tuple(files))], time_grid)
    return time_grid.labels, result.values


def write_csv(path: Path, stamps: pd.DatetimeIndex, values: np.ndarray, time_format: str = "%Y-%m-%d %H:%M") -> Path:
    """A CSV ``time,value`` with stamps written as wall-clock text."""
    text = pd.Series(values).map(lambda v: "" if np.isnan(v) else repr(float(v)))
    frame = pd.DataFrame({"time": stamps.strftime(time_format), "value": text})
    frame.to_csv(path, index=False)
    return path


def write_camels_streamflow(path: Path, station_id: str, days: pd.DatetimeIndex, values: np.ndarray) -> Path:
    """A CAMELS-US ``<id>_streamflow_qc.txt`` file (missing values as -999 with flag M)."""
    lines = []
    for day, value in zip(days, values, strict=True):
        flag, number = ("M", -999.0) if np.isnan(value) else ("A", value)
        lines.append(f"{station_id} {day.year} {day.month:02d} {day.day:02d} {number:10.4f} {flag}")
    path.write_text("\n".join(lines) + "\n")
    return path


def write_netcdf_series(path: Path, station_ids: list[str], stamps: pd.DatetimeIndex, values: np.ndarray) -> Path:
    """A NetCDF file ``value(station, time)`` with a CF time coordinate (minutes since 2000)."""
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("station", len(station_ids))
        ds.createDimension("time", len(stamps))
        ids = ds.createVariable("station_id", str, ("station",))
        for i, station_id in enumerate(station_ids):
            ids[i] = station_id
        time = ds.createVariable("time", "f8", ("time",))
        time.units = "minutes since 2000-01-01 00:00:00"
        time[:] = (stamps - pd.Timestamp("2000-01-01")) / pd.Timedelta(minutes=1)
        variable = ds.createVariable("value", "f8", ("station", "time"), fill_value=np.nan)
        variable[:] = values
    return path


def write_netcdf_grid(path: Path, stamps: pd.DatetimeIndex, lats: np.ndarray, lons: np.ndarray,
                      values: np.ndarray) -> Path:
    """A gridded NetCDF file ``rain(time, lat, lon)``."""
    with netCDF4.Dataset(path, "w") as ds:
        for name, size in (("time", len(stamps)), ("lat", len(lats)), ("lon", len(lons))):
            ds.createDimension(name, size)
        time = ds.createVariable("time", "f8", ("time",))
        time.units = "minutes since 2000-01-01 00:00:00"
        time[:] = (stamps - pd.Timestamp("2000-01-01")) / pd.Timedelta(minutes=1)
        ds.createVariable("lat", "f8", ("lat",))[:] = lats
        ds.createVariable("lon", "f8", ("lon",))[:] = lons
        variable = ds.createVariable("rain", "f8", ("time", "lat", "lon"), fill_value=np.nan)
        variable[:] = values
    return path




@pytest.fixture(scope="session")
def build():
    """The file builders and the one-station ingest, as attributes (``build.csv(...)``)."""
    from types import SimpleNamespace

    from tests.ingest.pi_builders import write_pi

    return SimpleNamespace(csv=write_csv, camels_streamflow=write_camels_streamflow,
                           netcdf_series=write_netcdf_series, netcdf_grid=write_netcdf_grid, pi=write_pi,
                           run=grid_values, station=STATION)
