"""Every status of the exit-code table (``hydroseq.errors.ExitCode``, "Exit status" of the README and
docs/forecast.md) from a real command.

Usage runs ``hydroseq`` as a process (argparse exits by itself); the others call
``hydroseq.cli.main``. Partial result, success and nothing produced forecast with the shared tiny
model (``exported``); interrupted and terminated send the process a real SIGINT / SIGTERM from
inside a command; an unavailable store, no space and an unexpected error are raised inside a patched
command.
"""

from __future__ import annotations

import errno
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sqlalchemy.exc
import xarray as xr
from rich.console import Console

import hydroseq.cli.training
from hydroseq.cli import main
from hydroseq.cli.forecast import late_gauges, print_summary
from hydroseq.errors import ExitCode, ProcessFailedError
from hydroseq.forecast import ForecastResult

REPO_ROOT = Path(__file__).resolve().parents[2]
ISSUE = "2014-06-30"
ISSUE_LABEL = "2014-07-01T08:00"


@pytest.mark.parametrize("page", ["README.md", "docs/forecast.md"])
def test_the_exit_status_tables_are_the_enum(page: str) -> None:
    """The README's table and the full one of docs/forecast.md list every status, under its name."""
    section = (REPO_ROOT / page).read_text().split("## Exit status", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+) \| `(\w+)` \|", section, re.M)
    assert {int(code): name for code, name in rows} == {code.value: code.name for code in ExitCode}


def test_usage_error_is_argparse_2() -> None:
    for args in (["forecast", "--model", "m"], ["forecast", "--model", "m", "--data", "d", "--issue-time", "T",
                                                "--max-skipped-share", "1.5"]):
        finished = subprocess.run([sys.executable, "-m", "hydroseq.cli", *args], capture_output=True, text=True,
                                  timeout=120)
        assert finished.returncode == ExitCode.USAGE == 2, finished.stderr
        assert "usage: hydroseq forecast" in finished.stderr


def test_config_error(tmp_path: Path) -> None:
    assert main(["train", "--config", str(tmp_path / "missing.yaml")]) == ExitCode.CONFIG


def test_input_data_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "metadata.json").write_text("{ cut short")  # a model directory damaged since its export
    status = main(["forecast", "--model", str(tmp_path), "--data", str(tmp_path / "x.nc"), "--issue-time", ISSUE])
    assert status == ExitCode.INPUT_DATA
    assert "metadata.json: unreadable model metadata" in capsys.readouterr().err


def test_a_model_path_that_names_no_model_is_a_setup_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A model directory that is not there, or a folder that holds no exported model: 3, one line naming it."""
    forecast = ["forecast", "--data", str(tmp_path / "x.nc"), "--issue-time", ISSUE]
    assert main([*forecast, "--model", str(tmp_path / "absent")]) == ExitCode.CONFIG
    assert capsys.readouterr().err.strip() == (f"hydroseq forecast: error: {tmp_path / 'absent'}: no such model "
                                               "directory (an exported model's folder, made by hydroseq export)")
    assert main([*forecast, "--model", str(tmp_path)]) == ExitCode.CONFIG
    assert "metadata.json: not an exported model directory (metadata.json missing)" in capsys.readouterr().err


def _two_stations_without_input(ingested: Path, target: Path, edited_copy, grid_index) -> Path:
    end = grid_index(ingested, ISSUE_LABEL)

    def gaps(dataset: xr.Dataset) -> None:
        stations = list(dataset["station"].values)
        for station in ("01052500", "02011460"):
            dataset["temperature_2m_mean"].values[stations.index(station), end] = np.nan

    return edited_copy(ingested, target, gaps)


def test_partial_result_writes_what_was_forecast(exported, ingested, tmp_path, edited_copy, grid_index,
                                                 capsys) -> None:
    data = _two_stations_without_input(ingested, tmp_path / "gaps.nc", edited_copy, grid_index)
    forecast = ["forecast", "--model", str(exported), "--data", str(data), "--issue-time", ISSUE]
    assert main([*forecast, "--out", str(tmp_path / "default.nc")]) == ExitCode.OK  # default: never partial
    assert main([*forecast, "--out", str(tmp_path / "loose.nc"), "--max-skipped-share", "0.1"]) == ExitCode.OK
    capsys.readouterr()
    out = tmp_path / "strict.nc"
    assert main([*forecast, "--out", str(out), "--max-skipped-share", "0.05"]) == ExitCode.PARTIAL
    assert "partial result: 2 of 31 stations not forecast (6%), more than --max-skipped-share 0.05" in \
        capsys.readouterr().err
    assert out.read_bytes() == (tmp_path / "default.nc").read_bytes()
    assert len(out.with_suffix(".csv").read_text().splitlines()) == 1 + 29


def test_nothing_produced(exported, ingested, tmp_path, edited_copy, grid_index) -> None:
    end = grid_index(ingested, ISSUE_LABEL)

    def blank(dataset: xr.Dataset) -> None:
        dataset["potential_evaporation_sum"].values[:, end] = np.nan

    data = edited_copy(ingested, tmp_path / "blank.nc", blank)
    assert main(["forecast", "--model", str(exported), "--data", str(data), "--issue-time", ISSUE,
                 "--out", str(tmp_path / "f.nc"), "--max-skipped-share", "0.5"]) == ExitCode.NOTHING_PRODUCED
    assert not (tmp_path / "f.nc").exists()


def _evaluate_that(monkeypatch: pytest.MonkeyPatch, action) -> int:
    def evaluate(*args, **kwargs):
        action()
    monkeypatch.setattr(hydroseq.cli.training, "evaluate", evaluate)
    return main(["evaluate", "--run", "0123abcd"])


def test_store_locked_is_unavailable(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    def locked() -> None:
        raise sqlalchemy.exc.OperationalError("SELECT 1", {}, Exception("database is locked"))
    assert _evaluate_that(monkeypatch, locked) == ExitCode.UNAVAILABLE
    assert "the MLflow store is locked by another process" in capsys.readouterr().err


def test_no_space_wrapped_by_a_library_is_no_space(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture) -> None:
    """A write outside hydroseq's file helpers (an MLflow artifact, say) that ran out of space, its ``OSError``
    wrapped in another exception: one line naming the file, 7. ``tests/cli/test_no_space.py`` fills real disks."""
    def full() -> None:
        try:
            raise OSError(errno.ENOSPC, "No space left on device", "/srv/mlartifacts/1/metrics.csv")
        except OSError as error:
            raise RuntimeError("could not log the artifact") from error
    assert _evaluate_that(monkeypatch, full) == ExitCode.NO_SPACE == 7
    error = capsys.readouterr().err
    assert error.strip() == ("hydroseq evaluate: error: /srv/mlartifacts/1/metrics.csv: cannot be written: "
                             "no space left on device")


def test_unexpected_error_is_internal_with_its_traceback(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture) -> None:
    def bug() -> None:
        raise RuntimeError("a bug")
    assert _evaluate_that(monkeypatch, bug) == ExitCode.INTERNAL
    error = capsys.readouterr().err
    assert "Traceback" in error and "RuntimeError: a bug" in error and "unexpected error" in error


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, ExitCode.INTERRUPTED), (signal.SIGTERM, ExitCode.TERMINATED)])
def test_a_signal_inside_a_command(signum: int, code: ExitCode, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture) -> None:
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # a test runner's worker may ignore it
    try:
        assert _evaluate_that(monkeypatch, lambda: os.kill(os.getpid(), signum)) == code == 128 + signum
    finally:
        signal.signal(signal.SIGINT, previous)
    assert f"interrupted ({signal.Signals(signum).name})" in capsys.readouterr().err


def test_a_reader_that_stops_reading_is_not_a_crash() -> None:
    """``hydroseq config --schema train | head -1``: 141 as a shell reports SIGPIPE, no traceback.

    The pipe's read end is closed before the command writes, so the first write fails (a reader
    that stopped early, without the race of a pipe buffer that could hold the whole output)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        finished = subprocess.run([sys.executable, "-m", "hydroseq.cli", "config", "--schema", "train"],
                                  stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert finished.returncode == ExitCode.OUTPUT_CLOSED == 141, finished.stderr
    assert "Traceback" not in finished.stderr


def test_the_summary_names_late_gauges() -> None:
    result = ForecastResult(
        issue_times=np.array([ISSUE_LABEL], dtype="datetime64[ns]"), stations=("a", "b", "c", "d"),
        leads=np.array([1]), step=pd.Timedelta("1D"), values=np.array([[[1.0], [2.0], [3.0], [np.nan]]], "f4"),
        variable="streamflow", units="mm", skipped={"d": "no valid input at the issue step"},
        observation_age_hours=np.array([[0.0, 48.0, np.nan, np.nan]], "f4"))
    assert late_gauges(result) == {"b": "newest observation 48 h before the issue time",
                                   "c": "no observation in the model's input window"}
    console = Console(record=True, width=200)
    print_summary(result, 3, [], console)
    text = console.export_text()
    assert "2 stations forecast without their newest observation" in text
    assert "observed at the issue step: 1 of 3 stations forecast" in text


def test_a_failed_training_process_passes_on_the_error_it_reported() -> None:
    assert ProcessFailedError("rank 1 exit code 4", 4).exit_code == ExitCode.INPUT_DATA
    assert ProcessFailedError("rank 0 exit code 6", 6).exit_code == ExitCode.UNAVAILABLE
    assert ProcessFailedError("rank 0 exit code 1", 1).exit_code == ExitCode.INTERNAL  # died before main
    assert ProcessFailedError("rank 0 exit code -9", -9).exit_code == ExitCode.INTERNAL
