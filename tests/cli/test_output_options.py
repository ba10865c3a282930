"""``-q``, ``-v``, ``--log-file`` and ``--json`` on real commands.

A small chain is run in-process once for this module (3 Caravan basins ingested for 2012-2013, a
hidden-8 LSTM trained for 2 batches, evaluated, exported, its length statistics), every command with
``-q --json``: stdout must be exactly one JSON summary and stderr empty. The forecasts use the shared
tiny model (``exported``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from hydroseq.cli import main
from hydroseq.config import TrainConfig, dump_config, validate_config
from hydroseq.errors import ExitCode
from hydroseq.fileio import sha256_file
from tests.fixtures import caravan_ingest_config, store_uri

REPO_ROOT = Path(__file__).resolve().parents[2]
STATIONS = ["01022500", "02064000", "03015500"]
ISSUE = "2014-06-30"
LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ (DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.]+: ")


@dataclass(frozen=True)
class Finished:
    """A command's exit status and what it printed."""

    status: int
    out: str
    err: str

    @property
    def summary(self) -> dict:
        lines = self.out.splitlines()
        assert len(lines) == 1, self.out
        return json.loads(lines[0])


def _run(*args: str | Path) -> Finished:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(arg) for arg in args])
    return Finished(status, out.getvalue(), err.getvalue())


def _configs(work: Path) -> tuple[Path, Path]:
    ingest = caravan_ingest_config(dt.date(2012, 1, 1), dt.date(2013, 12, 31), STATIONS)
    train = validate_config({
        "data": {"path": str(work / "caravan.nc"), "dynamic_inputs": ["total_precipitation_sum", "temperature_2m_mean"],
                 "static_inputs": ["p_mean"], "seq_len": 30, "min_len": 5, "cache_dir": str(work / "cache"),
                 "splits": {"train": {"start": "2012-01-01", "end": "2012-12-31"},
                            "validation": {"start": "2013-01-01", "end": "2013-03-31"},
                            "test": {"start": "2013-04-01", "end": "2013-12-31"}}},
        "model": {"hidden_size": 8},
        "training": {"epochs": 1, "max_batches_per_epoch": 2, "threads": 1, "output_dir": str(work / "train")},
        "tracking": {"tracking_uri": store_uri(work), "artifact_root": str(work / "artifacts")},
    }, TrainConfig)
    (work / "ingest.yaml").write_text(dump_config(ingest))
    (work / "train.yaml").write_text(dump_config(train))
    return work / "ingest.yaml", work / "train.yaml"


@pytest.fixture(scope="module")
def commands(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Finished]:
    """Every command of the chain, run with ``-q --json`` (``train`` with the options after the command)."""
    work = tmp_path_factory.mktemp("cli_output")
    ingest_config, train_config = _configs(work)
    finished = {"ingest": _run("-q", "--json", "ingest", "--config", ingest_config, "--out", work / "caravan.nc")}
    finished["stats"] = _run("-q", "--json", "stats", "--config", train_config, "--out", work / "stats")
    finished["train"] = _run("train", "--config", train_config, "-q", "--json")
    run_id = finished["train"].summary["run_id"]
    uri = f"sqlite:///{work / 'mlruns.db'}"
    finished["evaluate"] = _run("-q", "--json", "evaluate", "--run", run_id, "--tracking-uri", uri)
    finished["export"] = _run("-q", "--json", "export", "--run", run_id, "--seq-len", "30", "--out", work / "model",
                              "--tracking-uri", uri)
    return finished


@pytest.mark.parametrize("command", ["ingest", "stats", "train", "evaluate", "export"])
def test_quiet_json_prints_the_summary_alone(commands: dict[str, Finished], command: str) -> None:
    finished = commands[command]
    assert finished.status == 0, finished.err
    assert finished.err == ""
    summary = finished.summary
    assert (summary["command"], summary["exit_code"], summary["status"]) == (command, 0, "OK")


def test_ingest_summary(commands: dict[str, Finished]) -> None:
    summary = commands["ingest"].summary
    output = Path(summary["output"])
    assert summary["sha256"] == sha256_file(output)
    with xr.open_dataset(output) as dataset:
        assert summary["dataset_checksum"] == dataset.attrs["dataset_checksum"]
        assert summary["time_steps"] == dataset.sizes["time"] == 731
    assert summary["stations"] == STATIONS and summary["dropped"] == {}
    assert all(Path(path).is_file() for path in [*summary["report_files"], summary["manifest"]])


def test_train_and_evaluate_summaries(commands: dict[str, Finished]) -> None:
    train = commands["train"].summary
    assert re.fullmatch(r"[0-9a-f]{32}", train["run_id"])
    assert train["best_epoch"] == 0 and train["epochs_completed"] == 1 and train["stopped_early_after"] is None
    assert train["best_val_median_nse"] == pytest.approx(train["validation"]["validation_model_lead0_median_nse"])
    evaluate = commands["evaluate"].summary
    assert (evaluate["run_id"], evaluate["period"], evaluate["trained_on_this_data"]) == (train["run_id"], "test", True)
    assert {"test_model_lead0_median_nse", "test_persistence_lead0_median_nse"} <= set(evaluate["summary"])
    assert all(Path(path).is_file() for path in evaluate["files"])


def test_export_and_stats_summaries(commands: dict[str, Finished]) -> None:
    export = commands["export"].summary
    assert export["run_id"] == commands["train"].summary["run_id"] and export["seq_len"] == 30
    assert set(export["files"]) >= {"model.onnx"} and export["parity_max_abs_diff"] < 1e-4
    stats = commands["stats"].summary
    assert {"lengths", "padding_train", "histogram"} <= set(stats) and Path(stats["histogram"]).is_file()


def _forecast(exported: Path, ingested: Path, out: Path, *options: str) -> Finished:
    return _run(*options, "forecast", "--model", exported, "--data", ingested, "--issue-time", ISSUE, "--out", out)


def test_quiet_forecast_prints_nothing(exported: Path, ingested: Path, tmp_path: Path) -> None:
    finished = _forecast(exported, ingested, tmp_path / "f.nc", "-q")
    assert (finished.status, finished.out, finished.err) == (0, "", "")
    assert (tmp_path / "f.nc").is_file()
    loud = _forecast(exported, ingested, tmp_path / "g.nc")
    assert "stations forecast" in loud.out and loud.err == ""  # the table is on stdout without -q


def test_forecast_json_has_the_result(exported: Path, ingested: Path, tmp_path: Path, edited_copy,
                                      grid_index) -> None:
    end = grid_index(ingested, "2014-07-01T08:00")

    def gaps(dataset: xr.Dataset) -> None:
        dataset["temperature_2m_mean"].values[list(dataset["station"].values).index("01052500"), end] = np.nan

    data = edited_copy(ingested, tmp_path / "gaps.nc", gaps)
    finished = _run("forecast", "--model", exported, "--data", data, "--issue-time", ISSUE, "--out",
                    tmp_path / "f.nc", "--json", "--max-skipped-share", "0.01")
    assert finished.status == ExitCode.PARTIAL
    summary = finished.summary
    assert (summary["exit_code"], summary["status"]) == (5, "PARTIAL")
    assert summary["issue_times"] == {"first": "2014-07-01T08:00:00Z", "last": "2014-07-01T08:00:00Z", "count": 1}
    assert summary["stations"] == {"total": 31, "forecast": 30, "skipped": 1, "stale": 0}
    assert list(summary["skipped"]) == ["01052500"] and "input" in summary["skipped"]["01052500"]
    assert summary["files"] == [str(tmp_path / name) for name in ("f.nc", "f.csv", "f.manifest.json")]
    assert summary["manifest"] == str(tmp_path / "f.manifest.json") and summary["leads"] == [0]
    assert "stations forecast" in finished.err and "partial result: 1 of 31" in finished.err  # tables on stderr


def test_hindcast_json_has_the_scores(exported: Path, ingested: Path, tmp_path: Path) -> None:
    finished = _run("--json", "-q", "forecast", "--model", exported, "--data", ingested,
                    "--issue-time", "2014-06-01..2014-06-10", "--out", tmp_path / "h.nc")
    summary = finished.summary
    assert summary["issue_times"]["count"] == 10 and finished.err == ""
    assert [row["lead"] for row in summary["hindcast"]] == [0]
    assert set(summary["hindcast"][0]["median_nse"]) == {"model", "persistence", "climatology"}
    assert str(tmp_path / "h_scores.csv") in summary["files"]


def test_verbose_prints_debug_lines(exported: Path, ingested: Path, tmp_path: Path) -> None:
    finished = _forecast(exported, ingested, tmp_path / "f.nc", "-v")
    assert finished.status == 0
    assert re.search(r"^debug hydroseq\.cli: hydroseq \S+, Python \S+: hydroseq -v forecast --model ", finished.err,
                     re.M), finished.err
    assert re.search(r"^debug hydroseq\.cli: hydroseq forecast: exit status 0 after ", finished.err, re.M)
    assert re.search(r"^info hydroseq\.cli: summary: \{", finished.err, re.M)
    assert "debug" not in _forecast(exported, ingested, tmp_path / "g.nc").err


def test_log_file_has_plain_timestamped_lines(exported: Path, ingested: Path, tmp_path: Path) -> None:
    log = tmp_path / "logs" / "hydroseq.log"
    log.parent.mkdir()
    assert _forecast(exported, ingested, tmp_path / "f.nc", "--log-file", str(log)).status == 0
    first = log.read_text()
    assert "DEBUG" not in first and " INFO hydroseq.cli: summary: {" in first
    bad = _run("forecast", "--model", exported, "--data", ingested, "--issue-time", "yesterday", "-v",
               "--log-file", log)
    assert bad.status == ExitCode.CONFIG
    text = log.read_text()
    assert text.startswith(first)  # appended
    lines = text.splitlines()
    assert all(LOG_LINE.match(line) for line in lines), text
    assert "\x1b" not in text and "\r" not in text and "it/s" not in text  # no colours, no progress bars
    assert any(" DEBUG hydroseq.cli: hydroseq " in line for line in lines)
    assert lines[-1].endswith("ERROR hydroseq.cli: hydroseq forecast: error: --issue-time: 'yesterday' is not an "
                              "ISO 8601 date or timestamp (examples: 2014-09-30, 2014-09-30T06:00Z, "
                              "2014-09-30T06:00+02:00, 2014-09-01..2014-09-30)")
    assert json.loads(next(line for line in lines if "summary: " in line).split("summary: ", 1)[1])["exit_code"] == 0


def test_a_traceback_in_the_log_file_is_prefixed_line_by_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hydroseq.cli.training

    def bug(*args, **kwargs):
        raise RuntimeError("a bug\nover two lines")
    monkeypatch.setattr(hydroseq.cli.training, "evaluate", bug)
    log = tmp_path / "h.log"
    finished = _run("evaluate", "--run", "0123abcd", "--log-file", log, "--json")
    assert finished.status == ExitCode.INTERNAL and "Traceback" in finished.err
    lines = log.read_text().splitlines()
    assert len(lines) > 3 and all(LOG_LINE.match(line) for line in lines)
    assert any(line.endswith("ERROR hydroseq.cli: Traceback (most recent call last):") for line in lines)
    assert finished.summary["status"] == "INTERNAL" and finished.summary["error"].startswith("unexpected error")


def test_errors_are_one_json_object_and_still_shown_when_quiet(tmp_path: Path) -> None:
    finished = _run("-q", "--json", "forecast", "--model", tmp_path, "--data", tmp_path / "x.nc", "--issue-time", ISSUE)
    assert finished.status == ExitCode.CONFIG
    summary = finished.summary
    assert (summary["command"], summary["exit_code"], summary["status"]) == ("forecast", 3, "CONFIG")
    assert "not an exported model directory" in summary["error"]
    assert finished.err.count("\n") == 1 and finished.err.startswith("hydroseq forecast: error: ")


def test_an_unwritable_log_file_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    finished = _run("--log-file", tmp_path / "file" / "h.log", "stats", "--config", tmp_path / "c.yaml")
    assert finished.status == ExitCode.CONFIG
    assert finished.err.splitlines() == [f"hydroseq stats: error: --log-file {tmp_path / 'file' / 'h.log'}: cannot be "
                                         "written (Not a directory)"]
