"""Runs too short for a week-ahead horizon (issue 47), refused at ingest with one line naming the file and what is
missing, nothing written: a GRIB2 run whose steps end before the config's 7 leads, a station product of 3 days
ingested for 7, and a config whose listed steps cannot reach its horizon (exit 3, before any file is read).
A run with fewer members than the config says: ``tests/ingest/test_grib2.py`` (``holds 9 member(s)``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hydroseq.cli import main
from hydroseq.config import IngestConfig, validate_config
from hydroseq.errors import ExitCode
from hydroseq.ingest import ingest
from pipelines.make_forecast_product import make_product
from tests.ingest.forecast_builders import caravan_window

from .grib_builders import ENS_RUNS, copy_runs, grib_ingest_config, rewrite


def _ingest_cli(tmp_path: Path, config: dict, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, Path]:
    path = tmp_path / "ingest.yaml"
    path.write_text(yaml.safe_dump(config))
    out = tmp_path / "out" / "data.nc"
    status = main(["ingest", "--config", str(path), "--out", str(out), "-q"])
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "Traceback" not in error, error
    assert not out.parent.exists() or not any(out.parent.iterdir())  # nothing written
    return status, error, path


def test_a_grib2_run_ending_before_the_seventh_lead_is_refused(tmp_path: Path, data_dir: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    files = copy_runs(data_dir, "ens", ENS_RUNS[:3], tmp_path / "runs")
    rewrite(files[1], keep=lambda keys: int(keys["step"]) <= 96)  # a run cut after four days
    config = grib_ingest_config(data_dir, str(tmp_path / "runs" / "*.grib2"), 10, None, horizon=7)  # any steps
    status, error, _ = _ingest_cli(tmp_path, config, capsys)
    assert status == ExitCode.INPUT_DATA
    assert str(files[1]) in error and "reference time 2014-09-22 00:00:00" in error
    assert "truncated horizon: the steps end at 4 days 00:00:00, but 7 lead(s) of the grid" in error


def test_a_three_day_station_product_ingested_for_seven_leads_is_refused(tmp_path: Path, data_dir: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    variables = ["total_precipitation_sum", "temperature_2m_mean"]
    config = caravan_window(tmp_path, data_dir, tmp_path / "product.nc", rows=40, horizon=7)
    observed = {key: value for key, value in config.items() if key != "forecast_sources"}
    observed_file = ingest(validate_config(observed, IngestConfig), tmp_path / "observed.nc", show_progress=False)
    make_product(observed_file.output, variables, tmp_path / "product.nc", [0.0] * 3, 3, "6h", seed=0)
    config["forecast_sources"][0]["variables"] = {
        "precipitation_forecast": {"source": "total_precipitation_sum", "units": "m", "aggregation": "sum",
                                   "accumulation": "since_reference"},
        "temperature_forecast": {"source": "temperature_2m_mean", "units": "K"}}
    status, error, _ = _ingest_cli(tmp_path, config, capsys)
    assert status == ExitCode.INPUT_DATA
    assert f"{tmp_path / 'product.nc'} (reference time 1981-01-" in error
    assert "truncated horizon: the steps end at 3 days 06:00:00, but 7 lead(s) of the grid" in error


def test_listed_steps_that_cannot_reach_the_horizon_are_a_config_error(tmp_path: Path, data_dir: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    copy_runs(data_dir, "ens", ENS_RUNS[:1], tmp_path / "runs")
    config = grib_ingest_config(data_dir, str(tmp_path / "runs" / "*.grib2"), 10, ["0/96/12"], horizon=7)
    status, error, path = _ingest_cli(tmp_path, config, capsys)
    assert status == ExitCode.CONFIG and str(path) in error
    assert ("forecast source 'example runs': its steps end at 96 h, but horizon 7 (lead steps of the 1D grid) after "
            "a latency of 8h needs steps up to 176 h at least") in error
