"""Forecast products in ``hydroseq ingest``: a cfgrib-converted ECMWF grid, the station layout,
the output contract, bad input (one clear error naming the file and the reference time, nothing
written) and ``--append``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr
import yaml

from hydroseq.cli import main
from hydroseq.config import ForecastSourceConfig, IngestConfig, validate_config
from hydroseq.config.ingest import GridConfig
from hydroseq.errors import ExitCode, InputDataError
from hydroseq.ingest import build_grid, dataset_checksum, ingest
from hydroseq.ingest.forecast_grid import grid_forecast_source
from hydroseq.ingest.stations import Station

from .forecast_builders import caravan_product, caravan_window, write_cfgrib_grid

REFERENCES = pd.date_range("1981-01-02 02:00", periods=36, freq="1D")  # every grid label minus 6 h


def _ingest(folder, config, out_name="data.nc", append=False):
    return ingest(validate_config(config, IngestConfig), folder / "out" / out_name, append=append,
                  show_progress=False)


def test_reader_accepts_a_cfgrib_converted_ecmwf_grid(tmp_path):
    reference = pd.Timestamp("2001-01-02 00:00")
    hours = np.arange(0, 78, 6, dtype=np.float64)
    lats, lons = np.array([36.0, 35.5, 35.0]), np.array([-81.0, -80.5, -80.0])
    rng = np.random.default_rng(1)
    tp = np.cumsum(rng.gamma(0.3, 0.002, (len(hours), 3, 3)), axis=0)
    tp[0] = 0.0  # ECMWF: nothing accumulated at step 0
    t2m = rng.normal(280.0, 4.0, (len(hours), 3, 3))
    path = write_cfgrib_grid(tmp_path / "ecmwf_hres.nc", reference, hours, lats, lons, tp, t2m)
    source = validate_config({
        "name": "ECMWF HRES", "path": str(path), "layout": "grid", "latency": "6h", "issue_frequency": "1D",
        "horizon": 2, "variables": {"p": {"source": "tp", "units": "m", "aggregation": "sum",
                                          "accumulation": "since_reference"},
                                    "t": {"source": "t2m", "units": "K"}}}, ForecastSourceConfig)
    grid = build_grid(validate_config({"frequency": "1D", "start": "2001-01-01", "end": "2001-01-05"}, GridConfig))
    station = Station("s", "s", lat=35.4, lon=-80.6, area_km2=10.0)  # nearest cell (35.5, -80.5)
    result = grid_forecast_source(source, [station], grid)
    issue = list(grid.labels).index(pd.Timestamp("2001-01-03"))  # first label >= reference + 6 h
    step = {h: i for i, h in enumerate(hours)}
    np.testing.assert_allclose(result.values["p"][0, issue], [(tp[step[48], 1, 1] - tp[step[24], 1, 1]) * 1000,
                                                              (tp[step[72], 1, 1] - tp[step[48], 1, 1]) * 1000],
                               rtol=1e-5)
    np.testing.assert_allclose(result.values["t"][0, issue, 0],
                               np.mean(t2m[[step[h] for h in (30, 36, 42, 48)], 1, 1]) - 273.15, rtol=1e-5)
    assert result.reference_time[0, issue] == np.datetime64(reference, "ns")
    assert np.isnan(result.values["p"][0, :issue]).all() and np.isnat(result.reference_time[0, :issue]).all()
    # fail: the next run was due at 2001-01-03 06:00, so the issue of 2001-01-04 has no product
    assert np.isnan(result.values["p"][0, issue + 1]).all() and np.isnat(result.reference_time[0, issue + 1])


def test_grid_products_use_the_area_weights_of_gridded_rainfall(tmp_path):
    reference = pd.Timestamp("2001-01-02 00:00")
    hours = np.arange(6, 78, 6, dtype=np.float64)
    lats, lons = np.array([36.0, 35.5, 35.0]), np.array([-81.0, -80.5, -80.0])
    tp = np.cumsum(np.random.default_rng(2).gamma(0.3, 0.002, (len(hours), 3, 3)), axis=0)
    path = write_cfgrib_grid(tmp_path / "run.nc", reference, hours, lats, lons, tp, np.full(tp.shape, 280.0))
    weights = tmp_path / "weights.csv"
    pd.DataFrame({"station_id": ["s", "s"], "lat": [36.0, 35.0], "lon": [-81.0, -80.0],
                  "weight": [3.0, 1.0]}).to_csv(weights, index=False)
    source = validate_config({
        "name": "run", "path": str(path), "layout": "grid", "latency": "0h", "issue_frequency": "1D", "horizon": 1,
        "extraction": "weights", "weights_path": str(weights),
        "variables": {"p": {"source": "tp", "units": "m", "aggregation": "sum", "accumulation": "since_reference"}}},
        ForecastSourceConfig)
    grid = build_grid(validate_config({"frequency": "1D", "start": "2001-01-01", "end": "2001-01-03"}, GridConfig))
    result = grid_forecast_source(source, [Station("s", "s", lat=35.5, lon=-80.5, area_km2=1.0)], grid)
    issue = list(grid.labels).index(reference)  # latency 0: lead 1 is the run's first day
    day = tp[list(hours).index(24)]  # accumulated from 0 (no step 0 in the file)
    np.testing.assert_allclose(result.values["p"][0, issue, 0], (0.75 * day[0, 0] + 0.25 * day[2, 2]) * 1000,
                               rtol=1e-5)


def test_ingested_file_holds_station_issue_lead_and_the_product_used(tmp_path, data_dir):
    product = caravan_product(tmp_path / "product.nc", REFERENCES)
    report = _ingest(tmp_path, caravan_window(tmp_path, data_dir, product))
    with xr.open_dataset(report.output) as ds:
        forecast = ds["precipitation_forecast"]
        assert forecast.dims == ("station", "time", "lead") and forecast.dtype == np.float32
        assert ds["lead"].dtype == np.int32 and ds["lead"].values.tolist() == [1, 2, 3]
        assert ds["lead"].attrs["units"] == "1" and "in grid steps" in ds["lead"].attrs["long_name"]  # CF: a count
        assert forecast.attrs["hydroseq_role"] == "forecast" and forecast.attrs["units"] == "mm"
        assert forecast.attrs["forecast_source"] == "test product" and forecast.attrs["forecast_latency"] == "6h"
        assert forecast.attrs["accumulation"] == "since_reference"
        used = ds["precipitation_forecast_reference_time"]
        assert used.dims == ("station", "time")
        labels = ds["time"].values[:len(REFERENCES)]
        np.testing.assert_array_equal(used.values[0, :len(REFERENCES)], labels - np.timedelta64(6, "h"))
        assert np.isnat(used.values[0, len(REFERENCES):]).all()  # after the last product + 1 day: none
        with xr.open_dataset(product) as raw:
            per_step = np.diff(raw["tp"].values, axis=1) * 1000.0  # (time, step, station) -> leads 1..3
        np.testing.assert_allclose(forecast.values[:, :len(REFERENCES), :], per_step.transpose(2, 0, 1), rtol=1e-5)
        assert ds["temperature_forecast"].attrs["units"] == "degC"
        assert str(product) in ds.attrs["source_files"]
        assert dataset_checksum(ds) == ds.attrs["dataset_checksum"]
        assert ds["total_precipitation_sum"].dims == ("station", "time")


def _drop_reference(path):
    caravan_product(path, REFERENCES.delete(7))


def _set(path, name, index, value, **attrs):
    values = np.cumsum(np.random.default_rng(0).gamma(0.5, 4.0, (len(REFERENCES), 4, 2)) / 1000.0, axis=1) \
        if name == "tp" else np.full((len(REFERENCES), 4, 2), 275.0)
    values[index] = value
    defaults = {"units": "m", "GRIB_stepType": "accum"} if name == "tp" else {"units": "K", "GRIB_stepType": "instant"}
    caravan_product(path, REFERENCES, **{name: (values, {**defaults, **attrs})})


BAD_PRODUCTS = [
    ("missing issue", _drop_reference, ["reference time 1981-01-09 02:00:00", "missing"]),
    ("truncated horizon", lambda p: caravan_product(p, REFERENCES, np.array([6.0, 30.0, 54.0])),
     ["truncated horizon", "reference time 1981-01-02 02:00:00"]),
    ("wrong units", lambda p: _set(p, "tp", (0, 0, 0), 0.0, units="mm"),
     ["'tp'", "units 'mm' in the file", "'m'", "reference time 1981-01-02 02:00:00"]),
    ("GRIB_stepType contradicts the accumulation", lambda p: _set(p, "tp", (0, 0, 0), 0.0, GRIB_stepType="instant"),
     ["GRIB_stepType 'instant'", "since_reference", "reference time"]),
    ("non-monotonic steps", lambda p: caravan_product(p, REFERENCES, np.array([6.0, 54.0, 30.0, 78.0])),
     ["not strictly increasing", "reference time 1981-01-02 02:00:00"]),
    ("accumulation decreasing", lambda p: _set(p, "tp", (4, 2, 1), 0.0),
     ["precipitation_forecast", "per-step value", "reference time 1981-01-06 02:00:00"]),
    ("impossible temperature", lambda p: _set(p, "t2m", (9, 1, 0), 1000.0),
     ["temperature_forecast", "1000", "reference time 1981-01-11 02:00:00"]),
    ("valid_time is not time + step", lambda p: _set(p, "t2m", (0, 0, 0), 275.0) or _shift_valid_time(p),
     ["valid_time", "reference time"]),
]


def _shift_valid_time(path):
    import netCDF4

    with netCDF4.Dataset(path, "a") as ds:
        ds["valid_time"][3, 2] = ds["valid_time"][3, 2] + 3600


@pytest.mark.parametrize("name, damage, fragments", BAD_PRODUCTS, ids=[case[0] for case in BAD_PRODUCTS])
def test_bad_product_fails_naming_the_file_and_reference_time_and_writes_nothing(tmp_path, data_dir, name, damage,
                                                                                fragments):
    product = tmp_path / "product.nc"
    damage(product)
    with pytest.raises(InputDataError) as error:
        _ingest(tmp_path, caravan_window(tmp_path, data_dir, product))
    message = str(error.value)
    assert str(product) in message
    for fragment in fragments:
        assert fragment in message, message
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_reference_time_in_two_files_is_an_error(tmp_path, data_dir):
    caravan_product(tmp_path / "run_a.nc", REFERENCES[:10])
    caravan_product(tmp_path / "run_b.nc", REFERENCES[9:])
    with pytest.raises(InputDataError, match="run_b.nc.*reference time 1981-01-11 02:00:00 is also in .*run_a.nc"):
        _ingest(tmp_path, caravan_window(tmp_path, data_dir, tmp_path / "run_*.nc"))


def test_use_previous_takes_the_older_product_with_its_leads_shifted(tmp_path, data_dir):
    product = caravan_product(tmp_path / "product.nc", REFERENCES.delete(7))
    report = _ingest(tmp_path, caravan_window(tmp_path, data_dir, product, on_missing_product="use_previous"))
    with xr.open_dataset(report.output) as ds, xr.open_dataset(product) as raw:
        used = ds["precipitation_forecast_reference_time"].values[0, 7]
        assert pd.Timestamp(used) == REFERENCES[6]
        per_step = np.diff(raw["tp"].values[6], axis=0) * 1000.0  # product 6's leads 1..3, one day old
        np.testing.assert_allclose(ds["precipitation_forecast"].values[:, 7, :2], per_step[1:].T, rtol=1e-5)
        assert np.isnan(ds["precipitation_forecast"].values[:, 7, 2]).all()  # beyond its horizon


def test_cli_prints_one_line_and_writes_nothing(tmp_path, data_dir, capsys):
    product = tmp_path / "product.nc"
    _drop_reference(product)
    (tmp_path / "ingest.yaml").write_text(yaml.safe_dump(caravan_window(tmp_path, data_dir, product)))
    status = main(["ingest", "--config", str(tmp_path / "ingest.yaml"), "--out", str(tmp_path / "out.nc")])
    error = capsys.readouterr().err
    assert status == ExitCode.INPUT_DATA and len(error.strip().splitlines()) == 1, error
    assert "Traceback" not in error and "product.nc" in error and "1981-01-09 02:00:00" in error
    assert not list(tmp_path.glob("out*"))


def test_append_adds_new_issues_and_keeps_earlier_ones(tmp_path, data_dir):
    product = caravan_product(tmp_path / "product.nc", REFERENCES)
    config = caravan_window(tmp_path, data_dir, product)
    whole = _ingest(tmp_path, config, "whole.nc")
    first = {**config, "grid": {**config["grid"], "end": "1981-01-25"}}  # labels 0..24
    rest = {**config, "grid": {**config["grid"], "start": "1981-01-20"}}  # from label 19 on
    _ingest(tmp_path, first, "appended.nc")
    appended = _ingest(tmp_path, rest, "appended.nc", append=True)
    with xr.open_dataset(whole.output) as a, xr.open_dataset(appended.output) as b:
        assert a.attrs["dataset_checksum"] == b.attrs["dataset_checksum"]
    # the window's files hold only the products from label 22 on: labels 19..21 keep the file's values
    later = caravan_product(tmp_path / "later.nc", REFERENCES[22:], seed=5)
    rest["forecast_sources"] = [{**config["forecast_sources"][0], "path": str(later)}]
    _ingest(tmp_path, first, "partial.nc")
    partial = _ingest(tmp_path, rest, "partial.nc", append=True)
    with xr.open_dataset(whole.output) as a, xr.open_dataset(partial.output) as b, xr.open_dataset(later) as raw:
        kept = slice(0, 22)
        np.testing.assert_array_equal(b["precipitation_forecast"].values[:, kept],
                                      a["precipitation_forecast"].values[:, kept])
        np.testing.assert_array_equal(b["precipitation_forecast_reference_time"].values[0, kept],
                                      a["precipitation_forecast_reference_time"].values[0, kept])
        assert pd.Timestamp(b["precipitation_forecast_reference_time"].values[0, 22]) == REFERENCES[22]
        np.testing.assert_allclose(b["precipitation_forecast"].values[:, 22, 0],
                                   np.diff(raw["tp"].values[0], axis=0)[0] * 1000.0, rtol=1e-5)
