"""load_station_data: real values in memory, clear errors for unusable files."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hydroseq.dataset import load_station_data
from hydroseq.errors import InputDataError


def test_arrays_hold_the_csv_values_in_station_and_feature_order(small_nc: Path, data_dir: Path,
                                                                data_config) -> None:
    config = data_config(stations=["03015500", "01022500"])
    data = load_station_data(small_nc, config)
    assert data.station_ids == ("03015500", "01022500")
    assert data.dynamic.dtype == np.float32 and data.dynamic.flags.c_contiguous
    assert data.dynamic.shape == (2, 12418, 3) and data.static.shape == (2, 4)
    csv = pd.read_csv(data_dir / "daily_caravan_camels_us" / "03015500.csv")
    np.testing.assert_allclose(data.dynamic[0, :, 1], csv["temperature_2m_mean"], rtol=1e-6)
    np.testing.assert_allclose(data.target[0], csv["streamflow"], rtol=1e-6)
    attributes = pd.read_csv(data_dir / "daily_caravan_camels_us" / "attributes.csv", dtype={"gauge_id": str})
    row = attributes.set_index("gauge_id").loc["01022500"]
    np.testing.assert_allclose(data.static[1], row[["p_mean", "aridity", "frac_snow", "area_km2"]].astype(float),
                               rtol=1e-6)
    assert data.times[0] == np.datetime64("1981-01-02T08:00")
    assert (data.grid.timezone, data.grid.day_boundary) == ("Etc/GMT+8", dt.time(0, 0))
    assert len(data.checksum) == 64
    assert data.target_units == "mm"


def test_missing_variable_names_the_file_and_the_variable(small_nc: Path, data_config) -> None:
    config = data_config(dynamic_inputs=["total_precipitation_sum", "snow_depth"])
    with pytest.raises(InputDataError, match="snow_depth") as error:
        load_station_data(small_nc, config)
    assert error.value.path == str(small_nc)


def test_unknown_station_is_reported(small_nc: Path, data_config) -> None:
    with pytest.raises(InputDataError, match="99999999"):
        load_station_data(small_nc, data_config(stations=["01022500", "99999999"]))


def test_missing_static_value_names_the_station(tmp_path: Path, contract_writer, data_config) -> None:
    path = tmp_path / "nan_static.nc"
    contract_writer(path, ["01022500", "01547700"])
    import xarray as xr

    with xr.open_dataset(path) as dataset:
        edited = dataset.load()
    edited["aridity"].values[1] = np.nan
    edited.to_netcdf(tmp_path / "edited.nc")
    with pytest.raises(InputDataError, match="aridity.*missing") as error:
        load_station_data(tmp_path / "edited.nc", data_config())
    assert error.value.where == "station 01547700"


def test_not_a_netcdf_file_is_an_input_error(tmp_path: Path, data_config) -> None:
    path = tmp_path / "broken.nc"
    path.write_text("not netcdf")
    with pytest.raises(InputDataError, match="cannot open"):
        load_station_data(path, data_config())


def test_irregular_time_grid_names_the_first_bad_step(tmp_path: Path, contract_writer, data_config) -> None:
    import xarray as xr

    path = contract_writer(tmp_path / "regular.nc", ["01022500"])
    with xr.open_dataset(path) as dataset:
        edited = dataset.load().drop_isel(time=[100])
    edited.to_netcdf(tmp_path / "irregular.nc")
    with pytest.raises(InputDataError, match="not regular") as error:
        load_station_data(tmp_path / "irregular.nc", data_config())
    assert error.value.where == "time 1981-04-13T08:00:00.000000000"  # first label after the missing 04-12


def test_the_runoff_signatures_read_caravan_precipitation_beside_a_depth_rate(small_nc: Path, data_config) -> None:
    data = load_station_data(small_nc, data_config(stations=["01022500"]))
    assert data.target_units == "mm" and "total_precipitation_sum" in data.dynamic_names  # mm per step: a depth
    precipitation = data.runoff_precipitation()
    assert precipitation is not None
    np.testing.assert_array_equal(precipitation, data.dynamic[..., data.dynamic_names.index("total_precipitation_sum")])
    assert dataclasses.replace(data, target_units="m3/s").runoff_precipitation() is None  # no catchment depth
    without = dataclasses.replace(data, dynamic=data.dynamic[..., 1:], dynamic_names=data.dynamic_names[1:])
    assert "total_precipitation_sum" not in without.dynamic_names and without.runoff_precipitation() is None
