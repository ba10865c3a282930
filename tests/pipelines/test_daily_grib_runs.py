"""A week of the daily job fed GRIB2 weather-forecast runs as they arrive, late, or not at all.

The 31 bundled basins' daily files arrive one local day at a time (``raw/<day>/<station>.csv``);
the example HRES runs of ``data/forecast_grib2/hres/`` (00 and 12 UTC, published 7 h after their
reference time: ``configs/ingest_grib2_hres.yaml``) arrive in ``runs/`` before each job, as a feed
would deliver them. The job of local day D issues at D+1 08:00 UTC, when the run due is D+1 00 UTC.
An untrained exported model reads the ingested forecast of precipitation and temperature for
leads 1-3 (what it forecasts does not matter here: which run it reads does).

* 09-23: the run due (09-24 00 UTC) is in: read, 8 h old; exit 0.
* 09-24: the run due (09-25 00 UTC) is late: the 09-24 12 UTC run is read (20 h old), the job
  warns, the files flag it (``late_weather_forecast_stations``); exit 0. It arrives for 09-25's job.
* 09-26: the run due (09-27 00 UTC) never arrives, and the feed stays down: 09-26 12 UTC is read.
* 09-27, 09-28: older and older, fewer leads covered; still read, still flagged.
* 09-29: the newest run (09-26 12 UTC) ends before lead 1: no weather forecast is usable. Every
  station is forecast without it (listed), and the job exits 5.
* 09-29 again: the same files, byte for byte.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import xarray as xr

from hydroseq.config import IngestConfig, dump_config, load_config
from hydroseq.errors import ExitCode
from hydroseq.ingest import ingest
from tests.fixtures import export_untrained_forecast_model

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "pipelines" / "daily_forecast.sh"
BASINS = REPO_ROOT / "data" / "daily_caravan_camels_us"
RUNS = REPO_ROOT / "data" / "forecast_grib2" / "hres"
HISTORY_START, FIRST_DAY = dt.date(2014, 8, 1), dt.date(2014, 9, 23)
INPUTS = ["total_precipitation_sum_forecast", "temperature_2m_mean_forecast"]
pytestmark = pytest.mark.slow


class Feed:
    """The raw folders the job's ingest config reads: gauge and forcing files by day, GRIB2 runs."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.basins = {path.stem: pd.read_csv(path, dtype={"date": str}) for path in sorted(BASINS.glob("[0-9]*.csv"))}
        (root / "runs").mkdir(parents=True)

    def days(self, first: dt.date, last: dt.date) -> None:
        folder = self.root / "raw" / f"{first.isoformat()}..{last.isoformat()}"
        folder.mkdir(parents=True)
        for station, table in self.basins.items():
            table[(table["date"] >= first.isoformat()) & (table["date"] <= last.isoformat())].to_csv(
                folder / f"{station}.csv", index=False)

    def run(self, reference: str) -> None:
        """The run of ``reference`` (``yyyymmddHH``) comes in."""
        (source,) = RUNS.glob(f"{reference}0000-*.grib2")
        shutil.copy(source, self.root / "runs" / source.name)


def _ingest_config(root: Path, start: dt.date, end: dt.date) -> IngestConfig:
    config = load_config(REPO_ROOT / "configs" / "ingest_grib2_hres.yaml", IngestConfig)
    config.stations.path = REPO_ROOT / config.stations.path
    config.sources[0].path = str(root / "raw" / "*" / "[0-9]*.csv")
    config.forecast_sources[0].path = str(root / "runs" / "*.grib2")
    config.grid.start, config.grid.end = start, end
    return config


@pytest.fixture()
def week(tmp_path: Path) -> dict:
    feed = Feed(tmp_path)
    feed.days(HISTORY_START, FIRST_DAY - dt.timedelta(days=1))
    for reference in ("2014092012", "2014092100", "2014092112", "2014092200", "2014092212", "2014092300"):
        feed.run(reference)
    data = tmp_path / "data" / "ingested.nc"
    ingest(_ingest_config(tmp_path, HISTORY_START, FIRST_DAY - dt.timedelta(days=1)), data, show_progress=False)
    model = export_untrained_forecast_model(data, tmp_path / "model", INPUTS, {
        "train": ("2014-08-01", "2014-09-22"), "validation": ("2014-09-23", "2014-09-26"),
        "test": ("2014-09-27", "2014-09-30")})  # the scalers see the runs of 09-20 .. 09-22
    config = tmp_path / "ingest_daily.yaml"
    config.write_text(dump_config(_ingest_config(tmp_path, FIRST_DAY, FIRST_DAY)))
    return {"feed": feed, "data": data, "config": config, "model": model, "publish": tmp_path / "forecasts",
            "work": tmp_path / "work"}


def _job(week: dict, day: dt.date) -> tuple[subprocess.CompletedProcess[str], dict]:
    env = {**os.environ, "HYDROSEQ_INGEST_CONFIG": str(week["config"]), "HYDROSEQ_DATA": str(week["data"]),
           "HYDROSEQ_MODEL": str(week["model"]), "HYDROSEQ_PUBLISH_DIR": str(week["publish"]),
           "HYDROSEQ_WORK_DIR": str(week["work"]), "HYDROSEQ": str(Path(sys.executable).parent / "hydroseq"),
           "PYTHON": sys.executable, "HYDROSEQ_MAX_SKIPPED_SHARE": "0.02"}
    done = subprocess.run(["bash", str(SCRIPT), day.isoformat()], env=env, capture_output=True, text=True,
                          timeout=300, cwd=REPO_ROOT)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return done, json.loads((week["work"] / "forecast.json").read_text())


def _read(summary: dict) -> set[str]:
    """The runs' ages the forecast read, over stations and inputs, e.g. {'8.0 h'}."""
    return {f"{use['age_hours']} h" if "age_hours" in use else use["from"]
            for inputs in summary["forecast_inputs"].values() for use in inputs.values()}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_week_of_grib2_runs_with_a_late_one_a_missing_one_and_an_outage(week: dict) -> None:
    feed = week["feed"]
    arrivals = {dt.date(2014, 9, 23): ["2014092312", "2014092400"],
                dt.date(2014, 9, 24): ["2014092412"],                  # 09-25 00 UTC is late
                dt.date(2014, 9, 25): ["2014092500", "2014092512", "2014092600"],
                dt.date(2014, 9, 26): ["2014092612"]}                  # 09-27 00 UTC never comes; the feed is down
    outcomes = {}
    for offset in range(7):
        day = FIRST_DAY + dt.timedelta(days=offset)
        feed.days(day, day)
        for reference in arrivals.get(day, []):
            feed.run(reference)
        outcomes[day] = _job(week, day)

    done, summary = outcomes[dt.date(2014, 9, 23)]
    assert done.returncode == ExitCode.OK, done.stderr[-3000:]
    assert _read(summary) == {"8.0 h"} and summary["late_weather_forecast"] == {}

    done, summary = outcomes[dt.date(2014, 9, 24)]
    assert done.returncode == ExitCode.OK, done.stderr[-3000:]
    assert _read(summary) == {"20.0 h"} and len(summary["late_weather_forecast"]) == 31
    assert ("the run of 2014-09-25T00:00Z was not in by the issue time; read the run of 2014-09-24T12:00Z (20 h old)"
            in next(iter(summary["late_weather_forecast"].values())))
    assert "WARNING: the newest weather-forecast run was not in by the issue time" in done.stderr
    with xr.open_dataset(week["publish"] / "forecast_2014-09-24.nc") as published:
        assert len(json.loads(published.attrs["late_weather_forecast_stations"])) == 31

    done, summary = outcomes[dt.date(2014, 9, 25)]  # the late run came in: today's run is read
    assert done.returncode == ExitCode.OK and _read(summary) == {"8.0 h"} and not summary["late_weather_forecast"]

    for day, age in ((dt.date(2014, 9, 26), "20.0 h"), (dt.date(2014, 9, 27), "44.0 h"),
                     (dt.date(2014, 9, 28), "68.0 h")):
        done, summary = outcomes[day]
        assert done.returncode == ExitCode.OK, (day, done.stderr[-3000:])
        assert _read(summary) == {age} and len(summary["late_weather_forecast"]) == 31, day
        assert summary["without_weather_forecast"] == {}, day

    done, summary = outcomes[dt.date(2014, 9, 29)]  # 09-26 12 UTC ends at 09-30 12 UTC, before lead 1 ends
    assert done.returncode == ExitCode.PARTIAL, done.stderr[-3000:]
    assert summary["stations"]["forecast"] == 31 and len(summary["without_weather_forecast"]) == 31
    assert all("forecast without total_precipitation_sum_forecast, temperature_2m_mean_forecast" in reason
               for reason in summary["without_weather_forecast"].values())
    assert "31 forecast without a weather forecast" in (week["work"] / "logs" / "2014-09-29.log").read_text()
    assert (week["publish"] / "forecast_2014-09-29.nc").exists()

    published = week["publish"]
    names = [f"forecast_2014-09-29.{suffix}" for suffix in ("nc", "csv", "html", "manifest.json")]
    before = {name: _sha(published / name) for name in names}
    again, _ = _job(week, dt.date(2014, 9, 29))
    assert again.returncode == ExitCode.PARTIAL
    assert {name: _sha(published / name) for name in names} == before
