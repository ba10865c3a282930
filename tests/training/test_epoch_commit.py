"""A kill at any write of an epoch's commit, then ``--resume``: the same checkpoints and MLflow history.

Each case runs ``hydroseq train`` in a real process (``commit_killer.py``) that SIGKILLs itself
right after its k-th commit write (``last.pt``, ``best.pt``, an MLflow metrics batch), resumes it
with ``hydroseq train --resume``, and compares with one uninterrupted run: ``best.pt`` and
``last.pt`` (weights, epoch, early stopping, history) and every metric's MLflow history.
The kill points are every write of the first epoch's commit, the second epoch's ``last.pt`` (a
``best.pt`` of an earlier epoch on disk, the one state the first epoch cannot produce) and every write
after the last epoch's. The second epoch's other writes are the first epoch's, in the same order (the
uninterrupted run checks that), so killing at them would repeat those cases at a minute each.
"""

from __future__ import annotations

import math
import shutil
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from mlflow.tracking import MlflowClient

from hydroseq.config import dump_config
from hydroseq.errors import InputDataError
from hydroseq.training.checkpoint import Checkpoint, repair_best_checkpoint

pytestmark = pytest.mark.slow

KILLER = Path(__file__).with_name("commit_killer.py")
EPOCHS = 2
# Per epoch last.pt, best.pt (every epoch improves here) and its metrics; then the validation summary
# and the metrics that log_model links to the logged model.
WRITES = 3 * EPOCHS + 2
# Metrics that depend on the machine's speed: their steps are compared, not their values.
TIMINGS = {"epoch_seconds", "val_seconds", "valid_timesteps_per_s", "samples_per_s", "peak_memory_mb"}


def _train(work: Path, kill_after: int = 0, resume: bool = False) -> subprocess.CompletedProcess:
    command = [sys.executable, str(KILLER), str(kill_after), str(work / "writes.txt"),
               "--config", str(work / "train.yaml"), *(["--resume"] if resume else [])]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=work)


def _prepared(work: Path, small_nc: Path, make_config) -> Path:
    work.mkdir(parents=True)
    config = make_config(work, small_nc, epochs=EPOCHS, max_batches_per_epoch=3)
    (work / "train.yaml").write_text(dump_config(config))
    return work


def _metric_histories(work: Path) -> dict[str, list[tuple[int, float]]]:
    client = MlflowClient(f"sqlite:///{work / 'mlruns.db'}")
    (run,) = client.search_runs([client.get_experiment_by_name("tests").experiment_id])
    keys = sorted(run.data.metrics)
    return {key: sorted((m.step, m.value) for m in client.get_metric_history(run.info.run_id, key)) for key in keys}


def _same(value: float) -> float | str:
    """A metric value that compares equal to itself when it is NaN."""
    return "nan" if math.isnan(value) else value


def _comparable(state: Checkpoint) -> dict:
    return {"epoch": state.epoch, "early_stopping": state.early_stopping, "run_id": state.run_id,
            "history": [{k: v for k, v in row.items() if k not in TIMINGS} for row in state.history]}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory, small_nc: Path, make_config) -> Path:
    work = _prepared(tmp_path_factory.mktemp("commit") / "straight", small_nc, make_config)
    finished = _train(work)
    assert finished.returncode == 0, finished.stderr[-3000:]
    writes = (work / "writes.txt").read_text().splitlines()
    assert len(writes) == WRITES
    epochs = [writes[3 * epoch:3 * epoch + 3] for epoch in range(EPOCHS)]
    assert all(commit == epochs[0] for commit in epochs), writes  # the first epoch's kill points stand for all
    return work


KILL_POINTS = (1, 2, 3, 4, *range(3 * EPOCHS + 1, WRITES + 1))
# `make test` kills at the first write (last.pt without its best.pt) and at the last (the logged model's
# metrics link); the other points run with `make test-all` (the marker `exhaustive`), a minute each.
IN_EVERY_RUN = (1, WRITES)


@pytest.mark.parametrize("kill_after", [k if k in IN_EVERY_RUN else pytest.param(k, marks=pytest.mark.exhaustive)
                                        for k in KILL_POINTS])
def test_kill_at_any_commit_write_then_resume_ends_like_an_uninterrupted_run(
        kill_after: int, tmp_path: Path, small_nc: Path, make_config, uninterrupted: Path) -> None:
    work = _prepared(tmp_path / "killed", small_nc, make_config)
    killed = _train(work, kill_after)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    resumed = _train(work, resume=True)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    for name in ("last.pt", "best.pt"):
        ours, reference = Checkpoint.load(work / "out" / name), Checkpoint.load(uninterrupted / "out" / name)
        assert _comparable(ours) | {"run_id": None} == _comparable(reference) | {"run_id": None}, name
        for key, value in reference.model_state.items():
            assert torch.equal(ours.model_state[key], value), (name, key)
    ours, reference = _metric_histories(work), _metric_histories(uninterrupted)
    assert ours.keys() == reference.keys()
    for key, history in reference.items():
        if key in TIMINGS:
            assert [step for step, _ in ours[key]] == [step for step, _ in history], key
        else:
            # each step once, with the uninterrupted value (a score with no events is NaN in both)
            assert [(step, _same(value)) for step, value in ours[key]] == \
                [(step, _same(value)) for step, value in history], key
    client = MlflowClient(f"sqlite:///{work / 'mlruns.db'}")
    experiment = client.get_experiment_by_name("tests").experiment_id
    (run,) = client.search_runs([experiment])
    models = client.search_logged_models([experiment], filter_string=f"source_run_id = '{run.info.run_id}'")
    assert [model.name for model in models] == ["model"]
    assert [version.name for version in client.search_model_versions(f"run_id = '{run.info.run_id}'")] == ["tests"]
    assert [a.path for a in client.list_artifacts(run.info.run_id, "checkpoints")] == ["checkpoints/best.pt"]


def test_a_missing_earlier_best_checkpoint_is_an_error_not_a_guess(uninterrupted: Path, tmp_path: Path) -> None:
    """``best.pt`` of an earlier epoch cannot be rebuilt from ``last.pt``: resume says so."""
    state = Checkpoint.load(uninterrupted / "out" / "last.pt")
    state.early_stopping = replace(state.early_stopping, best_epoch=0)
    shutil.copy(uninterrupted / "out" / "last.pt", tmp_path / "last.pt")
    with pytest.raises(InputDataError, match="best.pt: does not hold epoch 0"):
        repair_best_checkpoint(tmp_path, state)
