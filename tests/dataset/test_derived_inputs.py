"""Derived inputs read for training: PET from temperature and latitude, climate indices of the training period only."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from hydroseq.climate import DERIVED_STATIC, climate_indices, oudin_pet
from hydroseq.dataset import load_station_data
from hydroseq.errors import InputDataError
from tests.fixtures import DYNAMIC, small_caravan_config

DERIVED = list(DERIVED_STATIC)


def _config(cache: Path, **overrides: object):  # noqa: ANN202
    return small_caravan_config(cache, dynamic_inputs=[*DYNAMIC[:2], "pet_oudin"],
                                static_inputs=["area_km2", *DERIVED], **overrides)


def test_pet_oudin_and_the_indices_are_those_of_the_training_period(small_nc: Path, tmp_path: Path) -> None:
    config = _config(tmp_path)
    data = load_station_data(small_nc, config)
    with xr.open_dataset(small_nc) as raw:
        temperature = raw["temperature_2m_mean"].values.astype(np.float64)
        precipitation = raw["total_precipitation_sum"].values.astype(np.float64)
        latitude = raw["lat"].values
    days = data.grid.local_days(data.times)
    pet = oudin_pet(temperature, latitude[:, None], np.asarray(days.day_of_year)[None, :])
    np.testing.assert_array_equal(data.dynamic[..., 2], pet)
    train = data.grid.period_mask(data.times, config.splits.train)
    expected = climate_indices(precipitation[:, train], pet[:, train], temperature[:, train],
                               np.asarray(days.month)[train])
    for column, name in enumerate(DERIVED, start=1):
        np.testing.assert_allclose(data.static[:, column], expected[name.removeprefix("clim_")], rtol=1e-5)


def test_forcing_after_the_training_period_does_not_move_the_indices(small_nc: Path, tmp_path: Path) -> None:
    """Perturb-the-future: doubling the rain and warming every day after the training period leaves the static
    inputs bit-identical (and the PET of the training days), while the same edit inside it changes them."""
    config = _config(tmp_path)
    base = load_station_data(small_nc, config)
    train = base.grid.period_mask(base.times, config.splits.train)
    for where, changes in ((~train, False), (train, True)):
        edited = tmp_path / f"edited_{changes}.nc"
        with xr.open_dataset(small_nc) as raw:
            copy = raw.load()
        for name, edit in (("total_precipitation_sum", lambda v: v * 2 + 5), ("temperature_2m_mean", lambda v: v + 4)):
            values = copy[name].values
            values[:, where] = edit(values[:, where])
            copy[name].values = values
        copy.attrs.pop("dataset_checksum")
        copy.to_netcdf(edited)
        data = load_station_data(edited, config)
        assert (data.static.tobytes() != base.static.tobytes()) is changes
        assert data.dynamic[:, train, 2].tobytes() == base.dynamic[:, train, 2].tobytes() or changes


def test_a_station_without_latitude_is_refused_naming_it(small_nc: Path, tmp_path: Path) -> None:
    with xr.open_dataset(small_nc) as raw:
        copy = raw.load()
    copy["lat"].values[2] = np.nan
    copy.to_netcdf(tmp_path / "no_lat.nc")
    with pytest.raises(InputDataError) as caught:
        load_station_data(tmp_path / "no_lat.nc", _config(tmp_path))
    assert "station 02064000" in str(caught.value) and "latitude" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_training_period_too_short_for_the_indices_is_refused(small_nc: Path, tmp_path: Path) -> None:
    splits = {"train": {"start": "1981-01-01", "end": "1982-06-30"},
              "validation": {"start": "1996-01-01", "end": "2004-12-31"},
              "test": {"start": "2005-01-01", "end": "2014-12-31"}}
    with pytest.raises(InputDataError, match=r"station 01022500.*too short a record.*546 days"):
        load_station_data(small_nc, _config(tmp_path, splits=splits))


def test_a_short_training_period_takes_its_indices_from_the_two_years_up_to_its_end(small_nc: Path,
                                                                                   tmp_path: Path) -> None:
    """A fine-tuning run on a short archive: six months of training read the indices of the 730 days up to the
    training period's end; days after it never move them (perturb the future), days before it inside those
    730 do."""
    splits = {"train": {"start": "2000-01-01", "end": "2000-06-30"},
              "validation": {"start": "2001-01-01", "end": "2004-12-31"},
              "test": {"start": "2005-01-01", "end": "2014-12-31"}}
    config = _config(tmp_path, splits=splits)
    base = load_station_data(small_nc, config)
    train = base.grid.period_mask(base.times, config.splits.train)
    end = int(np.flatnonzero(train)[-1]) + 1
    window = np.zeros_like(train)
    window[end - 730:end] = True
    with xr.open_dataset(small_nc) as raw:
        temperature = raw["temperature_2m_mean"].values.astype(np.float64)[:, window]
        precipitation = raw["total_precipitation_sum"].values.astype(np.float64)[:, window]
    days = base.grid.local_days(base.times)
    pet = oudin_pet(temperature, _latitude(small_nc), np.asarray(days.day_of_year)[None, window])
    expected = climate_indices(precipitation, pet, temperature, np.asarray(days.month)[window])
    for column, name in enumerate(DERIVED, start=1):
        np.testing.assert_allclose(base.static[:, column], expected[name.removeprefix("clim_")], rtol=1e-5)
    before = np.zeros_like(train)
    before[end - 400:end - 300] = True                 # before the training period, inside the 730 days
    after = np.zeros_like(train)
    after[end:] = True
    for where, changes in ((after, False), (before, True)):
        edited = tmp_path / f"short_{changes}.nc"
        with xr.open_dataset(small_nc) as raw:
            copy = raw.load()
        values = copy["total_precipitation_sum"].values
        values[:, where] = values[:, where] * 2 + 5
        copy["total_precipitation_sum"].values = values
        copy.attrs.pop("dataset_checksum")
        copy.to_netcdf(edited)
        assert (load_station_data(edited, config).static.tobytes() != base.static.tobytes()) is changes


def _latitude(path: Path) -> np.ndarray:
    with xr.open_dataset(path) as raw:
        return raw["lat"].values[:, None]
