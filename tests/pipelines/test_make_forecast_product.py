"""pipelines/make_forecast_product.py: a generated product in the cfgrib layout that the ingest reads
back onto exactly the observed values of each lead (without noise), with noise growing with the lead."""

from __future__ import annotations

import numpy as np
import xarray as xr

from hydroseq.config import IngestConfig, validate_config
from hydroseq.ingest import ingest
from pipelines.make_forecast_product import main, make_product
from tests.ingest.forecast_builders import caravan_window

VARIABLES = ["total_precipitation_sum", "temperature_2m_mean"]


def _config(folder, data_dir, product):
    config = caravan_window(folder, data_dir, product, rows=60)
    config["forecast_sources"][0]["variables"] = {
        "precipitation_forecast": {"source": "total_precipitation_sum", "units": "m", "aggregation": "sum",
                                   "accumulation": "since_reference"},
        "temperature_forecast": {"source": "temperature_2m_mean", "units": "K"}}
    return config


def _observed(folder, data_dir):
    config = _config(folder, data_dir, folder / "unused.nc")
    del config["forecast_sources"]
    return ingest(validate_config(config, IngestConfig), folder / "observed.nc", show_progress=False).output


def test_without_noise_each_lead_is_the_observation_it_covers(tmp_path, data_dir):
    observed = _observed(tmp_path, data_dir)
    product = tmp_path / "product.nc"
    assert main(["--data", str(observed), "--variables", *VARIABLES, "--out", str(product),
                 "--noise-std", "0", "0", "0", "--horizon", "3", "--latency", "6h", "--seed", "0"]) == 0
    with xr.open_dataset(product) as raw:
        assert raw["total_precipitation_sum"].dims == ("time", "step", "station")
        assert raw["total_precipitation_sum"].attrs["units"] == "m"
        assert raw["total_precipitation_sum"].attrs["GRIB_stepType"] == "accum"
        assert raw["temperature_2m_mean"].attrs["units"] == "K" and "valid_time" in raw.coords
        assert raw.attrs["hydroseq_generated"] == "true" and "not a real forecast" in raw.attrs["title"]
    report = ingest(validate_config(_config(tmp_path, data_dir, product), IngestConfig), tmp_path / "with.nc",
                    show_progress=False)
    with xr.open_dataset(report.output) as ds:
        for observed_name, forecast_name in zip(VARIABLES, ["precipitation_forecast", "temperature_forecast"],
                                                strict=True):
            forecast, truth = ds[forecast_name].values, ds[observed_name].values
            for lead in (1, 2, 3):
                np.testing.assert_allclose(forecast[:, :-lead, lead - 1], truth[:, lead:], atol=1e-4)
                assert np.isnan(forecast[:, -lead:, lead - 1]).all()  # past the data: missing, not invented


def test_noise_grows_with_the_lead(tmp_path, data_dir):
    observed = _observed(tmp_path, data_dir)
    product = make_product(observed, VARIABLES, tmp_path / "noisy.nc", [0.1, 0.4, 0.8], 3, "6h", seed=3)
    with xr.open_dataset(observed) as ds:
        truth = ds["temperature_2m_mean"].values.T + 273.15  # (time, station)
    errors = [np.nanstd(product["temperature_2m_mean"].values[:-3, lead, :] - truth[lead:-3 + lead or None])
              for lead in (1, 2, 3)]
    assert errors[0] < errors[1] < errors[2]
