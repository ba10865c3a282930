"""Outputs that cannot be written, and impossible arguments, give one line and exit 3 (``ExitCode.CONFIG``)
from every command.

Each case runs ``hydroseq`` as a real process (``export`` and ``train`` once each; their other cases
call the same ``main`` in the test's process, which saves ten seconds of imports a case): exit status
3, exactly one line on stderr naming the output, no traceback. The data, checkpoint and model are
the session's ingest, tiny training and export (``tests/conftest.py``: ``chain``).
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hydroseq.cli import main
from hydroseq.config import TrainConfig, dump_config, validate_config
from hydroseq.errors import ExitCode
from tests.fixtures import caravan_ingest_config, store_uri

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[2]
STATIONS = ["01022500", "02064000", "03015500"]
DYNAMIC = ["total_precipitation_sum", "temperature_2m_mean", "potential_evaporation_sum"]
ISSUE = "2013-12-01T08:00"
PROGRESS_BAR = re.compile(r"\d+%\|")  # the ingest's tqdm bar shares stderr; it is not a message


def _hydroseq(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hydroseq.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=300)


def _in_process(capsys: pytest.CaptureFixture, *args: str | Path) -> subprocess.CompletedProcess:
    """``hydroseq`` called in this process: a command that imports torch starts in seconds here, not ten."""
    status = main([str(arg) for arg in args])
    captured = capsys.readouterr()
    return subprocess.CompletedProcess(["hydroseq", *map(str, args)], status, captured.out, captured.err)


def _assert_one_line_error(finished: subprocess.CompletedProcess, *names: str | Path) -> None:
    assert finished.returncode == ExitCode.CONFIG, finished.stderr[-3000:]
    assert "Traceback" not in finished.stderr
    lines = [line for line in finished.stderr.strip().splitlines() if not PROGRESS_BAR.search(line)]
    assert len(lines) == 1, finished.stderr
    for name in names:
        assert str(name) in lines[0], lines[0]


def _ingest_config(work: Path) -> Path:
    config = caravan_ingest_config(dt.date(2012, 1, 1), dt.date(2013, 12, 31), STATIONS)
    path = work / "ingest.yaml"
    path.write_text(dump_config(config))
    return path


def _train_config(work: Path, data: Path, output_dir: Path) -> Path:
    config = validate_config({
        "data": {"path": str(data), "dynamic_inputs": DYNAMIC, "static_inputs": ["p_mean", "aridity"],
                 "mode": "per_step", "seq_len": 30, "min_len": 5, "cache_dir": str(work / "cache"),
                 "splits": {"train": {"start": "2012-01-01", "end": "2012-12-31"},
                            "validation": {"start": "2013-01-01", "end": "2013-03-31"},
                            "test": {"start": "2013-04-01", "end": "2013-12-31"}}},
        "model": {"hidden_size": 8},
        "training": {"epochs": 1, "max_batches_per_epoch": 2, "threads": 1, "output_dir": str(output_dir)},
        "tracking": {"tracking_uri": store_uri(work), "artifact_root": str(work / "artifacts")},
    }, TrainConfig)
    path = work / f"train_{output_dir.name}.yaml"
    path.write_text(dump_config(config))
    return path


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory, chain: dict[str, str]) -> dict[str, Path]:
    """An ingest config, the session's ingested data, trained checkpoint and export, and a plain file."""
    work = tmp_path_factory.mktemp("cli_errors")
    (work / "plain.txt").write_text("a file, not a folder")
    store_uri(work)  # its tables made now: MLflow says so on stderr when it makes them
    return {"work": work, "ingest_config": _ingest_config(work), "data": Path(chain["data"]),
            "checkpoint": Path(chain["output_dir"]) / "last.pt", "model": Path(chain["model"]),
            "file": work / "plain.txt"}


def test_ingest_out_that_is_a_folder(made, tmp_path: Path) -> None:
    _assert_one_line_error(_hydroseq("ingest", "--config", made["ingest_config"], "--out", tmp_path),
                           tmp_path, "is a folder")


def test_ingest_out_under_a_file(made) -> None:
    out = made["file"] / "caravan.nc"
    _assert_one_line_error(_hydroseq("ingest", "--config", made["ingest_config"], "--out", out),
                           made["file"], "is a file")


def test_export_out_that_is_a_file(made, capsys) -> None:
    finished = _in_process(capsys, "export", "--run", made["checkpoint"], "--seq-len", "30", "--out", made["file"])
    _assert_one_line_error(finished, made["file"], "not a folder")


def test_export_out_under_a_file(made, capsys) -> None:
    out = made["file"] / "model"
    _assert_one_line_error(_in_process(capsys, "export", "--run", made["checkpoint"], "--seq-len", "30", "--out", out),
                           out, "is a file")


def test_export_seq_len_zero(made, tmp_path: Path, capsys) -> None:
    finished = _in_process(capsys, "export", "--run", made["checkpoint"], "--seq-len", "0", "--out", tmp_path / "m")
    _assert_one_line_error(finished, "seq_len (--seq-len) must be at least 1, got 0")
    assert not (tmp_path / "m").exists()


def test_export_out_that_is_read_only(made, tmp_path: Path) -> None:
    """Root may write in any chmod-read-only folder, so the folder is made immutable (``chattr +i``). The model
    is written beside it and cannot replace it: the folder stays as it was, and no temporary is left."""
    out = tmp_path / "read_only"
    out.mkdir()
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(out)]).returncode != 0:
        pytest.skip("chattr +i is not available on this file system")
    try:
        finished = _hydroseq("export", "--run", made["checkpoint"], "--seq-len", "30", "--out", out)
    finally:
        subprocess.run(["chattr", "-i", str(out)], check=True)
    _assert_one_line_error(finished, out, "cannot be written (Operation not permitted)")
    assert list(out.iterdir()) == [] and [path.name for path in tmp_path.iterdir()] == ["read_only"]


def test_forecast_out_that_is_a_folder(made, tmp_path: Path) -> None:
    finished = _hydroseq("forecast", "--model", made["model"], "--data", made["data"], "--issue-time", ISSUE,
                         "--out", tmp_path)
    _assert_one_line_error(finished, tmp_path, "is a folder")


def test_forecast_out_under_a_file(made) -> None:
    out = made["file"] / "forecast.nc"
    finished = _hydroseq("forecast", "--model", made["model"], "--data", made["data"], "--issue-time", ISSUE,
                         "--out", out)
    _assert_one_line_error(finished, made["file"], "is a file")


def test_train_output_dir_that_is_a_file(made, capsys) -> None:
    config = _train_config(made["work"], made["data"], made["file"])
    _assert_one_line_error(_in_process(capsys, "train", "--config", config), made["file"], "not a folder")


def test_train_checkpoint_path_that_is_a_folder(made, tmp_path: Path) -> None:
    (tmp_path / "out" / "last.pt").mkdir(parents=True)
    config = _train_config(made["work"], made["data"], tmp_path / "out")
    _assert_one_line_error(_hydroseq("train", "--config", config), tmp_path / "out" / "last.pt", "is a folder")
