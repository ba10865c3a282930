"""A week of the daily job, as an operator lives it, on the bundled basins cut into daily raw files.

The 31 Caravan CAMELS-US basins of ``data/daily_caravan_camels_us/`` are written out as one
folder of raw files per local day (``raw/2014-06-01/<station>.csv``, a row each) plus their
history (``raw/2014-05-27-and-earlier/``); a dataset is ingested up to 2014-05-31 and the shipped regional model
(``models/caravan-camels-us-daily``, which reads the observed discharge) forecasts with it. Then
``pipelines/daily_forecast.sh`` runs for each day of 2014-06-01 .. 06-07 as the scheduler would,
with the raw files arriving as they do in operation:

* 06-03: its files have not arrived: the ingest appends nothing and says so, the forecast has no
  input at the issue step (exit 1, no traceback), the previous ``latest.*`` stays; the files come
  in late, with 06-04's, and that run catches up.
* 06-05's run is missed (the host was down): 06-06's run catches it up.
* from 06-05 one gauge is silent (its discharge cells are empty); with a 48 h limit it is not stale
  on 06-06 (48 h) but is on 06-07 (72 h): still forecast and published, flagged, and the job exits
  5 (PARTIAL).
* 06-07 is run again: nothing new to ingest, the same files published byte for byte.

Seven runs of the job, each starting Python three times: about a minute and a half of CPU.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import xarray as xr

from hydroseq.config import IngestConfig, dump_config, load_config
from hydroseq.errors import ExitCode
from hydroseq.fileio import verify_set
from hydroseq.ingest import ingest

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "pipelines" / "daily_forecast.sh"
MODEL = REPO_ROOT / "models" / "caravan-camels-us-daily"
BASINS = REPO_ROOT / "data" / "daily_caravan_camels_us"
# the base model derives its climate indices from at least two years of forcing before the first issue day
HISTORY_START, FIRST_DAY = dt.date(2012, 5, 1), dt.date(2014, 6, 1)
SILENT = "02064000"  # the gauge that stops reporting from 06-05 on
SILENT_FROM = dt.date(2014, 6, 5)
pytestmark = pytest.mark.slow
LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ daily_forecast \d{4}-\d\d-\d\d: ")


def _day(n: int) -> dt.date:
    return FIRST_DAY + dt.timedelta(days=n - 1)


class RawFiles:
    """The raw-file folder the daily job's ingest config reads: history, then one folder per day."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.basins = {path.stem: pd.read_csv(path, dtype={"date": str})
                       for path in sorted(BASINS.glob("[0-9]*.csv"))}

    def history(self, last: dt.date) -> None:
        folder = self.root / f"{last.isoformat()}-and-earlier"  # sorted before the day folders: files in time order
        folder.mkdir(parents=True)
        for station, table in self.basins.items():
            rows = table[(table["date"] >= HISTORY_START.isoformat()) & (table["date"] <= last.isoformat())]
            rows.to_csv(folder / f"{station}.csv", index=False)

    def arrive(self, day: dt.date) -> None:
        """The day's files come in (the silent gauge's without discharge from ``SILENT_FROM`` on)."""
        folder = self.root / day.isoformat()
        folder.mkdir()
        for station, table in self.basins.items():
            row = table[table["date"] == day.isoformat()].copy()
            if station == SILENT and day >= SILENT_FROM:
                row["streamflow"] = float("nan")
            row.to_csv(folder / f"{station}.csv", index=False)


def _ingest_config(raw: Path, start: dt.date, end: dt.date) -> IngestConfig:
    config = load_config(REPO_ROOT / "configs" / "ingest_caravan_daily.yaml", IngestConfig)
    config.stations.path = REPO_ROOT / config.stations.path
    config.sources[0].path = str(raw / "*" / "[0-9]*.csv")
    config.grid.start, config.grid.end = start, end
    return config


@pytest.fixture()
def week(tmp_path: Path) -> dict[str, Path]:
    raw = RawFiles(tmp_path / "raw")
    raw.history(_day(0) - dt.timedelta(days=4))
    for back in range(3, -1, -1):  # the last days before the week, re-read by the first runs' overlap
        raw.arrive(_day(0) - dt.timedelta(days=back))
    data = tmp_path / "data" / "ingested.nc"
    ingest(_ingest_config(raw.root, HISTORY_START, _day(0)), data, show_progress=False)
    config = tmp_path / "ingest_daily.yaml"
    config.write_text(dump_config(_ingest_config(raw.root, _day(0), _day(0))))
    return {"raw": raw.root, "data": data, "config": config, "publish": tmp_path / "forecasts",
            "work": tmp_path / "work"}


def _run(week: dict[str, Path], day: dt.date) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HYDROSEQ_INGEST_CONFIG": str(week["config"]), "HYDROSEQ_DATA": str(week["data"]),
           "HYDROSEQ_MODEL": str(MODEL), "HYDROSEQ_PUBLISH_DIR": str(week["publish"]),
           "HYDROSEQ_WORK_DIR": str(week["work"]), "HYDROSEQ": str(Path(sys.executable).parent / "hydroseq"),
           "PYTHON": sys.executable, "HYDROSEQ_MAX_SKIPPED_SHARE": "0.02", "HYDROSEQ_MAX_OBSERVATION_AGE": "48"}
    return subprocess.run(["bash", str(SCRIPT), day.isoformat()], env=env, capture_output=True, text=True,
                          timeout=300, cwd=REPO_ROOT)


def _summaries(done: subprocess.CompletedProcess[str]) -> dict[str, dict]:
    """The job's log: every line its own, one JSON summary line per hydroseq step."""
    lines = done.stderr.splitlines()
    assert all(LINE.match(line) for line in lines), done.stderr[-3000:]  # no box tables, no stray output
    steps = {}
    for line in lines:
        step, _, text = LINE.sub("", line).partition(": ")
        if step in ("ingest", "forecast"):
            steps[step] = json.loads(text)
    return steps


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_week_with_a_late_day_a_silent_gauge_and_a_rerun(week: dict[str, Path]) -> None:
    raw = RawFiles(week["raw"])
    published = week["publish"]
    for n in (1, 2):
        raw.arrive(_day(n))
        done = _run(week, _day(n))
        assert done.returncode == ExitCode.OK, done.stderr[-3000:]
        steps = _summaries(done)
        assert steps["ingest"]["append"]["new_steps"] == 1 and not steps["ingest"]["append"]["no_new_data"]
        assert steps["forecast"]["stations"] == {"total": 31, "forecast": 31, "skipped": 0, "stale": 0}

    # 06-03: no raw file yet
    dataset_sha = _sha(week["data"])
    late = _run(week, _day(3))
    assert late.returncode == ExitCode.NOTHING_PRODUCED, late.stderr[-3000:]
    assert "no new raw data: nothing appended" in late.stderr and "Traceback" not in late.stderr
    steps = _summaries(late)
    assert steps["ingest"]["append"]["no_new_data"] and not steps["ingest"]["append"]["written"]
    assert steps["forecast"]["status"] == "NOTHING_PRODUCED" and steps["forecast"]["stations"]["forecast"] == 0
    assert all("no data at the issue step" in reason for reason in steps["forecast"]["skipped"].values())
    assert _sha(week["data"]) == dataset_sha
    assert os.readlink(published / "latest.nc") == "forecast_2014-06-02.nc"
    assert not (published / "forecast_2014-06-03.nc").exists()
    log = (week["work"] / "logs" / "2014-06-03.log").read_text()
    assert "WARNING hydroseq.cli.ingest: hydroseq ingest: no new raw data" in log

    # 06-04: 06-03's files came in late, with 06-04's: caught up
    raw.arrive(_day(3))
    raw.arrive(_day(4))
    caught_up = _run(week, _day(4))
    assert caught_up.returncode == ExitCode.OK, caught_up.stderr[-3000:]
    assert "ingesting local days 2014-06-01 .. 2014-06-04" in caught_up.stderr
    assert _summaries(caught_up)["ingest"]["append"]["new_steps"] == 2

    # 06-05: files in, the run missed; 06-06: caught up, the gauge silent for 48 h, not more: not stale
    raw.arrive(_day(5))
    raw.arrive(_day(6))
    done = _run(week, _day(6))
    assert done.returncode == ExitCode.OK, done.stderr[-3000:]
    assert "ingesting local days 2014-06-03 .. 2014-06-06" in done.stderr
    steps = _summaries(done)
    assert steps["ingest"]["append"]["new_steps"] == 2 and steps["forecast"]["stale"] == {}

    # 06-07: the gauge silent for 72 h: stale
    raw.arrive(_day(7))
    done = _run(week, _day(7))
    forecast = _summaries(done)["forecast"]
    assert forecast["stations"]["forecast"] == 31, done.stderr[-3000:]
    assert done.returncode == ExitCode.PARTIAL, done.stderr[-3000:]
    assert list(forecast["stale"]) == [SILENT] and "72 h before the issue time" in forecast["stale"][SILENT]
    assert "PARTIAL (5): more than 0.02 of the stations not forecast or forecast from a gauge silent" in done.stderr
    nc, csv_file = published / "forecast_2014-06-07.nc", published / "forecast_2014-06-07.csv"
    assert os.readlink(published / "latest.nc") == nc.name
    rows = pd.read_csv(csv_file, dtype={"station": str})
    assert len(rows) == 31 * 3 and set(rows.loc[rows["stale_gauge"] == 1, "station"]) == {SILENT}
    with xr.open_dataset(nc) as forecast_file:
        assert list(json.loads(forecast_file.attrs["stale_stations"])) == [SILENT]
        assert float(forecast_file["observation_age"].sel(station=SILENT)) == 72

    # 06-07 again: nothing new to ingest (the dataset is not rewritten), the same bytes published
    page = published / "forecast_2014-06-07.html"
    before = {path.name: _sha(path) for path in (nc, csv_file, page, published / "forecast_2014-06-07.manifest.json")}
    again = _run(week, _day(7))
    assert again.returncode == ExitCode.PARTIAL, again.stderr[-3000:]
    append = _summaries(again)["ingest"]["append"]
    assert append == {**append, "new_steps": 0, "no_new_data": False, "written": False}
    assert {name: _sha(published / name) for name in before} == before
    assert verify_set(published / "latest.manifest.json") == {nc.name: before[nc.name],
                                                                 csv_file.name: before[csv_file.name],
                                                                 page.name: before[page.name]}
