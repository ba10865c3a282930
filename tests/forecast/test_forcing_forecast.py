"""``hydroseq forecast --forcing-forecast FILE``: a product file gridded at forecast time with the ingested
file's own forecast source gives the forecast the ingested product gives, never uses a product published
after the issue time or older than the ingested one, and a bad file is one clear error with nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from hydroseq.cli import main
from hydroseq.config import IngestConfig, validate_config
from hydroseq.errors import ConfigError, ExitCode, InputDataError
from hydroseq.forecast import run_forecast
from hydroseq.ingest import ingest
from tests.fixtures import export_untrained_forecast_model
from tests.ingest.forecast_builders import caravan_product, caravan_window

ROWS = 60
REFERENCES = pd.date_range("1981-01-02 02:00", periods=ROWS - 2, freq="1D")  # grid label - 6 h: just in time
ISSUE = "1981-02-20"  # the local day; its label is 1981-02-21 08:00 UTC, its product 1981-02-21 02:00
SPLITS = {"train": ("1981-01-01", "1981-01-31"), "validation": ("1981-02-01", "1981-02-10"),
          "test": ("1981-02-11", "1981-02-27")}
FORECAST = "precipitation_forecast"
TEMPERATURE = "temperature_forecast"


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> dict[str, Path]:
    """Two real Caravan basins ingested with an archive of products, and untrained exported models that read
    the precipitation forecast for leads 1-3 (``model``), or it and the temperature forecast (``model_both``)."""
    folder = tmp_path_factory.mktemp("forcing_forecast")
    products = caravan_product(folder / "archive.nc", REFERENCES)
    config = caravan_window(folder, data_dir, products, rows=ROWS, on_missing_product="use_previous")
    config["sources"][0]["variables"]["streamflow"] = {"source": "streamflow", "units": "mm/d", "aggregation": "mean"}
    data = ingest(validate_config(config, IngestConfig), folder / "data.nc", show_progress=False).output
    return {"folder": folder, "products": products, "data": data,
            "model": export_untrained_forecast_model(data, folder / "model", [FORECAST], SPLITS),
            "model_both": export_untrained_forecast_model(data, folder / "model_both", [FORECAST, TEMPERATURE],
                                                         SPLITS)}


def _product_of(products: Path, reference: str, path: Path, **edit: str) -> Path:
    """The one product of ``products`` with this reference time, as its own file (``edit``: attributes of tp)."""
    with xr.open_dataset(products, decode_times=False) as opened:
        seconds = (pd.Timestamp(reference) - pd.Timestamp("1970-01-01")) // pd.Timedelta(seconds=1)
        one = opened.isel(time=[int(np.flatnonzero(opened["time"].values == seconds)[0])]).load()
    one["tp"].attrs.update(edit)
    one.to_netcdf(path, encoding={"station": {"dtype": str}})
    return path


def _products_of(products: Path, references: list[str], path: Path, implausible: str) -> Path:
    """The products of ``products`` with these reference times in one file; that of ``implausible`` with a 2 m
    temperature of 1000 K (outside the plausible range)."""
    with xr.open_dataset(products, decode_times=False) as opened:
        seconds = [(pd.Timestamp(reference) - pd.Timestamp("1970-01-01")) // pd.Timedelta(seconds=1)
                   for reference in references]
        chosen = opened.isel(time=[int(np.flatnonzero(opened["time"].values == value)[0]) for value in seconds]).load()
    chosen["t2m"].values[references.index(implausible)] = 1000.0
    chosen.to_netcdf(path, encoding={"station": {"dtype": str}})
    return path


def _without_newest_products(data: Path, path: Path, days: int, variables: tuple[str, ...] = (FORECAST,)) -> Path:
    """``data`` as the daily job has it before ingesting the newest products: the last ``days`` issues
    before the end of the archive have no forecast of ``variables``."""
    with xr.open_dataset(data) as opened:
        stale = opened.load()
    issue = int(np.flatnonzero(stale["time"].values == np.datetime64("1981-02-21T08:00"))[0])
    for name in variables:
        stale[name][:, issue - days + 1:, :] = np.nan
        stale[f"{name}_reference_time"][:, issue - days + 1:] = np.datetime64("NaT", "ns")
    stale.to_netcdf(path)
    return path


def test_the_product_file_gives_the_forecast_of_the_ingested_product(archive, tmp_path) -> None:
    ingested = run_forecast(archive["model"], archive["data"], ISSUE, out=tmp_path / "ingested.nc")
    stale = _without_newest_products(archive["data"], tmp_path / "stale.nc", days=3)
    without = run_forecast(archive["model"], stale, ISSUE, out=tmp_path / "without.nc")
    assert set(without.result.fallback) == set(without.result.stations)  # no product: forecast without one
    newest = _product_of(archive["products"], "1981-02-21 02:00", tmp_path / "newest.nc")
    with_file = run_forecast(archive["model"], stale, ISSUE, out=tmp_path / "with.nc", forcing_forecast=newest)
    assert with_file.result.fallback == {}
    np.testing.assert_array_equal(with_file.result.values, ingested.result.values)
    assert not np.array_equal(with_file.result.values, without.result.values)
    np.testing.assert_array_equal(with_file.result.forecast_input_age_hours, 6.0)
    with xr.open_dataset(tmp_path / "with.nc") as written:
        assert written.attrs["forcing_forecast_file"] == "newest.nc"
        assert written.attrs["forcing_forecast_source"] == "test product"
        assert len(written.attrs["forcing_forecast_sha256"]) == 64


def test_a_product_published_after_the_issue_time_is_never_used(archive, tmp_path) -> None:
    stale = _without_newest_products(archive["data"], tmp_path / "stale.nc", days=3)
    without = run_forecast(archive["model"], stale, ISSUE, out=tmp_path / "without.nc")
    tomorrow = _product_of(archive["products"], "1981-02-22 02:00", tmp_path / "tomorrow.nc")  # published 02-22 08:00
    run = run_forecast(archive["model"], stale, ISSUE, out=tmp_path / "with.nc", forcing_forecast=tomorrow)
    np.testing.assert_array_equal(run.result.values, without.result.values)
    assert set(run.result.fallback) == set(run.result.stations)


def test_an_older_file_never_replaces_a_newer_ingested_product(archive, tmp_path) -> None:
    ingested = run_forecast(archive["model"], archive["data"], ISSUE, out=tmp_path / "ingested.nc")
    older = _product_of(archive["products"], "1981-02-20 02:00", tmp_path / "older.nc")
    run = run_forecast(archive["model"], archive["data"], ISSUE, out=tmp_path / "with.nc", forcing_forecast=older)
    np.testing.assert_array_equal(run.result.values, ingested.result.values)
    np.testing.assert_array_equal(run.result.forecast_input_age_hours, 6.0)


def test_a_bad_product_file_is_one_line_naming_it_and_nothing_is_written(archive, tmp_path, capsys) -> None:
    wrong_units = _product_of(archive["products"], "1981-02-21 02:00", tmp_path / "wrong_units.nc", units="mm")
    with pytest.raises(InputDataError, match="wrong_units.nc .reference time 1981-02-21 02:00:00.*units 'mm'"):
        run_forecast(archive["model"], archive["data"], ISSUE, out=tmp_path / "f.nc", forcing_forecast=wrong_units)
    assert not list(tmp_path.glob("f.*"))
    status = main(["forecast", "--model", str(archive["model"]), "--data", str(archive["data"]), "--issue-time",
                   ISSUE, "--out", str(tmp_path / "cli.nc"), "--forcing-forecast", str(wrong_units)])
    error = capsys.readouterr().err
    assert status == ExitCode.INPUT_DATA and len(error.strip().splitlines()) == 1 and "Traceback" not in error
    assert not list(tmp_path.glob("cli.*"))


def test_a_bad_product_published_after_the_issue_time_fails_only_the_issue_time_that_uses_it(
        archive: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The file holds the issue time's product and the next day's, published 24 h after it with an implausible
    temperature: the forecast at the issue time reads only the first (as from a file with it alone); the next
    day's forecast, which would use the bad one, fails with one line naming the file and its reference time."""
    stale = _without_newest_products(archive["data"], tmp_path / "stale.nc", days=3)
    newest = _product_of(archive["products"], "1981-02-21 02:00", tmp_path / "newest.nc")
    alone = run_forecast(archive["model"], stale, ISSUE, out=tmp_path / "alone.nc", forcing_forecast=newest)
    both = _products_of(archive["products"], ["1981-02-21 02:00", "1981-02-22 02:00"], tmp_path / "both.nc",
                        implausible="1981-02-22 02:00")
    forecast = ["forecast", "--model", str(archive["model"]), "--data", str(stale), "--forcing-forecast", str(both)]
    status = main([*forecast, "--issue-time", ISSUE, "--out", str(tmp_path / "today.nc")])
    assert status == ExitCode.OK, capsys.readouterr().err
    with xr.open_dataset(tmp_path / "today.nc") as written:
        np.testing.assert_array_equal(written["streamflow"].values, alone.result.values[0])
        assert (written["forecast_input_age"].values == 6.0).all()
    capsys.readouterr()
    status = main([*forecast, "--issue-time", "1981-02-21", "--out", str(tmp_path / "tomorrow.nc")])
    error = capsys.readouterr().err.strip()
    assert status == ExitCode.INPUT_DATA and len(error.splitlines()) == 1 and "Traceback" not in error
    assert "both.nc (reference time 1981-02-22 02:00:00)" in error and "1000" in error, error
    assert not list(tmp_path.glob("tomorrow.*"))


def test_an_input_the_file_leaves_empty_falls_back_alone_and_the_summary_says_which(
        archive: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The newest product's precipitation is all missing, its temperature is not (nothing newer is ingested): the
    model reads "no forecast" for precipitation only and the product's temperature, as from an ingested file with
    just that temperature. The summary says so per station and input; the files agree with ``forecast_input_age``."""
    stale = _without_newest_products(archive["data"], tmp_path / "stale.nc", days=3, variables=(FORECAST, TEMPERATURE))
    newest = _product_of(archive["products"], "1981-02-21 02:00", tmp_path / "newest.nc")
    with xr.open_dataset(newest) as opened:
        dry = opened.load()
    dry["tp"].values[:] = np.nan
    dry.to_netcdf(tmp_path / "no_tp.nc", encoding={"station": {"dtype": str}})
    status = main(["--json", "forecast", "--model", str(archive["model_both"]), "--data", str(stale), "--issue-time",
                   ISSUE, "--out", str(tmp_path / "cli.nc"), "--forcing-forecast", str(tmp_path / "no_tp.nc")])
    out, error = capsys.readouterr()
    assert status == ExitCode.OK, error
    summary = json.loads(out)
    stations = summary["stations"]["total"]
    assert summary["stations"]["forecast"] == stations == len(summary["forecast_inputs"])
    for station, inputs in summary["forecast_inputs"].items():
        assert inputs == {FORECAST: {"from": "fallback"}, TEMPERATURE: {"from": "product", "age_hours": 6.0}}
        reason = summary["without_weather_forecast"][station]
        assert reason.startswith(f"forecast without {FORECAST} (none valid at the issue time 1981-02-21T08:00:00Z)")
        assert reason.endswith(f"{TEMPERATURE} from the product, 6 h old")
    assert "stations forecast without some weather-forecast input" in error
    with xr.open_dataset(tmp_path / "cli.nc") as written:
        assert list(written["forecast_input"].values) == [FORECAST, TEMPERATURE]
        np.testing.assert_array_equal(written["forecast_input_read"].values, [[0, 1]] * stations)
        by_input = written["forecast_input_age_by_input"].values
        assert np.isnan(by_input[:, 0]).all() and (by_input[:, 1] == 6.0).all()
        np.testing.assert_array_equal(written["forecast_input_age"].values, by_input[:, 1])
        values = written["streamflow"].values
    rows = pd.read_csv(tmp_path / "cli.csv", dtype=str, keep_default_na=False)
    assert list(rows.columns[-4:]) == ["forecast_input_age_hours", "forecast_input_fallback", "station_name",
                                       "area_km2"]  # each row ends with its station's name and area
    assert (rows["forecast_input_age_hours"] == "6").all() and (rows["forecast_input_fallback"] == FORECAST).all()
    temperature_only = _without_newest_products(archive["data"], tmp_path / "t_only.nc", days=3)
    ingested = run_forecast(archive["model_both"], temperature_only, ISSUE, out=tmp_path / "ingested.nc")
    np.testing.assert_array_equal(values, ingested.result.values[0])  # read the product's temperature


def test_the_cli_forecasts_with_the_file(archive, tmp_path, capsys) -> None:
    stale = _without_newest_products(archive["data"], tmp_path / "stale.nc", days=1)
    newest = _product_of(archive["products"], "1981-02-21 02:00", tmp_path / "newest.nc")
    status = main(["forecast", "--model", str(archive["model"]), "--data", str(stale), "--issue-time", ISSUE,
                   "--out", str(tmp_path / "cli.nc"), "--forcing-forecast", str(newest)])
    assert status == ExitCode.OK, capsys.readouterr().err
    assert "without a weather forecast" not in capsys.readouterr().out
    with xr.open_dataset(tmp_path / "cli.nc") as written:
        assert (written["forecast_input_age"].values == 6.0).all()


def test_the_file_needs_a_model_and_a_data_file_that_read_products(archive, exported, ingested, tmp_path) -> None:
    newest = _product_of(archive["products"], "1981-02-21 02:00", tmp_path / "newest.nc")
    with pytest.raises(ConfigError, match="reads no ingested weather-forecast input"):
        run_forecast(exported, ingested, "2014-06-30", out=tmp_path / "a.nc", forcing_forecast=newest)
    with xr.open_dataset(archive["data"]) as opened:
        no_config = opened.load()
    no_config.attrs.pop("ingest_config")
    no_config.to_netcdf(tmp_path / "no_config.nc")
    with pytest.raises(ConfigError, match="records no ingest config"):
        run_forecast(archive["model"], tmp_path / "no_config.nc", ISSUE, out=tmp_path / "b.nc",
                     forcing_forecast=newest)
    with pytest.raises(ConfigError, match="no such file"):
        run_forecast(archive["model"], archive["data"], ISSUE, out=tmp_path / "c.nc",
                     forcing_forecast=tmp_path / "absent.nc")
