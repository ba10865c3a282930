"""MLflow's own lines: none on a quiet or plain command, its INFO lines with ``-v``, never a run's link on stdout.

A fresh MLflow store logs "Creating initial MLflow database tables..." at INFO and logging a model
"Validating input example against model signature"; a run that ends on a tracking server prints
"View run ... at: URL" on stdout. ``hydroseq -q train`` runs here as a real process (mlflow is
imported after the command set its logging up) on a store it creates.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mlflow.environment_variables import MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT
from mlflow.tracking import MlflowClient

from hydroseq.cli.output import MLFLOW_LEVEL, MLFLOW_RUN_URL, CommandLogging
from hydroseq.config import TrainConfig, dump_config, validate_config
from tests.conftest import train_config

MLFLOW_INFO = re.compile(r"INFO (mlflow|alembic)")
CHOSEN_HERE = (MLFLOW_LEVEL, MLFLOW_RUN_URL)  # the variables the command sets: the tests start without them


def _args(quiet: bool = False, verbose: bool = False) -> argparse.Namespace:
    return argparse.Namespace(quiet=quiet, verbose=verbose, json=False, log_file=None, command="train")


def _fresh_store_lines(folder: Path, args: argparse.Namespace) -> str:
    """What creating a new store prints while a command with ``args`` runs (mlflow already imported)."""
    command = CommandLogging(args)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        command.start()
        try:
            MlflowClient(f"sqlite:///{folder / 'mlruns.db'}").search_experiments()
            logging.getLogger("mlflow.pyfunc").info("Validating input example against model signature")
        finally:
            command.stop()
    return err.getvalue()


def test_mlflow_info_lines_only_with_verbose(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in CHOSEN_HERE:
        monkeypatch.delenv(name, raising=False)
    level = logging.getLogger("mlflow").level
    plain = _fresh_store_lines(tmp_path / "plain", _args())
    assert not MLFLOW_INFO.search(plain), plain
    verbose = _fresh_store_lines(tmp_path / "verbose", _args(verbose=True))  # control: the lines are there
    assert "INFO mlflow.store.db.utils: Creating initial MLflow database tables" in verbose
    assert "INFO mlflow.pyfunc: Validating input example" in verbose
    assert logging.getLogger("mlflow").level == level and not set(CHOSEN_HERE) & set(os.environ)


def test_a_level_the_user_chose_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MLFLOW_LEVEL, "DEBUG")
    command = CommandLogging(_args())
    command.start()
    try:
        assert os.environ[MLFLOW_LEVEL] == "DEBUG" and MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT.get() is True
    finally:
        command.stop()


def test_quiet_train_prints_nothing_of_mlflow(ingested: Path, tmp_path: Path) -> None:
    dump = train_config(ingested, tmp_path).model_dump(mode="json")
    dump["training"]["max_batches_per_epoch"] = 2
    dump["tracking"]["tracking_uri"] = f"sqlite:///{tmp_path / 'new' / 'mlruns.db'}"  # made by the command
    (tmp_path / "new").mkdir()
    config = validate_config(dump, TrainConfig)
    (tmp_path / "train.yaml").write_text(dump_config(config))
    environment = {name: value for name, value in os.environ.items() if name not in CHOSEN_HERE}
    finished = subprocess.run([sys.executable, "-m", "hydroseq.cli", "-q", "train", "--config",
                               str(tmp_path / "train.yaml")], capture_output=True, text=True, timeout=300,
                              cwd=tmp_path, env=environment)
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert not MLFLOW_INFO.search(finished.stdout + finished.stderr) and "View run" not in finished.stdout
    assert (finished.stdout, finished.stderr) == ("", "")
    client = MlflowClient(config.tracking.tracking_uri)
    (run,) = client.search_runs([client.get_experiment_by_name(config.tracking.experiment).experiment_id])
    assert "validation_model_lead0_median_nse" in run.data.metrics
