"""The daily job script end to end on the bundled data, for past issue dates.

Setup with the Python API: the Caravan basins ingested up to 2014-06-20, a tiny per-step model
trained on them (real MLflow store) and exported. Then ``pipelines/daily_forecast.sh`` runs as the
scheduler would run it: incremental ingest of the missing days, forecast, publish.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from hydroseq.config import IngestConfig, dump_config, load_config, validate_config
from hydroseq.errors import ExitCode
from hydroseq.fileio import verify_set
from hydroseq.forecast import run_forecast
from hydroseq.ingest import ingest
from tests.fixtures import store_uri

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "pipelines" / "daily_forecast.sh"


def _ingest_config(start: dt.date, end: dt.date) -> IngestConfig:
    config = load_config(REPO_ROOT / "configs" / "ingest_caravan_daily.yaml", IngestConfig)
    config.stations.path = REPO_ROOT / config.stations.path
    for source in config.sources:
        source.path = str(REPO_ROOT / source.path)
    config.grid.start, config.grid.end = start, end
    return config


def _train_and_export(data: Path, work: Path) -> Path:
    from hydroseq.config import TrainConfig
    from hydroseq.export import export_model
    from hydroseq.training import train

    config = validate_config({
        "data": {"path": str(data), "dynamic_inputs": ["total_precipitation_sum", "temperature_2m_mean",
                                                        "potential_evaporation_sum"],
                 "static_inputs": ["p_mean", "aridity"], "stations": ["01022500", "02064000", "03015500"],
                 "seq_len": 30, "min_len": 10, "cache_dir": str(work / "cache"),
                 "splits": {"train": {"start": "2013-01-01", "end": "2013-12-31"},
                            "validation": {"start": "2014-01-01", "end": "2014-03-31"},
                            "test": {"start": "2014-04-01", "end": "2014-06-20"}}},
        "model": {"hidden_size": 8}, "batching": {"batch_size": 64},
        "training": {"epochs": 1, "threads": 1, "output_dir": str(work / "train")},
        "tracking": {"tracking_uri": store_uri(work), "artifact_root": str(work / "mlartifacts")},
    }, TrainConfig)
    result = train(config)
    export_model(result.run_id, seq_len=30, out_dir=work / "model", tracking_uri=result.tracking_uri)
    return work / "model"


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    work = tmp_path_factory.mktemp("daily")
    data = work / "data" / "ingested.nc"
    ingest(_ingest_config(dt.date(2013, 1, 1), dt.date(2014, 6, 20)), data, show_progress=False)
    model = _train_and_export(data, work)
    base = work / "ingest_daily.yaml"
    base.write_text(dump_config(_ingest_config(dt.date(2014, 6, 20), dt.date(2014, 6, 20))))
    return {"work": work, "data": data, "model": model, "config": base, "publish": work / "forecasts"}


def _run(setup: dict[str, Path], issue: str, **overrides: str) -> subprocess.CompletedProcess:
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "HYDROSEQ_INGEST_CONFIG": str(setup["config"]), "HYDROSEQ_DATA": str(setup["data"]),
           "HYDROSEQ_MODEL": str(setup["model"]), "HYDROSEQ_PUBLISH_DIR": str(setup["publish"]),
           "HYDROSEQ_WORK_DIR": str(setup["work"] / "scratch"), "HYDROSEQ": str(bin_dir / "hydroseq"),
           "PYTHON": sys.executable, **overrides}
    return subprocess.run(["bash", str(SCRIPT), issue], env=env, capture_output=True, text=True, timeout=300,
                          cwd=REPO_ROOT)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_daily_job_appends_forecasts_and_publishes(setup: dict[str, Path], tmp_path: Path) -> None:
    published = setup["publish"]
    done = _run(setup, "2014-06-30")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ingesting local days 2014-06-21 .. 2014-06-30" in done.stderr  # caught up from the file's end
    with xr.open_dataset(setup["data"]) as data:
        assert data["time"].values[-1] == np.datetime64("2014-07-01T08:00", "ns")
    nc, csv_file = published / "forecast_2014-06-30.nc", published / "forecast_2014-06-30.csv"
    assert os.readlink(published / "latest.nc") == nc.name and os.readlink(published / "latest.csv") == csv_file.name
    assert stat.S_IMODE(nc.stat().st_mode) == 0o644
    lines = csv_file.read_text().splitlines()
    header = "station,issue_time,lead,valid_time,value,value_m3s,stale_gauge,station_name,area_km2"
    assert lines[0] == header and len(lines) == 32  # stale_gauge: the job's 72 h limit is on by default
    assert all(",2014-07-01T08:00:00Z," in line for line in lines[1:])
    # the same forecast as from one full ingest: appending lost or shifted nothing
    ingest(_ingest_config(dt.date(2013, 1, 1), dt.date(2014, 6, 30)), tmp_path / "full.nc", show_progress=False)
    direct = run_forecast(setup["model"], tmp_path / "full.nc", "2014-06-30", out=tmp_path / "direct.nc",
                          max_observation_age=72)  # the job's default
    assert direct.stations_forecast > 0
    assert (tmp_path / "direct.csv").read_bytes() == csv_file.read_bytes()

    page = published / "forecast_2014-06-30.html"  # the forecaster's page, in the set, behind latest.html
    assert verify_set(published / "latest.manifest.json") == {nc.name: _sha(nc), csv_file.name: _sha(csv_file),
                                                              page.name: _sha(page)}
    assert os.readlink(published / "latest.manifest.json") == "forecast_2014-06-30.manifest.json"
    assert os.readlink(published / "latest.html") == page.name
    assert "Streamflow forecast of 2014-06-30 (local standard time" in page.read_text()  # the day the files name
    assert "previous forecast" not in page.read_text().split("</header>")[0]
    assert "report: {" in done.stderr  # the page step's JSON summary is logged

    hashes = _sha(nc), _sha(csv_file), _sha(page)
    again = _run(setup, "2014-06-30")
    assert again.returncode == 0, again.stderr[-3000:]
    assert (_sha(nc), _sha(csv_file), _sha(page)) == hashes  # a rerun republishes the same bytes

    nxt = _run(setup, "2014-07-01")
    assert nxt.returncode == 0, nxt.stderr[-3000:]
    assert os.readlink(published / "latest.nc") == "forecast_2014-07-01.nc" and nc.exists()
    assert os.readlink(published / "latest.html") == "forecast_2014-07-01.html"
    header = (published / "forecast_2014-07-01.html").read_text().split("</header>")[0]
    assert "The previous forecast (of 2014-06-30)" in header  # yesterday's, drawn beside


def test_exit_codes_a_scheduler_can_act_on(setup: dict[str, Path], tmp_path: Path) -> None:
    missing_model = _run(setup, "2014-06-30", HYDROSEQ_MODEL=str(tmp_path / "nothing"))
    assert missing_model.returncode == ExitCode.CONFIG and "no exported model" in missing_model.stderr
    bad_date = _run(setup, "30/06/2014")
    assert bad_date.returncode == ExitCode.USAGE
    product = _run(setup, "2014-06-30", HYDROSEQ_FORCING_FORECAST=str(tmp_path / "product.nc"))  # passed on
    assert product.returncode == ExitCode.CONFIG and "reads no ingested weather-forecast input" in product.stderr
    data = tmp_path / "data.nc"
    data.write_bytes(setup["data"].read_bytes())
    # past the end of the raw files (2014-12-31): the ingest brings only missing inputs
    beyond = _run(setup, "2015-02-10", HYDROSEQ_DATA=str(data), HYDROSEQ_PUBLISH_DIR=str(tmp_path / "pub"),
                  HYDROSEQ_WORK_DIR=str(tmp_path / "scratch"))
    assert beyond.returncode == ExitCode.NOTHING_PRODUCED, beyond.stderr[-3000:]
    assert not (tmp_path / "pub" / "forecast_2015-02-10.nc").exists()
    # a page that cannot be made (its hindcast is missing) fails the job: the forecast is not published alone
    no_page = _run(setup, "2014-06-30", HYDROSEQ_REPORT_HINDCAST=str(tmp_path / "absent.nc"),
                   HYDROSEQ_PUBLISH_DIR=str(tmp_path / "pages"), HYDROSEQ_WORK_DIR=str(tmp_path / "scratch_pages"))
    assert no_page.returncode == ExitCode.INPUT_DATA, no_page.stderr[-3000:]
    assert "FAILED (4): hydroseq report exited with 4 (nothing published)" in no_page.stderr
    assert "absent.nc: no such file" in no_page.stderr and not list((tmp_path / "pages").iterdir())


def test_more_than_the_allowed_share_skipped_publishes_and_exits_partial(setup: dict[str, Path],
                                                                         tmp_path: Path) -> None:
    """One station lacks the day before the appended window: it has 9 valid steps, the model needs 10."""
    ingest(_ingest_config(dt.date(2013, 1, 1), dt.date(2014, 6, 20)), tmp_path / "fresh.nc", show_progress=False)
    with xr.open_dataset(tmp_path / "fresh.nc") as source:
        copy = source.load()
    copy["temperature_2m_mean"].loc[{"station": "01022500", "time": copy["time"][-1]}] = np.nan
    data = tmp_path / "data.nc"
    copy.to_netcdf(data)
    published = tmp_path / "pub"
    partial = _run(setup, "2014-06-29", HYDROSEQ_DATA=str(data), HYDROSEQ_PUBLISH_DIR=str(published),
                   HYDROSEQ_WORK_DIR=str(tmp_path / "scratch"), HYDROSEQ_MAX_SKIPPED_SHARE="0.02")
    assert partial.returncode == ExitCode.PARTIAL, partial.stderr[-3000:]
    assert '"stations": {"total": 31, "forecast": 30, "skipped": 1, "stale": 0}' in partial.stderr  # its JSON line
    assert "PARTIAL (5): more than 0.02 of the stations not forecast" in partial.stderr
    log = (tmp_path / "scratch" / "logs" / "2014-06-29.log").read_text()  # the steps' own lines
    assert "partial result: 1 of 31 stations not forecast" in log
    assert os.readlink(published / "latest.nc") == "forecast_2014-06-29.nc"
    rows = (published / "forecast_2014-06-29.csv").read_text().splitlines()
    assert len(rows) == 1 + 30 and not any(row.startswith("01022500,") for row in rows)


def test_sigterm_to_the_job_is_passed_to_the_running_step(setup: dict[str, Path], tmp_path: Path) -> None:
    """The scheduler stops the job while it forecasts: the job exits 143, the published set stays whole."""
    published = tmp_path / "pub"
    first = _run(setup, "2014-07-01", HYDROSEQ_PUBLISH_DIR=str(published), HYDROSEQ_WORK_DIR=str(tmp_path / "w"))
    assert first.returncode == 0, first.stderr[-3000:]
    before = verify_set(published / "latest.manifest.json")
    assert before is not None
    wrapper = tmp_path / "hydroseq_stopped_while_forecasting"
    hydroseq = Path(sys.executable).parent / "hydroseq"
    # the job (the wrapper's parent) gets SIGTERM as the forecast starts, the forecast runs on and must get it too
    wrapper.write_text(f'#!/bin/bash\nif [[ $1 == forecast ]]; then kill -TERM $PPID; fi\nexec "{hydroseq}" "$@"\n')
    wrapper.chmod(0o755)
    stopped = _run(setup, "2014-07-01", HYDROSEQ=str(wrapper), HYDROSEQ_PUBLISH_DIR=str(published),
                   HYDROSEQ_WORK_DIR=str(tmp_path / "w"))
    assert stopped.returncode == 143, stopped.stderr[-3000:]
    assert "stopped by SIGTERM (the step exited with 143)" in stopped.stderr
    assert verify_set(published / "latest.manifest.json") == before
    assert sorted(path.name for path in published.iterdir() if path.name.startswith(".")) == []
    assert sorted(path.name for path in (tmp_path / "w").iterdir() if path.name.startswith(".")) == [".lock"]


def test_the_job_forecasts_from_the_registered_model_an_alias_names(setup: dict[str, Path], tmp_path: Path) -> None:
    """``HYDROSEQ_MODEL=models:/daily@champion``: the exported model, logged and registered as a pyfunc model and
    promoted, publishes the forecast its directory publishes, the NetCDF naming the registered model, its version
    and alias instead of the directory; an alias that names nothing is exit 3, nothing published."""
    import mlflow
    from mlflow.tracking import MlflowClient

    from hydroseq.serving.promote import promote
    from hydroseq.serving.pyfunc_logging import log_exported_model
    from hydroseq.training.tracking import use_tracking_uri

    store = store_uri(tmp_path)
    experiment = MlflowClient(store).create_experiment("daily", artifact_location=(tmp_path / "artifacts").as_uri())
    with use_tracking_uri(store):
        with mlflow.start_run(experiment_id=experiment) as run:
            log_exported_model("model", setup["model"], setup["data"])
        mlflow.register_model(f"runs:/{run.info.run_id}/model", "daily")
    assert promote("daily", 1, "champion", store, force=True).uri == "models:/daily@champion"  # no figures logged

    def job(name: str, model: str) -> subprocess.CompletedProcess:
        return _run(setup, "2014-07-01", HYDROSEQ_MODEL=model, MLFLOW_TRACKING_URI=store,
                    HYDROSEQ_PUBLISH_DIR=str(tmp_path / name), HYDROSEQ_WORK_DIR=str(tmp_path / f"work_{name}"))

    folder, registered = job("folder", str(setup["model"])), job("registered", "models:/daily@champion")
    assert folder.returncode == 0, folder.stderr[-3000:]
    assert registered.returncode == 0, registered.stderr[-3000:]
    assert '"model": {"uri": "models:/daily@champion", "name": "daily", "version": "1"' in registered.stderr
    name = "forecast_2014-07-01"
    assert (tmp_path / "registered" / f"{name}.csv").read_bytes() == (tmp_path / "folder" / f"{name}.csv").read_bytes()
    with xr.open_dataset(tmp_path / "registered" / f"{name}.nc") as by_alias, \
            xr.open_dataset(tmp_path / "folder" / f"{name}.nc") as by_folder:
        assert (by_alias.attrs.pop("model_name"), by_alias.attrs.pop("model_version"),
                by_alias.attrs.pop("model_alias")) == ("daily", "1", "champion")
        assert by_folder.attrs.pop("model_name") == setup["model"].name
        xr.testing.assert_identical(by_alias, by_folder)
    assert "daily, version 1 (alias champion)" in (tmp_path / "registered" / f"{name}.html").read_text()

    unknown = job("unknown", "models:/daily@nothing")
    assert unknown.returncode == ExitCode.CONFIG, unknown.stderr[-3000:]
    assert "model 'daily' has no alias 'nothing' (aliases: @champion -> 1" in unknown.stderr
    assert "FAILED (3): hydroseq forecast exited with 3" in unknown.stderr
    assert not (tmp_path / "unknown").exists() or not any((tmp_path / "unknown").iterdir())


def test_the_job_flags_gauges_silent_for_81_days_by_default(setup: dict[str, Path], tmp_path: Path) -> None:
    """Without any limit set, a job fed gauges whose newest discharge is 81 days old exits 5 (the stale-gauge
    limit of 72 h and the skipped share of 0.2 are on by default); HYDROSEQ_MAX_OBSERVATION_AGE=off lifts it."""
    import pandas as pd

    stations = ["01022500", "02064000", "03015500"]
    raw = tmp_path / "raw"
    raw.mkdir()
    for station in stations:
        table = pd.read_csv(REPO_ROOT / "data" / "daily_caravan_camels_us" / f"{station}.csv", dtype={"date": str})
        table.loc[table["date"] >= "2014-03-31", "streamflow"] = np.nan  # silent from 2014-03-31 on
        table.to_csv(raw / f"{station}.csv", index=False)
    config = _ingest_config(dt.date(2013, 1, 1), dt.date(2014, 6, 19))
    config.stations.ids = stations
    config.sources[0].path = str(raw / "[0-9]*.csv")
    data = tmp_path / "data" / "silent.nc"
    ingest(config, data, show_progress=False)
    config.grid.end = dt.date(2014, 6, 20)
    config.grid.start = dt.date(2014, 6, 20)
    (tmp_path / "ingest_daily.yaml").write_text(dump_config(config))
    job = {"HYDROSEQ_INGEST_CONFIG": str(tmp_path / "ingest_daily.yaml"), "HYDROSEQ_DATA": str(data),
           "HYDROSEQ_PUBLISH_DIR": str(tmp_path / "forecasts"), "HYDROSEQ_WORK_DIR": str(tmp_path / "scratch")}
    defaults = _run(setup, "2014-06-20", **job)
    assert defaults.returncode == ExitCode.PARTIAL, defaults.stderr[-3000:]
    assert "forecast from a gauge silent for more than 72 h" in defaults.stderr
    assert (tmp_path / "forecasts" / "forecast_2014-06-20.nc").exists()  # published all the same
    lifted = _run(setup, "2014-06-20", HYDROSEQ_MAX_OBSERVATION_AGE="off", **job)
    assert lifted.returncode == ExitCode.OK, lifted.stderr[-3000:]


def test_a_backfill_keeps_the_later_days_and_publishes_pi_xml(setup: dict[str, Path], tmp_path: Path) -> None:
    """The job for a past day on a dataset that goes on after it keeps every later step (it cut the file at the
    issue day); ``HYDROSEQ_PI_XML=1`` publishes the PI-XML in the set, behind ``latest.xml``."""
    data = tmp_path / "data.nc"
    data.write_bytes(setup["data"].read_bytes())
    with xr.open_dataset(data) as before:
        before = before.load()
    published = tmp_path / "pub"
    done = _run(setup, "2014-06-15", HYDROSEQ_DATA=str(data), HYDROSEQ_PUBLISH_DIR=str(published),
                HYDROSEQ_WORK_DIR=str(tmp_path / "scratch"), HYDROSEQ_PI_XML="1")
    assert done.returncode == 0, done.stderr[-3000:]
    with xr.open_dataset(data) as after:
        assert after.sizes["time"] == before.sizes["time"] and after["time"].values[-1] > np.datetime64("2014-06-20")
        xr.testing.assert_identical(after.load().drop_attrs(), before.drop_attrs())  # the raw files' own values
    xml = published / "forecast_2014-06-15.xml"
    assert os.readlink(published / "latest.xml") == xml.name and "<TimeSeries" in xml.read_text()
    assert xml.name in (verify_set(published / "latest.manifest.json") or {})
