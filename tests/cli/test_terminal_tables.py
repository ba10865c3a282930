"""The tables a person reads in an 80-column terminal, from the real ``hydroseq`` entry point.

Each command runs as a process attached to a pseudo-terminal of 80 columns (``TIOCSWINSZ`` and
``COLUMNS``), as an operator's shell would start it. Station ids must print whole (``01022500``, never
``01022…``), no line may pass 80 columns, leads print as days on the daily Caravan grid and as hours on
the hourly Ebnit grid, and every forecast table names its issue time as the local day and the UTC label.
The forecasts use untrained quantile models (what is printed matters here, not how good it is) and flood
thresholds from a table, so that which stations are listed does not depend on the model.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import os
import re
import select
import shutil
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from hydroseq.cli.tables import issue_label, lead_label
from hydroseq.config import IngestConfig, TrainConfig, dump_config, load_config, validate_config
from hydroseq.grid import GridSpec
from hydroseq.ingest import ingest
from tests.fixtures import REPO_ROOT, caravan_ingest_config

COLUMNS = 80
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
LEVELS = [0.05, 0.25, 0.5, 0.75, 0.95]
DAILY_ISSUE = "(local day; UTC label 2014-10-01T08:00:00Z)"


def run_in_terminal(*args: str | Path, cwd: Path, timeout: float = 300.0) -> str:
    """``hydroseq ARGS`` attached to an 80-column pseudo-terminal; what it wrote there, colour codes and
    progress-bar redraws removed. Fails unless it exits 0."""
    script = Path(sys.executable).with_name("hydroseq")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "hydroseq.cli"]
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, COLUMNS, 0, 0))
    env = {**os.environ, "COLUMNS": str(COLUMNS), "LINES": "50", "TERM": "xterm-256color"}
    process = subprocess.Popen([*command, *map(str, args)], stdin=slave, stdout=slave, stderr=slave, cwd=cwd,
                               env=env, close_fds=True)
    os.close(slave)
    chunks, deadline = [], time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if not select.select([master], [], [], 1.0)[0]:
                if process.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the process closed its end
                break
            if not data:
                break
            chunks.append(data)
        status = process.wait(timeout=max(deadline - time.monotonic(), 1.0))
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
    text = ANSI.sub("", b"".join(chunks).decode("utf-8", "replace")).replace("\r\n", "\n")
    text = "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))
    assert status == 0, text[-3000:]
    return text


def flat(text: str) -> str:
    """The text with every run of white space as one space (titles wrap over several lines)."""
    return " ".join(text.split())


def assert_fits(text: str) -> None:
    """Nothing cut with an ellipsis and no line wider than the terminal but those naming files (printed whole
    for copying, the terminal wraps them)."""
    assert "…" not in text, text
    wide = [line for line in text.splitlines() if len(line) > COLUMNS]
    assert all(line.startswith(("report: ", "per station and forecast: ")) for line in wide), wide


def quantile_model(data: Path, out: Path, leads: list[int], splits: dict[str, tuple[str, str]],
                   inputs: list[str]) -> Path:
    """An untrained per-step quantile model of ``data`` exported to ``out`` (torch imported here)."""
    import torch

    from hydroseq.dataset import FeatureLayout, Scalers, load_station_data
    from hydroseq.export.exporter import export_trained_model
    from hydroseq.export.source import read_provenance
    from hydroseq.model import get_model
    from hydroseq.training.checkpoint import Checkpoint

    train = validate_config({
        "data": {"path": str(data), "dynamic_inputs": inputs, "static_inputs": [], "target": "streamflow",
                 "mode": "per_step", "leads": leads, "lagged_target": True, "seq_len": 24, "min_len": 5,
                 "splits": {name: {"start": start, "end": end} for name, (start, end) in splits.items()}},
        "model": {"hidden_size": 8, "observed_skip": True, "quantiles": LEVELS},
        "training": {"output_dir": str(out.parent / "train"), "loss": "quantile"}}, TrainConfig)
    layout = FeatureLayout.from_config(train.data)
    torch.manual_seed(0)
    model = get_model(train.model, len(layout.names), len(leads), "per_step", data=train.data).eval()
    checkpoint = Checkpoint(model.state_dict(), train, layout.names, len(leads),
                            Scalers.fit(load_station_data(data, train.data), train.data), "untrained")
    export_trained_model(checkpoint, train.data.seq_len, out, read_provenance(data), pt2=False)
    return out


@pytest.fixture(scope="module")
def daily(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 31 bundled Caravan basins (2012 to 2014-09-30), their ingest config and an untrained model."""
    work = tmp_path_factory.mktemp("terminal_daily")
    config = caravan_ingest_config(dt.date(2012, 1, 1), dt.date(2014, 9, 30))
    (work / "ingest.yaml").write_text(dump_config(config))
    ingest(config, work / "caravan.nc", show_progress=False)
    quantile_model(work / "caravan.nc", work / "model", [1, 2, 3],
                   {"train": ("2012-01-01", "2013-12-31"), "validation": ("2014-01-01", "2014-03-31"),
                    "test": ("2014-04-01", "2014-09-30")}, ["total_precipitation_sum", "temperature_2m_mean"])
    with xr.open_dataset(work / "caravan.nc") as dataset:
        areas = pd.Series(dataset["area_km2"].values, index=[str(s) for s in dataset["station"].values])
    # per station, a threshold of exactly 1 m³/s (86.4 / area mm/d) that some lead exceeds, and one none does
    low = pd.DataFrame({"station": areas.index, "level": "low", "discharge [m3/s]": 1.0})
    high = low.assign(level="high", **{"discharge [m3/s]": 1e6})
    pd.concat([low, high]).to_csv(work / "thresholds.csv", index=False)
    high.to_csv(work / "high_thresholds.csv", index=False)
    return work


def test_the_ingest_table_prints_whole_station_ids(daily: Path, tmp_path: Path) -> None:
    shutil.copy(daily / "ingest.yaml", tmp_path / "ingest.yaml")
    text = run_in_terminal("ingest", "--config", "ingest.yaml", "--out", tmp_path / "caravan.nc", cwd=tmp_path)
    assert_fits(text)
    with xr.open_dataset(daily / "caravan.nc") as dataset:
        stations = [str(station) for station in dataset["station"].values]
    assert len(stations) == 31
    rows = {line.split()[0]: line for line in text.splitlines() if line.split() and line.split()[0] in stations}
    assert sorted(rows) == sorted(stations)  # each id whole, at the start of its row
    assert all("2012-01-01" in row and "2014-09-30" in row for row in rows.values())  # the local days
    assert "local days of Etc/GMT+8" in flat(text)


def test_a_forecast_lists_the_likely_stations_in_m3s_with_names(daily: Path, tmp_path: Path) -> None:
    out = tmp_path / "forecast.nc"
    text = run_in_terminal("forecast", "--model", daily / "model", "--data", daily / "caravan.nc", "--issue-time",
                           "2014-09-30", "--thresholds", daily / "thresholds.csv", "--out", out, cwd=tmp_path)
    assert_fits(text)
    assert f"hydroseq forecast, issued 2014-09-30 {DAILY_ISSUE}" in flat(text)
    assert re.search(r"│ leads +│ 1 d, 2 d, 3 d +│", text)
    with xr.open_dataset(out) as forecast:
        names = dict(zip(forecast["station"].values.astype(str), forecast["station_name"].values.astype(str),
                         strict=True))
        chance = forecast["streamflow_exceedance_probability"].sel(threshold="low").max("lead").to_series()
    likely = sorted(chance.index[chance >= 0.1].astype(str))
    assert len(likely) >= 5, chance
    assert f"{len(likely)} of 31 stations with a probability of 10 % or more of exceeding a threshold at " \
           f"leads 1 d, 2 d, 3 d, issued 2014-09-30 {DAILY_ISSUE}" in flat(text)
    assert re.search(r"┃ station +┃ name +┃ threshold +┃ +m³/s ┃ P 1 d ┃ P 2 d ┃ P 3 d ┃", text)
    rows = {line.split()[1]: line for line in text.splitlines() if line.startswith("│ ") and line.split()[1] in names}
    assert sorted(rows) == likely  # the others are not listed; every id whole
    for station in likely:
        cells = [cell.strip() for cell in rows[station].split("│")[1:-1]]
        assert cells[1] == names[station][:len(cells[1])] and cells[1], (cells, names[station])  # its name begins
        assert cells[2:4] == ["low", "1.00"], cells  # the threshold in m³/s, through the station's area
    assert "│ high" not in text


def test_a_forecast_with_no_likely_station_says_so_in_one_line(daily: Path, tmp_path: Path) -> None:
    text = run_in_terminal("forecast", "--model", daily / "model", "--data", daily / "caravan.nc", "--issue-time",
                           "2014-09-30", "--thresholds", daily / "high_thresholds.csv", "--min-probability", "0.1",
                           "--out", tmp_path / "forecast.nc", cwd=tmp_path)
    assert_fits(text)
    assert "31 stations, none above 10 %: probability of exceeding a threshold at leads 1 d, 2 d, 3 d, " \
           f"issued 2014-09-30 {DAILY_ISSUE}" in flat(text)
    assert "┃ station" not in text


def test_a_hindcast_prints_its_leads_in_days_and_its_issue_days(daily: Path, tmp_path: Path) -> None:
    text = run_in_terminal("forecast", "--model", daily / "model", "--data", daily / "caravan.nc", "--issue-time",
                           "2014-06-01..2014-06-30", "--out", tmp_path / "hindcast.nc", cwd=tmp_path)
    assert_fits(text)
    issue = ("issued 2014-06-01 .. 2014-06-30 (local days; UTC labels 2014-06-02T08:00:00Z .. "
             "2014-07-01T08:00:00Z; 30 issue times)")
    words = flat(text)
    for title in ("hydroseq forecast", "hindcast NSE over stations", "hindcast of the predictive distribution "
                  "(median over stations; CRPSS against climatology and persistence)"):
        assert f"{title}, {issue}" in words, title
    for lead in ("1 d", "2 d", "3 d"):
        assert re.search(rf"│ +{lead} │ model ", text), lead  # the NSE table
        assert re.search(rf"│ +{lead} │ +-?\d", text), lead  # the distribution's
    assert "grid steps" not in text


@pytest.fixture(scope="module")
def hourly(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two months of the bundled Ebnit hourly series (``configs/ingest_ebnit_hourly.yaml``) and an untrained
    model with leads 1-6 h."""
    work = tmp_path_factory.mktemp("terminal_hourly")
    config = load_config(REPO_ROOT / "configs" / "ingest_ebnit_hourly.yaml", IngestConfig)
    config.stations.path = REPO_ROOT / config.stations.path
    for source in config.sources:
        source.path = str(REPO_ROOT / source.path)
    config.grid.start, config.grid.end = dt.date(2005, 5, 1), dt.date(2005, 6, 30)
    ingest(config, work / "ebnit.nc", show_progress=False)
    quantile_model(work / "ebnit.nc", work / "model", list(range(1, 7)),
                   {"train": ("2005-05-01", "2005-05-31"), "validation": ("2005-06-01", "2005-06-10"),
                    "test": ("2005-06-11", "2005-06-30")}, ["total_precipitation_sum"])
    pd.DataFrame({"station": ["host"], "level": ["low"], "discharge [m3/s]": [0.01]}).to_csv(
        work / "thresholds.csv", index=False)
    return work


def test_an_hourly_forecast_prints_hours_and_the_local_time(hourly: Path, tmp_path: Path) -> None:
    text = run_in_terminal("forecast", "--model", hourly / "model", "--data", hourly / "ebnit.nc", "--issue-time",
                           "2005-06-20T06:00", "--thresholds", hourly / "thresholds.csv", "--out",
                           tmp_path / "forecast.nc", cwd=tmp_path)
    assert_fits(text)
    issue = "issued 2005-06-20 06:00 UTC+01:00 (local day 2005-06-20; UTC label 2005-06-20T05:00:00Z)"
    assert f"hydroseq forecast, {issue}" in flat(text)
    assert re.search(r"│ leads +│ 1 h, 2 h, 3 h, 4 h, 5 h, 6 h +│", text)
    assert f"exceeding a threshold at leads 1 h to 6 h, {issue}" in flat(text)
    assert re.search(r"┃ highest P ┃ at lead ┃", text)
    assert re.search(r"│ host +│ Dornbirner .*│ low +│ +0\.01 │ +\d+% │ +\d h │", text)


@pytest.mark.parametrize(("lead", "step", "text"), [(1, "1D", "1 d"), (3, "1D", "3 d"), (2, "8D", "16 d"),
                                                    (6, "1h", "6 h"), (3, "12h", "36 h"), (1, "15min", "15 min"),
                                                    (0, "1h", "0 h")])
def test_leads_read_as_days_or_hours(lead: int, step: str, text: str) -> None:
    assert lead_label(lead, pd.Timedelta(step)) == text


def test_the_issue_label_of_a_day_boundary_grid() -> None:
    """A daily grid whose days end at 06:00 local time (UTC-5): the label 2014-10-01T11:00Z ends local day
    2014-09-30."""
    grid = GridSpec("1D", "-05:00", dt.time(6, 0))
    labels = np.array(["2014-10-01T11:00"], dtype="datetime64[ns]")
    assert issue_label(labels, grid) == "2014-09-30 (local day; UTC label 2014-10-01T11:00:00Z)"


def test_derived_thresholds_print_in_words_with_their_interval_and_water_years() -> None:
    """A forecaster reads "2-year daily-mean flow", its 90 % interval and the water years it was fitted to,
    in m³/s through the station's area (here 86.4 km², so 1 mm/d is 1 m³/s)."""
    from rich.console import Console

    from hydroseq.cli.forecast_tables import print_exceedance
    from hydroseq.forecast.result import ForecastResult
    from hydroseq.scoring.thresholds import StationThresholds

    thresholds = StationThresholds(
        ("2-year", "q95"), ("01022500", "01547700"), np.array([[15.2, 6.7], [np.nan, 4.8]]),
        "training period 1989-10-01..2008-09-30, daily-mean flows; return periods: Gumbel fitted by L-moments",
        ("2-year daily-mean flow", "daily-mean flow exceeded 5 % of the time"),
        np.array([[13.3, np.nan], [np.nan, np.nan]]), np.array([[17.0, np.nan], [np.nan, np.nan]]),
        np.array([[19, 0], [3, 0]]), ("", "3 water years with enough days for an annual maximum"), 0.9)
    exceedance = np.array([[[[0.4, 0.9]], [[np.nan, 0.2]]]], dtype=np.float32)  # [issue, station, lead, level]
    result = ForecastResult(
        issue_times=np.array(["2014-10-01T08:00"], dtype="datetime64[ns]"), stations=thresholds.stations,
        leads=np.array([1]), step=pd.Timedelta("1D"), values=np.ones((1, 2, 1), np.float32), variable="streamflow",
        units="mm d-1", long_name="forecast of streamflow", attributes={"grid_frequency": "1D"},
        station_names=("Narraguagus River", "Oswayo Creek"), area_km2=np.array([86.4, 86.4]),
        quantiles=np.ones((1, 2, 1, 3), np.float32), quantile_levels=(0.05, 0.5, 0.95), thresholds=thresholds,
        exceedance=exceedance)
    console = Console(record=True, width=COLUMNS)
    print_exceedance(result, console, min_probability=0.1)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= COLUMNS
    assert re.search(r"┃ +┃ +┃ +┃ +┃ +90 % ┃ water ┃ +┃\n┃ station +┃ name +┃ threshold +┃ m³/s ┃ +interval ┃ years ┃ "
                     r"P 1 d ┃", text)
    assert re.search(r"│ 01022500 │ Narraguagus +│ 2-year +│ 15.2 │ 13.3-17.0 │ +19 │ +40% │", text)
    assert re.search(r"│ +│ +│ daily-mean +│ 6.70 │ +│ +│ +90% │", text)  # a percentile: no interval, no years
    assert re.search(r"│ 01547700 │ Oswayo Creek +│ daily-mean +│ 4.80 │ +│ +│ +20% │", text)
    threshold_cells = " ".join(line.split("│")[3].strip() for line in text.splitlines() if line.startswith("│"))
    assert " ".join(threshold_cells.split()) == ("2-year daily-mean flow daily-mean flow exceeded 5 % of the time "
                                                 "daily-mean flow exceeded 5 % of the time")
