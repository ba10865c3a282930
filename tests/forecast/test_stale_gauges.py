"""``hydroseq forecast --max-observation-age``: stations forecast from a stale gauge count toward the skipped share.

The tiny exported model (which does not read the discharge) on the real ingested data; the copy's
gauges stop reporting at different times before the issue step. Staleness is the data file's, not
the model's window: a gauge silent for longer than the window is found all the same.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from hydroseq.cli import main
from hydroseq.errors import ExitCode

ISSUE = "2014-06-30"  # its grid label is 2014-07-01T08:00Z
ISSUE_LABEL = "2014-07-01T08:00"
SILENT_STEPS = {"01022500": 3, "02064000": 100, "03015500": 1}  # steps without discharge up to the issue step
UNGAUGED = "01547700"  # no discharge in the file at all: not a stale gauge


@pytest.fixture(scope="module")
def silent_gauges(ingested: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    with xr.open_dataset(ingested) as dataset:
        copy = dataset.load()
    end = int(np.flatnonzero(copy["time"].values == np.datetime64(ISSUE_LABEL, "ns"))[0])
    for station, steps in SILENT_STEPS.items():
        copy["streamflow"].loc[{"station": station, "time": copy["time"][end - steps + 1:end + 1]}] = np.nan
    copy["streamflow"].loc[{"station": UNGAUGED}] = np.nan
    path = tmp_path_factory.mktemp("stale") / "silent.nc"
    copy.to_netcdf(path)
    return path


def _forecast(exported: Path, data: Path, out: Path, *options: str) -> int:
    return main(["--json", "-q", "forecast", "--model", str(exported), "--data", str(data), "--issue-time", ISSUE,
                 "--out", str(out), *options])


def test_stale_gauges_are_forecast_flagged_and_counted(exported: Path, silent_gauges: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "f.nc"
    assert _forecast(exported, silent_gauges, out, "--max-observation-age", "48",
                     "--max-skipped-share", "0.05") == ExitCode.PARTIAL
    summary = json.loads(capsys.readouterr().out)
    assert summary["stations"] == {"total": 31, "forecast": 31, "skipped": 0, "stale": 2}
    assert summary["max_observation_age_hours"] == 48
    assert summary["stale"] == {
        "01022500": "newest observed streamflow 72 h before the issue time, more than the 48 h allowed",
        "02064000": "newest observed streamflow 2400 h before the issue time, more than the 48 h allowed"}
    rows = pd.read_csv(out.with_suffix(".csv"), dtype={"station": str})
    assert len(rows) == 31 and set(rows.loc[rows["stale_gauge"] == 1, "station"]) == {"01022500", "02064000"}
    with xr.open_dataset(out) as forecast:
        assert sorted(json.loads(forecast.attrs["stale_stations"])) == ["01022500", "02064000"]
        assert forecast.attrs["max_observation_age_hours"] == 48
        assert np.isfinite(forecast["streamflow"].sel(station="02064000")).all()  # stale, still forecast

    # the same share allows one station more than two: within it, the run is OK; the files are the same
    assert _forecast(exported, silent_gauges, out, "--max-observation-age", "48",
                     "--max-skipped-share", "0.1") == ExitCode.OK
    capsys.readouterr()
    assert _forecast(exported, silent_gauges, out, "--max-observation-age", "2400",
                     "--max-skipped-share", "0") == ExitCode.OK  # 2400 h old is not more than 2400 h
    assert json.loads(capsys.readouterr().out)["stale"] == {}


def test_without_the_option_nothing_is_counted_or_flagged(exported: Path, silent_gauges: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "f.nc"
    assert _forecast(exported, silent_gauges, out, "--max-skipped-share", "0") == ExitCode.OK
    summary = json.loads(capsys.readouterr().out)
    assert summary["stale"] == {} and summary["max_observation_age_hours"] is None
    assert "stale_gauge" not in out.with_suffix(".csv").read_text().splitlines()[0]
    with xr.open_dataset(out) as forecast:
        assert "stale_stations" not in forecast.attrs


def test_the_option_is_for_one_issue_time_and_hours(exported: Path, silent_gauges: Path, tmp_path: Path) -> None:
    out = tmp_path / "f.nc"
    assert main(["forecast", "--model", str(exported), "--data", str(silent_gauges), "--issue-time",
                 "2014-06-01..2014-06-30", "--out", str(out), "--max-observation-age", "48"]) == ExitCode.CONFIG
    with pytest.raises(SystemExit) as usage:
        _forecast(exported, silent_gauges, out, "--max-observation-age", "-1")
    assert usage.value.code == ExitCode.USAGE
