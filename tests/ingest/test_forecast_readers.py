"""Forecast-product readers are a table (``FORECAST_READERS``): a reader registered from outside the package is
ingested through like the shipped ones; a format or layout no reader reads stops the ingest before it reads."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from hydroseq.config import IngestConfig, validate_config
from hydroseq.errors import ConfigError
from hydroseq.ingest import ingest
from hydroseq.ingest.readers import FORECAST_READERS

from . import toy_forecast_reader
from .forecast_builders import CARAVAN_STATIONS, caravan_window

REFERENCES = pd.date_range("1981-01-02 02:00", periods=36, freq="1D")  # every grid label minus 6 h
STEPS = [6.0, 30.0, 54.0, 78.0]


def _toy_product(path):
    """tp (m since the reference time) and t2m (K) of every run, step and station, as the toy reader's CSV."""
    rng = np.random.default_rng(3)
    tp = np.cumsum(rng.gamma(0.5, 4.0, (len(REFERENCES), len(STEPS), len(CARAVAN_STATIONS))) / 1000.0, axis=1)
    index = pd.MultiIndex.from_product([REFERENCES, STEPS, CARAVAN_STATIONS],
                                       names=["reference_time", "step_hours", "station"])
    table = pd.DataFrame({"tp": tp.ravel(), "t2m": 275.0}, index=index).reset_index()
    table.to_csv(path, index=False)
    return tp


def test_a_reader_registered_by_the_tests_is_ingested_through(tmp_path, data_dir, monkeypatch):
    monkeypatch.setitem(FORECAST_READERS, "toy_csv", toy_forecast_reader)
    tp = _toy_product(tmp_path / "runs.csv")
    config = caravan_window(tmp_path, data_dir, tmp_path / "runs.csv", format="toy_csv")
    report = ingest(validate_config(config, IngestConfig), tmp_path / "out" / "data.nc", show_progress=False)
    with xr.open_dataset(report.output) as ds:
        forecast = ds["precipitation_forecast"].values  # (station, time, lead) in mm
        used = ds["precipitation_forecast_reference_time"].values
        temperature = ds["temperature_forecast"].values
    per_step = np.diff(tp, axis=1) * 1000.0  # (run, step, station): steps 30, 54, 78 h are leads 1-3
    np.testing.assert_allclose(forecast[:, :len(REFERENCES)], per_step.transpose(2, 0, 1), rtol=1e-5)
    np.testing.assert_array_equal(used[0, :len(REFERENCES)], REFERENCES.to_numpy("datetime64[ns]"))
    np.testing.assert_allclose(temperature[:, :len(REFERENCES)], 275.0 - 273.15, rtol=1e-5)


@pytest.mark.parametrize("forecast, fragment", [
    ({"format": "toy_csv"}, "no reader of format 'toy_csv' (one of netcdf, grib2)"),
    ({"format": "grib2"}, "format grib2 reads layout grid, not station: set layout: grid"),
], ids=["unknown format", "layout"])
def test_a_format_or_layout_no_reader_reads_stops_the_ingest_before_reading(tmp_path, data_dir, forecast, fragment):
    config = caravan_window(tmp_path, data_dir, tmp_path / "absent.nc", **forecast)
    config["sources"][0]["path"] = str(tmp_path / "no_observations" / "*.csv")  # reading them would fail first
    with pytest.raises(ConfigError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        ingest(validate_config(config, IngestConfig), tmp_path / "out" / "data.nc", show_progress=False)
    assert not (tmp_path / "out").exists()
