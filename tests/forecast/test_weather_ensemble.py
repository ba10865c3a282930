"""An ensemble weather forecast through the model: each member drives it, the forecast combines them.

The forecast from the example 10-member GRIB2 runs is checked member by member against a forecast from
that member alone (the mixture itself: ``tests/scoring/test_quantile_mixture.py``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml

from hydroseq.cli import main
from hydroseq.forecast import run_forecast
from hydroseq.forecast.core import ENSEMBLE_LEVELS, CoreForecast, combine_weather_members
from tests.fixtures import export_untrained_forecast_model
from tests.ingest.grib_builders import ENS_RUNS, copy_runs, grib_ingest_config


def test_point_models_pool_their_seed_members_with_the_weather_members():
    rng = np.random.default_rng(1)
    cores = [CoreForecast(values=rng.random((1, 2, 3)).astype(np.float32), members=rng.random((1, 2, 3, 2)),
                          valid=np.ones((2, 1), bool), lengths=np.ones((2, 1)), needed=1, observation_age_hours=None)
             for _ in range(4)]
    values, members = combine_weather_members(cores, ())
    pooled = np.concatenate([core.members for core in cores], axis=-1)  # 4 weather x 2 seed members
    np.testing.assert_allclose(values, np.moveaxis(np.quantile(pooled, ENSEMBLE_LEVELS, axis=-1), 0, -1), rtol=1e-6)
    np.testing.assert_array_equal(members, np.stack([core.values for core in cores], axis=-1))


@pytest.fixture(scope="module")
def ensemble_data(tmp_path_factory, data_dir) -> dict[str, Path]:
    """Three real basins with the example 10-member runs ingested, and an untrained model reading them."""
    folder = tmp_path_factory.mktemp("weather_ensemble")
    copy_runs(data_dir, "ens", ENS_RUNS, folder / "runs")
    config = grib_ingest_config(data_dir, str(folder / "runs" / "*.grib2"), 10, ["0/240/12"])
    config["grid"]["start"] = "2014-08-01"
    config["sources"][0]["variables"]["streamflow"] = {"source": "streamflow", "units": "mm/d", "aggregation": "mean"}
    (folder / "ingest.yaml").write_text(yaml.safe_dump(config))
    data = folder / "ensemble.nc"
    assert main(["ingest", "--config", str(folder / "ingest.yaml"), "--out", str(data), "-q"]) == 0
    with xr.open_dataset(data) as ingested:  # a week of leads; the 3-lead model below reads the first three
        assert ingested.sizes["lead"] == 7
    # a model is trained on a deterministic product: here the control member's (training reads no ensemble)
    control = _member_alone(data, 0, folder / "control.nc")
    inputs = ["precipitation_forecast", "temperature_forecast"]
    model = export_untrained_forecast_model(control, folder / "model", inputs,
                                            {"train": ("2014-08-01", "2014-09-24"),
                                             "validation": ("2014-09-25", "2014-09-27"),
                                             "test": ("2014-09-28", "2014-10-05")})
    return {"folder": folder, "data": data, "model": model}


def _member_alone(data: Path, member: int, target: Path) -> Path:
    """The ingested file with the weather forecast of one member only, as a deterministic product."""
    with xr.open_dataset(data) as dataset:
        copy = dataset.load()
    for name in ("precipitation_forecast", "temperature_forecast"):
        copy[name] = copy[name].isel(member=member, drop=True)
    copy.drop_vars("member").to_netcdf(target)
    return target


@pytest.mark.slow
def test_each_weather_member_drives_the_model_and_the_forecast_is_their_combination(ensemble_data, tmp_path):
    run = run_forecast(ensemble_data["model"], ensemble_data["data"], "2014-09-23", out=tmp_path / "f.nc",
                       show_progress=False)
    result = run.result
    assert result.members is not None and result.members.shape == (1, 3, 3, 10)
    assert result.quantile_levels == ENSEMBLE_LEVELS and result.quantiles is not None
    np.testing.assert_allclose(result.values, np.median(result.members, axis=-1), rtol=1e-5)
    assert (result.members.std(axis=-1) > 0).any()  # the perturbed members move the forecast
    for member in (0, 7):
        alone = run_forecast(ensemble_data["model"], _member_alone(ensemble_data["data"], member,
                                                                   tmp_path / f"member{member}.nc"),
                             "2014-09-23", out=tmp_path / f"alone{member}.nc", show_progress=False)
        np.testing.assert_allclose(result.members[..., member], alone.result.values, rtol=1e-5, atol=1e-6)
    with xr.open_dataset(tmp_path / "f.nc") as written:
        assert written.sizes["realization"] == 10 and written.attrs["weather_ensemble_members"] == "10"
        assert "mixture" in written.attrs["weather_ensemble_combination"]
        assert "streamflow_exceedance_probability" in written.variables


@pytest.mark.slow
def test_an_ensemble_hindcast_scores_the_combined_distribution(ensemble_data, tmp_path):
    run = run_forecast(ensemble_data["model"], ensemble_data["data"], "2014-09-21..2014-09-26",
                       out=tmp_path / "h.nc", show_progress=False)
    assert run.published is not None and run.published.distribution_scores is not None
    assert len(run.published.distribution_scores) == 3  # one per lead
    for lead in run.published.distribution_scores:
        assert np.isfinite(lead.stations["crps"].to_numpy(dtype=float)).all()
        assert lead.stations["coverage90"].between(0, 1).all()
