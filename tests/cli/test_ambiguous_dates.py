"""Dates whose day/month order is not stated (``03/04/2014``) are rejected, in input files, configs and
on the command line, with one line naming the file and line or the option."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pandas as pd
import pytest
import xarray as xr
import yaml

from hydroseq.cli import main
from hydroseq.errors import ConfigError, ExitCode
from hydroseq.grid import GridSpec
from hydroseq.grid.date_text import day_month_order_problem
from hydroseq.grid.issue_times import parse_issue_times


def _run(*args: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(arg) for arg in args])
    return status, out.getvalue(), err.getvalue()


def _ingest_config(tmp_path: Path, stamps: list[str], **source: object) -> Path:
    (tmp_path / "stations.csv").write_text("station_id,name,lat,lon,area_km2\ng1,gauge,45.0,7.0,100\n")
    (tmp_path / "q.csv").write_text("date,q\n" + "".join(f"{stamp},{k + 1.5}\n" for k, stamp in enumerate(stamps)))
    config = {"stations": {"path": str(tmp_path / "stations.csv")},
              "sources": [{"path": str(tmp_path / "q.csv"), "format": "csv", "station": "g1", "frequency": "1D",
                           "timestamp": "interval_start", "variables": {"streamflow": {"source": "q", "units": "m3/s"}},
                           **source}],
              "grid": {"start": "2014-04-01", "end": "2014-04-10"}}
    path = tmp_path / "ingest.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


DAY_FIRST = [f"{day:02d}/04/2014" for day in range(1, 11)]


def test_an_input_file_in_day_month_order_needs_a_time_format(tmp_path: Path) -> None:
    status, out, err = _run("ingest", "--config", _ingest_config(tmp_path, DAY_FIRST), "--out", tmp_path / "o.nc")
    assert status == ExitCode.INPUT_DATA
    assert err.splitlines() == [
        f"hydroseq ingest: error: {tmp_path / 'q.csv'} (line 2): timestamp '01/04/2014' has an ambiguous day/month "
        "order (2014-04-01 if day first, 2014-01-04 if month first): set the source's time_format (e.g. %d/%m/%Y "
        "for day first, %m/%d/%Y for month first)"]
    assert not (tmp_path / "o.nc").exists()


def test_the_first_stamp_decides_even_when_it_reads_one_way_only(tmp_path: Path) -> None:
    stamps = ["13/04/2014", *DAY_FIRST]  # pandas would take day first from this row; a file starting 03/04 not
    status, _, err = _run("ingest", "--config", _ingest_config(tmp_path, stamps), "--out", tmp_path / "o.nc")
    assert status == ExitCode.INPUT_DATA
    assert "timestamp '13/04/2014' has the day and the month before the year, in an order nothing states" in err


def test_a_time_format_reads_them(tmp_path: Path) -> None:
    config = _ingest_config(tmp_path, DAY_FIRST, time_format="%d/%m/%Y")
    status, out, err = _run("--json", "-q", "ingest", "--config", config, "--out", tmp_path / "o.nc")
    assert (status, err) == (0, "")
    with xr.open_dataset(tmp_path / "o.nc") as dataset:  # day D (local UTC day) ends at D+1 00:00
        labels = pd.DatetimeIndex(dataset["time"].values)
        values = dataset["streamflow"].sel(station="g1").values
    assert labels[0] == pd.Timestamp("2014-04-02") and values[0] == 1.5 and values[-1] == 10.5


def test_iso_stamps_need_no_format(tmp_path: Path) -> None:
    stamps = [f"2014-04-{day:02d}" for day in range(1, 11)]
    status, _, err = _run("-q", "ingest", "--config", _ingest_config(tmp_path, stamps), "--out", tmp_path / "o.nc")
    assert (status, err) == (0, "")


@pytest.mark.parametrize("key, value", [(("grid", "start"), "03/04/2014"), (("sources", 0, "time_start"),
                                                                           "03/04/2014 00:00")])
def test_a_config_date_in_day_month_order(tmp_path: Path, key: tuple, value: str) -> None:
    path = _ingest_config(tmp_path, DAY_FIRST)
    config = yaml.safe_load(path.read_text())
    section = config
    for part in key[:-1]:
        section = section[part]
    section[key[-1]] = value
    if key[-1] == "time_start":
        section.pop("time_column", None)
    path.write_text(yaml.safe_dump(config))
    status, _, err = _run("ingest", "--config", path, "--out", tmp_path / "o.nc")
    assert status == ExitCode.CONFIG
    dotted = ".".join(map(str, key))
    assert err.splitlines() == [
        f"hydroseq ingest: error: {path}: invalid configuration: {dotted}: got {value!r}: the date has an ambiguous "
        "day/month order (2014-04-03 if day first, 2014-03-04 if month first); write dates as YYYY-MM-DD"]


def test_a_train_config_period_in_day_month_order(tmp_path: Path) -> None:
    splits = {"train": {"start": "2012-01-01", "end": "2012-12-31"},
              "validation": {"start": "01/02/2013", "end": "2013-03-31"},
              "test": {"start": "2013-04-01", "end": "2013-12-31"}}
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump({"data": {"dynamic_inputs": ["p"], "splits": splits}}))
    status, _, err = _run("stats", "--config", path)
    assert status == ExitCode.CONFIG and len(err.splitlines()) == 1
    assert "data.splits.validation.start: got '01/02/2013': the date has an ambiguous day/month order" in err


def test_an_issue_time_in_day_month_order(exported: Path, ingested: Path) -> None:
    status, _, err = _run("forecast", "--model", exported, "--data", ingested, "--issue-time", "03/04/2014")
    assert status == ExitCode.CONFIG
    assert err.splitlines() == [
        "hydroseq forecast: error: --issue-time: '03/04/2014' has an ambiguous day/month order (2014-04-03 if day "
        "first, 2014-03-04 if month first); write it as YYYY-MM-DD (examples: 2014-09-30, 2014-09-30T06:00Z, "
        "2014-09-30T06:00+02:00, 2014-09-01..2014-09-30)"]


@pytest.mark.parametrize("text", ["3/4/2014", "03.04.2014", "03-04-14", "2014-09-01..03/04/2015", "Sep 30 2014",
                                  "20140930", "now"])
def test_issue_times_other_than_iso_8601_are_errors(text: str) -> None:
    with pytest.raises(ConfigError, match="--issue-time: '"):
        parse_issue_times(text, GridSpec("1D", "UTC"))


@pytest.mark.parametrize("text, problem", [
    ("2014-03-04", None), ("2014/03/04", None), ("1/2/2014 10:00", "(2014-02-01 if day first, 2014-01-02 if month"),
    ("04/04/2014", "in an order nothing states"), ("31.12.99", "in an order nothing states"),
    ("12/31/2014", "in an order nothing states"), ("123/4/2014", None)])
def test_day_month_order_problem(text: str, problem: str | None) -> None:
    found = day_month_order_problem(text)
    assert found is None if problem is None else problem in found
