"""One MLflow SQLite store shared by jobs started together, and a store another process holds locked."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from hydroseq.config import dump_config
from hydroseq.errors import ConfigError, ExitCode
from tests.fixtures import store_uri

pytestmark = pytest.mark.slow

HYDROSEQ = [sys.executable, "-m", "hydroseq.cli"]


def _config_file(work: Path, small_nc: Path, make_config, store: Path, **tracking) -> Path:
    config = make_config(work, small_nc, epochs=1, max_batches_per_epoch=2)
    config.tracking = config.tracking.model_copy(update={"tracking_uri": f"sqlite:///{store}", **tracking})
    path = work / "train.yaml"
    work.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_config(config))
    return path


def test_three_jobs_started_together_on_a_fresh_store_all_finish(tmp_path: Path, small_nc: Path, make_config) -> None:
    store = tmp_path / "shared" / "mlruns.db"
    configs = [_config_file(tmp_path / f"job{i}", small_nc, make_config, store) for i in range(3)]
    jobs = [subprocess.Popen([*HYDROSEQ, "train", "--config", str(path)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True) for path in configs]
    errors = [job.communicate(timeout=300)[1] for job in jobs]
    assert [job.returncode for job in jobs] == [0, 0, 0], "\n".join(error[-2000:] for error in errors)
    client = MlflowClient(f"sqlite:///{store}")
    (experiment,) = [e for e in client.search_experiments() if e.name == "tests"]
    runs = client.search_runs([experiment.experiment_id])
    assert len(runs) == 3 and all(run.info.status == "FINISHED" for run in runs)


def test_a_store_held_locked_is_one_line_and_exit_unavailable_after_bounded_retries(tmp_path: Path, small_nc: Path,
                                                                          make_config) -> None:
    store = tmp_path / "mlruns.db"
    store_uri(tmp_path)  # an initialised store
    path = _config_file(tmp_path / "job", small_nc, make_config, store, store_lock_retries=1,
                        store_lock_backoff_s=0.1)
    holder = sqlite3.connect(store, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        finished = subprocess.run([*HYDROSEQ, "train", "--config", str(path)], capture_output=True, text=True,
                                  timeout=120)
    finally:
        holder.close()
    assert finished.returncode == ExitCode.UNAVAILABLE, finished.stderr[-3000:]
    assert "Traceback" not in finished.stderr
    lines = finished.stderr.strip().splitlines()
    assert len(lines) == 1, finished.stderr
    assert re.fullmatch(f"hydroseq train: error: MLflow store sqlite:///{re.escape(str(store))} is locked by "
                        r"another process: gave up after 2 tries in \d+ s", lines[0]), lines[0]


@pytest.mark.parametrize("setting", ["--tracking-uri", "MLFLOW_TRACKING_URI", "tracking.tracking_uri"])
def test_a_file_store_is_a_config_error_naming_the_setting(setting: str, tmp_path: Path, small_nc: Path, make_config,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture) -> None:
    """MLflow refuses a file store unless ``MLFLOW_ALLOW_FILE_STORE=true``: ``train`` says so before it starts,
    naming where the store came from and the two ways on, instead of MLflow's traceback (exit 70)."""
    from hydroseq.cli import main

    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    file_store = f"file://{tmp_path / 'mlruns'}"
    config = _config_file(tmp_path, small_nc, make_config, tmp_path / "unused.db")
    args = ["train", "--config", str(config)]
    if setting == "--tracking-uri":
        args += ["--tracking-uri", file_store]
    elif setting == "MLFLOW_TRACKING_URI":
        monkeypatch.setenv("MLFLOW_TRACKING_URI", file_store)
    else:
        config.write_text(config.read_text().replace(f"sqlite:///{tmp_path / 'unused.db'}", file_store))
    assert main(args) == ExitCode.CONFIG
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"hydroseq train: error: {setting} {file_store} is an MLflow file store"), line
    assert "sqlite:///mlruns.db" in line and "set MLFLOW_ALLOW_FILE_STORE=true to keep the file store" in line
    assert not (tmp_path / "out").exists() and not (tmp_path / "mlruns").exists()  # nothing trained, no store made


def test_a_file_store_mlflow_is_told_to_allow_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    from hydroseq.config import TrackingConfig
    from hydroseq.config.stores import resolve_tracking_uri

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    assert resolve_tracking_uri(TrackingConfig(), "file:///srv/mlruns") == "file:///srv/mlruns"
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "false")
    with pytest.raises(ConfigError, match="MLFLOW_ALLOW_FILE_STORE=true"):
        resolve_tracking_uri(TrackingConfig(), "mlruns")  # a plain path is a file store too
