"""A model reading derived inputs forecasts a file on an agency's own standard-time days, and its climate indices
never read a day after the first issue time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from hydroseq.climate import DERIVED_STATIC
from hydroseq.errors import InputDataError
from hydroseq.export.metadata import ExportMetadata
from hydroseq.forecast import IngestedFile, run_forecast
from hydroseq.forecast.data_layout import reads_any_standard_day
from hydroseq.grid import GridSpec
from tests.fixtures import CARAVAN_GRID, SMALL_STATIONS, write_ingested

SPLITS = {"train": ("1981-10-01", "1995-09-30"), "validation": ("1995-10-01", "2000-09-30"),
          "test": ("2000-10-01", "2014-09-30")}


def _export_derived_model(data: Path, out: Path, day_convention: str) -> Path:
    """An untrained per-step model reading P, T, pet_oudin, the area and the ten clim_* indices, exported."""
    import torch

    from hydroseq.config import TrainConfig, validate_config
    from hydroseq.dataset import FeatureLayout, Scalers, load_station_data
    from hydroseq.export.exporter import export_trained_model
    from hydroseq.export.source import read_provenance
    from hydroseq.model import get_model
    from hydroseq.training.checkpoint import Checkpoint

    train = validate_config({
        "data": {"path": str(data), "dynamic_inputs": ["total_precipitation_sum", "temperature_2m_mean", "pet_oudin"],
                 "static_inputs": ["area_km2", *DERIVED_STATIC], "target": "streamflow", "mode": "per_step",
                 "leads": [1, 2], "lagged_target": True, "seq_len": 30, "min_len": 5,
                 "day_convention": day_convention,
                 "splits": {name: {"start": start, "end": end} for name, (start, end) in SPLITS.items()}},
        "model": {"hidden_size": 8, "observed_skip": True},
        "training": {"output_dir": str(out.parent / "train")}}, TrainConfig)
    scalers = Scalers.fit(load_station_data(data, train.data), train.data)
    layout = FeatureLayout.from_config(train.data)
    torch.manual_seed(0)
    model = get_model(train.model, len(layout.names), 2, "per_step", data=train.data).eval()
    export_trained_model(Checkpoint(model.state_dict(), train, layout.names, 2, scalers, "untrained"),
                         train.data.seq_len, out, read_provenance(data), pt2=False)
    return out


@pytest.fixture(scope="module")
def derived_model(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("derived")
    data = write_ingested(folder / "caravan.nc", SMALL_STATIONS[:2], CARAVAN_GRID, [])
    return _export_derived_model(data, folder / "model", "local_standard_day"), data


def test_a_local_standard_day_model_reads_an_agencys_cet_grid(derived_model: tuple[Path, Path],
                                                               tmp_path: Path) -> None:
    """The same basins on the days of UTC+01:00 (Etc/GMT-1): forecast, and the files keep the agency's zone."""
    model, _ = derived_model
    cet = write_ingested(tmp_path / "cet.nc", SMALL_STATIONS[:2], GridSpec("1D", "Etc/GMT-1"), [])
    run = run_forecast(model, cet, "2014-09-30", out=tmp_path / "forecast.nc", show_progress=False)
    assert run.stations_forecast == 2
    with xr.open_dataset(tmp_path / "forecast.nc") as forecast:
        assert "Etc/GMT-1" in str(forecast.attrs)
    assert ExportMetadata.read(model).day_convention == "local_standard_day"


def test_only_fixed_offset_daily_grids_are_read_as_local_standard_days(derived_model: tuple[Path, Path]) -> None:
    metadata = ExportMetadata.read(derived_model[0])
    assert reads_any_standard_day(metadata, GridSpec("1D", "Etc/GMT-1"))
    assert reads_any_standard_day(metadata, GridSpec("1D", "+05:30"))
    assert not reads_any_standard_day(metadata, GridSpec("1D", "Europe/Paris"))  # summer time: 23 and 25 h days
    assert not reads_any_standard_day(metadata, GridSpec("1h", "Etc/GMT-1"))


def test_a_grid_convention_model_still_refuses_another_zone(tmp_path: Path) -> None:
    data = write_ingested(tmp_path / "caravan.nc", SMALL_STATIONS[:2], CARAVAN_GRID, [])
    model = _export_derived_model(data, tmp_path / "model", "grid")
    cet = write_ingested(tmp_path / "cet.nc", SMALL_STATIONS[:2], GridSpec("1D", "Etc/GMT-1"), [])
    with pytest.raises(InputDataError, match="grid time zone Etc/GMT-1 differs from the model's Etc/GMT\\+8"):
        run_forecast(model, cet, "2014-09-30", out=tmp_path / "forecast.nc", show_progress=False)


def test_the_indices_of_a_forecast_never_read_a_day_after_its_first_issue(derived_model: tuple[Path, Path],
                                                                          tmp_path: Path) -> None:
    """Perturb-the-future: every value after the first issue step rewritten, the static inputs stay bit-identical;
    the same edit a year before it changes them."""
    model, data = derived_model
    metadata = ExportMetadata.read(model)
    with IngestedFile(data, metadata) as source:
        issue = int(np.searchsorted(source.times, np.datetime64("2010-06-01T08:00")))
        base = source.read(issue - 29, issue + 1, first_issue=issue).static
    for first_changed, changes in ((issue + 1, False), (issue - 365, True)):
        with xr.open_dataset(data) as raw:
            copy = raw.load()
        for name in ("total_precipitation_sum", "temperature_2m_mean"):
            copy[name].values[:, first_changed:] += 7.0
        edited = tmp_path / f"edited_{changes}.nc"
        copy.to_netcdf(edited)
        with IngestedFile(edited, metadata) as source:
            static = source.read(issue - 29, issue + 1, first_issue=issue).static
        assert (static.tobytes() != base.tobytes()) is changes


def test_a_file_without_latitude_is_refused_naming_what_the_model_derives(derived_model: tuple[Path, Path],
                                                                          tmp_path: Path) -> None:
    model, data = derived_model
    with xr.open_dataset(data) as raw:
        copy = raw.load().drop_vars("lat")
    copy.to_netcdf(tmp_path / "no_lat.nc")
    with pytest.raises(InputDataError, match=r"lacks: lat \(the source of pet_oudin") as caught:
        run_forecast(model, tmp_path / "no_lat.nc", "2014-09-30", out=tmp_path / "f.nc", show_progress=False)
    assert not (tmp_path / "f.nc").exists() and "\n" not in str(caught.value)


def test_a_station_without_area_is_refused_naming_it(derived_model: tuple[Path, Path], tmp_path: Path) -> None:
    """A station table row without an area: one line naming the station, nothing written (it forecast NaN)."""
    model, data = derived_model
    with xr.open_dataset(data) as raw:
        copy = raw.load()
    copy["area_km2"].values[1] = np.nan
    copy.to_netcdf(tmp_path / "no_area.nc")
    with pytest.raises(InputDataError, match=r"\(station 01547700\): static attribute 'area_km2' is missing"):
        run_forecast(model, tmp_path / "no_area.nc", "2014-09-30", out=tmp_path / "f.nc", show_progress=False)
    assert not (tmp_path / "f.nc").exists()
