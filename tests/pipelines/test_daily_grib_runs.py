"""The daily job with a week-ahead model fed GRIB2 weather-forecast runs as they arrive, late, or not at all.

The 31 bundled basins' daily files arrive one local day at a time (``raw/<day>/<station>.csv``);
the example HRES runs of ``data/forecast_grib2/hres/`` (00 and 12 UTC, 0-240 h, published 8 h after their
reference time) arrive in ``runs/`` before each job, as a feed would deliver them, and the job ingests
them with the shipped ``configs/ingest_grib2_hres.yaml`` (leads 1-7). The job of local day D issues at
D+1 08:00 UTC, when the run due is D+1 00 UTC; its lead 7 ends 175 h after that run. The model reads the
ingested forecast of precipitation and temperature for leads 1-7 and forecasts leads 1-7: the shipped
``models/caravan-camels-us-daily-week-ahead`` when it is there, else an untrained 7-lead model exported
here (what it forecasts does not matter: which run it reads does).

* 09-23: the run due (09-24 00 UTC) is in: read, 8 h old; exit 0.
* 09-24: the run due (09-25 00 UTC) is late: the 09-24 12 UTC run is read (20 h old), the job
  warns, the files flag it (``late_weather_forecast_stations``); exit 0. It arrives for 09-25's job.
* 09-26: the run due (09-27 00 UTC) never arrives, and the feed stays down: 09-26 12 UTC is read.
* 09-27, 09-28: older and older (44 h, 68 h), still every lead; 09-29: 92 h, lead 7 ends after the
  run (leads 1-6 read); still read, still flagged.
* 09-30 .. 10-04: the host is down too, no job runs. 10-05: the job catches up six days of raw files;
  the newest run (09-26 12 UTC, ending 10-06 12 UTC) ends before lead 1: no weather forecast is
  usable. Every station is forecast without it (listed), and the job exits 5.
* 10-05 again: the same files, byte for byte.

The same job with ``configs/ingest_grib2_ensemble.yaml``: each of the 10 members drives the model for
leads 1-7, the published forecast is their mixture.
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

import numpy as np
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
RUNS = REPO_ROOT / "data" / "forecast_grib2"
WEEK_AHEAD = REPO_ROOT / "models" / "caravan-camels-us-daily-week-ahead"
FIRST_DAY, CATCH_UP_DAY = dt.date(2014, 9, 23), dt.date(2014, 10, 5)
INPUTS = ["total_precipitation_sum_forecast", "temperature_2m_mean_forecast"]
LEADS = 7
pytestmark = pytest.mark.slow


def _history_start() -> dt.date:
    """The first local day of the dataset: two years before the first job, the 730 days the shipped model derives
    its climate indices from (its input window is 365 days)."""
    return dt.date(2012, 8, 1) if (WEEK_AHEAD / "metadata.json").exists() else dt.date(2014, 8, 1)


class Feed:
    """The raw folders the job's ingest config reads: gauge and forcing files by day, GRIB2 runs."""

    def __init__(self, root: Path, kind: str = "hres") -> None:
        self.root, self.kind = root, kind
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
        (source,) = (RUNS / self.kind).glob(f"{reference}0000-*.grib2")
        shutil.copy(source, self.root / "runs" / source.name)


def _ingest_config(root: Path, start: dt.date, end: dt.date, name: str = "hres") -> IngestConfig:
    config = load_config(REPO_ROOT / "configs" / f"ingest_grib2_{name}.yaml", IngestConfig)
    config.stations.path = REPO_ROOT / config.stations.path
    assert config.stations.outlines is not None
    config.stations.outlines.path = REPO_ROOT / config.stations.outlines.path
    config.sources[0].path = str(root / "raw" / "*" / "[0-9]*.csv")
    config.forecast_sources[0].path = str(root / "runs" / "*.grib2")
    config.grid.start, config.grid.end = start, end
    return config


def _setup(root: Path, kind: str, first_runs: list[str], model: Path | None) -> dict:
    """History up to the day before :data:`FIRST_DAY` ingested with the shipped config of ``kind``, the model
    (the shipped week-ahead model, or an untrained 7-lead one fitted on this history) and the job's config."""
    name = "hres" if kind == "hres" else "ensemble"
    feed = Feed(root, kind)
    history = _history_start()
    feed.days(history, FIRST_DAY - dt.timedelta(days=1))
    for reference in first_runs:
        feed.run(reference)
    data = root / "data" / "ingested.nc"
    ingest(_ingest_config(root, history, FIRST_DAY - dt.timedelta(days=1), name), data, show_progress=False)
    if model is None and (WEEK_AHEAD / "metadata.json").exists():
        model = WEEK_AHEAD
    elif model is None:  # the scalers see the runs of 09-20 .. 09-22
        splits = {"train": ("2014-08-01", "2014-09-22"), "validation": ("2014-09-23", "2014-09-26"),
                  "test": ("2014-09-27", "2014-09-30")}
        model = export_untrained_forecast_model(data, root / "model", INPUTS, splits, leads=LEADS)
    config = root / f"ingest_daily_{name}.yaml"
    config.write_text(dump_config(_ingest_config(root, FIRST_DAY, FIRST_DAY, name)))
    return {"feed": feed, "data": data, "config": config, "model": model, "publish": root / "forecasts",
            "work": root / "work"}


@pytest.fixture()
def week(tmp_path: Path) -> dict:
    return _setup(tmp_path, "hres", ["2014092012", "2014092100", "2014092112", "2014092200", "2014092212",
                                     "2014092300"], None)


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


def _leads_read(data: Path, day: dt.date) -> list[int]:
    """The leads with a precipitation forecast at every station at the issue of local day ``day``."""
    with xr.open_dataset(data) as dataset:
        issue = np.datetime64(f"{day + dt.timedelta(days=1)}T08:00", "ns")
        values = dataset["total_precipitation_sum_forecast"].sel(time=issue).transpose("station", "lead")
        every_station = np.isfinite(values.values).all(axis=0)
        return [int(lead) for lead, finite in zip(values["lead"].values, every_station, strict=True) if finite]


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
    feed.days(dt.date(2014, 9, 30), CATCH_UP_DAY)  # no job 09-30 .. 10-04: their files come in with 10-05's
    outcomes[CATCH_UP_DAY] = _job(week, CATCH_UP_DAY)

    done, summary = outcomes[dt.date(2014, 9, 23)]
    assert done.returncode == ExitCode.OK, done.stderr[-3000:]
    assert _read(summary) == {"8.0 h"} and summary["late_weather_forecast"] == {}
    with xr.open_dataset(week["publish"] / "forecast_2014-09-23.nc") as published:
        assert published.sizes["lead"] == LEADS  # a week ahead

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
                     (dt.date(2014, 9, 28), "68.0 h"), (dt.date(2014, 9, 29), "92.0 h")):
        done, summary = outcomes[day]
        assert done.returncode == ExitCode.OK, (day, done.stderr[-3000:])
        assert _read(summary) == {age} and len(summary["late_weather_forecast"]) == 31, day
        assert summary["without_weather_forecast"] == {}, day
    # 240 h runs: 68 h late still covers lead 7; 92 h late, lead 7 ends after the run
    assert _leads_read(week["data"], dt.date(2014, 9, 28)) == [1, 2, 3, 4, 5, 6, 7]
    assert _leads_read(week["data"], dt.date(2014, 9, 29)) == [1, 2, 3, 4, 5, 6]

    done, summary = outcomes[CATCH_UP_DAY]  # 09-26 12 UTC ends at 10-06 12 UTC, before lead 1 ends
    assert done.returncode == ExitCode.PARTIAL, done.stderr[-3000:]
    assert summary["stations"]["forecast"] == 31 and len(summary["without_weather_forecast"]) == 31
    assert all("forecast without total_precipitation_sum_forecast, temperature_2m_mean_forecast" in reason
               for reason in summary["without_weather_forecast"].values())
    assert "31 forecast without a weather forecast" in (week["work"] / "logs" / "2014-10-05.log").read_text()
    assert (week["publish"] / "forecast_2014-10-05.nc").exists()

    published = week["publish"]
    names = [f"forecast_2014-10-05.{suffix}" for suffix in ("nc", "csv", "html", "manifest.json")]
    before = {name: _sha(published / name) for name in names}
    again, _ = _job(week, CATCH_UP_DAY)
    assert again.returncode == ExitCode.PARTIAL
    assert {name: _sha(published / name) for name in names} == before


def test_the_daily_job_with_the_ensemble_runs_drives_the_week_ahead_model_with_each_member(week: dict,
                                                                                            tmp_path: Path) -> None:
    """The shipped ensemble config in the daily job: 10 members through the 7-lead model, their mixture published."""
    ensemble = _setup(tmp_path / "ensemble", "ens", ["2014092100", "2014092200", "2014092300"], week["model"])
    ensemble["feed"].days(FIRST_DAY, FIRST_DAY)
    ensemble["feed"].run("2014092400")
    done, summary = _job(ensemble, FIRST_DAY)
    assert done.returncode == ExitCode.OK, done.stderr[-3000:]
    assert _read(summary) == {"8.0 h"} and summary["stations"]["forecast"] == 31
    with xr.open_dataset(ensemble["publish"] / "forecast_2014-09-23.nc") as published:
        assert published.sizes["lead"] == LEADS and published.sizes["realization"] == 10
        assert published.attrs["weather_ensemble_members"] == "10"
        assert "mixture" in published.attrs["weather_ensemble_combination"]
