"""Gridded rainfall (time, lat, lon) extracted at stations. There is no real gridded rain file in
data/, so the grid here is built from real series: the hourly AORC precipitation of the three
NextGen catchments near Charlotte, laid out on a 3 x 3 lat/lon grid."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from hydroseq.errors import InputDataError
from hydroseq.ingest.stations import Station

LATS = np.array([35.20, 35.25, 35.30])
LONS = np.array([-80.90, -80.85, -80.80])


@pytest.fixture(scope="module")
def real_grid(data_dir, tmp_path_factory, build):
    """Cell (i, j) holds catchment (i + j) % 3's hourly APCP (mm); returns (path, per-catchment series)."""
    with xr.open_dataset(data_dir / "subdaily_charlotte_nc" / "cats-27_52_67-2015_12_01-2015_12_30.nc") as ds:
        rain = ds["APCP_surface"].values.astype(np.float64)  # (catchment, time)
        stamps = pd.DatetimeIndex(ds["Time"].values[0].astype("datetime64[ns]"))
    field = np.empty((rain.shape[1], 3, 3))
    for i in range(3):
        for j in range(3):
            field[:, i, j] = rain[(i + j) % 3]
    path = build.netcdf_grid(tmp_path_factory.mktemp("grid") / "aorc_grid.nc", stamps, LATS, LONS, field)
    return path, rain, stamps


def _source(path, **extra):
    return {"path": str(path), "format": "netcdf_grid", "frequency": "1h", "timestamp": "interval_end",
            "timezone": "UTC", "variables": {"p": {"source": "rain", "units": "mm", "aggregation": "sum"}}, **extra}


GRID = {"frequency": "1D", "timezone": "UTC", "start": "2015-12-01", "end": "2015-12-29"}


def _daily(stamps, series):
    frame = pd.Series(series, index=stamps).resample("1D", closed="right", label="right").agg(["sum", "count"])
    return frame["sum"].where(frame["count"] == 24).to_numpy()


def test_nearest_cell_is_the_cell_containing_the_station(real_grid, build):
    path, rain, stamps = real_grid
    station = Station("s", "s", lat=35.26, lon=-80.81, area_km2=10.0)  # nearest cell (1, 2) -> catchment 0
    labels, values = build.run(_source(path), GRID, [path], station)
    expected = _daily(stamps, rain[0])
    assert np.nanmax(values["p"]) > 1.0
    np.testing.assert_allclose(values["p"], expected[1:len(labels) + 1], rtol=1e-5)


def test_area_weights_average_the_listed_cells(real_grid, build, tmp_path):
    path, rain, stamps = real_grid
    weights = tmp_path / "weights.csv"
    pd.DataFrame({"station_id": ["s", "s"], "lat": [35.20, 35.20], "lon": [-80.90, -80.85],
                  "weight": [3.0, 1.0]}).to_csv(weights, index=False)  # catchments 0 and 1
    station = Station("s", "s", lat=35.2, lon=-80.9, area_km2=10.0)
    labels, values = build.run(_source(path, extraction="weights", weights_path=str(weights)), GRID, [path], station)
    expected = _daily(stamps, 0.75 * rain[0] + 0.25 * rain[1])
    np.testing.assert_allclose(values["p"], expected[1:len(labels) + 1], rtol=1e-5)


def test_station_outside_the_grid_is_an_error(real_grid, build):
    path, _, _ = real_grid
    with pytest.raises(InputDataError, match="outside the grid"):
        build.run(_source(path), GRID, [path], Station("far", "far", lat=40.0, lon=-80.8, area_km2=1.0))
