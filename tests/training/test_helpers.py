"""Checkpoint files, tracking-URI precedence, LR schedule and early stopping."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from hydroseq.config import TrackingConfig, TrainingConfig
from hydroseq.config.stores import resolve_tracking_uri
from hydroseq.dataset import Scalers
from hydroseq.errors import InputDataError
from hydroseq.training.checkpoint import Checkpoint
from hydroseq.training.runtime import EarlyStopping, lr_factor, resolve_lstm_path
from hydroseq.training.tracking import flatten_params, use_tracking_uri


def test_checkpoint_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(InputDataError, match="nope.pt: checkpoint not found"):
        Checkpoint.load(tmp_path / "nope.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(InputDataError, match="junk.pt: not a readable checkpoint"):
        Checkpoint.load(tmp_path / "junk.pt")
    torch.save({"model_state": {}}, tmp_path / "foreign.pt")
    with pytest.raises(InputDataError, match="missing format_version"):
        Checkpoint.load(tmp_path / "foreign.pt")


def test_checkpoint_write_is_atomic_and_loads_with_weights_only(tmp_path: Path, make_config) -> None:
    no_scaling = Scalers([], np.zeros(0), np.ones(0), [], np.zeros(0), np.ones(0), "streamflow", 0.0, 1.0)
    state = Checkpoint({"w": torch.arange(3.0)}, make_config(tmp_path / "run", tmp_path / "data.nc"), ["p", "t"], 1,
                       no_scaling, "run")
    out = tmp_path / "out"
    out.mkdir()
    state.save(out / "c.pt")
    assert [p.name for p in out.iterdir()] == ["c.pt"]
    assert torch.equal(Checkpoint.load(out / "c.pt").model_state["w"], torch.arange(3.0))


def test_tracking_uri_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    config = TrackingConfig(tracking_uri="sqlite:///from_config.db")
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert resolve_tracking_uri(config) == "sqlite:///from_config.db"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://server:5000")
    assert resolve_tracking_uri(config) == "http://server:5000"
    assert resolve_tracking_uri(config, "sqlite:///flag.db") == "sqlite:///flag.db"


def test_use_tracking_uri_leaves_no_environment_behind(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    with use_tracking_uri(f"sqlite:///{tmp_path / 'a.db'}"):
        pass
    assert "MLFLOW_TRACKING_URI" not in __import__("os").environ


def test_flatten_params_uses_dotted_keys() -> None:
    assert flatten_params({"a": {"b": 1, "c": {"d": [1, 2]}}, "e": None}) == {"a.b": "1", "a.c.d": "[1, 2]",
                                                                               "e": "None"}


def test_lr_schedules_and_lstm_path() -> None:
    cosine = lr_factor(TrainingConfig(epochs=4, lr_schedule="cosine"))
    assert cosine(0) == pytest.approx(1.0) and cosine(4) == pytest.approx(0.01) and cosine(2) == pytest.approx(0.505)
    step = lr_factor(TrainingConfig(epochs=4, lr_schedule="step"))
    assert [step(e) for e in range(4)] == [1.0, 1.0, 0.1, 0.01]
    assert resolve_lstm_path(TrainingConfig(), torch.device("cpu")) == "padded"
    assert resolve_lstm_path(TrainingConfig(), torch.device("cuda")) == "packed"
    assert resolve_lstm_path(TrainingConfig(lstm_path="packed"), torch.device("cpu")) == "packed"


def test_early_stopping_counts_epochs_without_improvement() -> None:
    stopper = EarlyStopping(patience=2)
    assert stopper.update(0.5, 0) and not stopper.update(0.4, 1) and not stopper.should_stop
    assert not stopper.update(math.nan, 2) and stopper.should_stop
    assert stopper.best_epoch == 0 and stopper.best_nse == 0.5
