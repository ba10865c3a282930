"""DDP training with 2 real gloo processes on loopback (torchrun), against 1 process with twice the batch.

One 2-rank run (per-rank batch B = 8) and one single-process run (batch 2B = 16) on the same real
data and seed; both record a checksum of the weights after every optimiser step and every step's
loss (``ddp_probe.py``). The resumed run goes through ``hydroseq train --nproc 2 --resume``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from mlflow.tracking import MlflowClient

from hydroseq.cli import main
from hydroseq.config import dump_config
from hydroseq.training.checkpoint import Checkpoint

pytestmark = pytest.mark.slow

PROBE = Path(__file__).with_name("ddp_probe.py")
EPOCHS = 3
# Per-step tolerance of the 2-rank loss (recombined as the mean over all valid steps) against the
# 1-rank loss with twice the batch; docs/scale-out.md explains it.
STEP_LOSS_RTOL = 1e-2
VAL_LOSS_RTOL = 5e-3


def _launch(config_path: Path, out: Path, nproc: int) -> list[dict]:
    """Run the probe (under torchrun when ``nproc > 1``); returns the per-rank records."""
    out.mkdir(parents=True, exist_ok=True)
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}"]
    command = [*(launcher if nproc > 1 else [sys.executable]), str(PROBE), str(config_path), str(out)]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]
    return [json.loads((out / f"rank{rank}.json").read_text()) for rank in range(nproc)]


def _prepared(tmp: Path, config) -> Path:
    """Write ``config`` as YAML into ``tmp`` (its store, ``tests.fixtures.store_uri``, is already there)."""
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / "train.yaml"
    path.write_text(dump_config(config))
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, small_ingested: Path, train_config):
    """The 2-rank run (batch 8 per rank) and the 1-rank run (batch 16): same data, seed and schedule.

    ``tail: drop`` keeps every batch full, so both runs see the same samples in every step.
    """
    tmp = tmp_path_factory.mktemp("ddp")
    two = train_config(tmp / "two", small_ingested, batching={"batch_size": 8, "tail": "drop"}, epochs=EPOCHS)
    one = train_config(tmp / "one", small_ingested, batching={"batch_size": 16, "tail": "drop"}, epochs=EPOCHS)
    return {"two": _launch(_prepared(tmp / "two", two), tmp / "two", 2),
            "one": _launch(_prepared(tmp / "one", one), tmp / "one", 1)[0],
            "two_config": two, "tmp": tmp}


def test_both_ranks_hold_identical_weights_after_every_step(runs) -> None:
    rank0, rank1 = runs["two"]
    assert (rank0["world_size"], rank1["world_size"]) == (2, 2)
    assert len(rank0["checksums"]) == len(rank1["checksums"]) == len(runs["one"]["checksums"]) > EPOCHS
    assert rank0["checksums"] == rank1["checksums"]
    assert len(set(rank0["checksums"])) == len(rank0["checksums"])  # every step changed the weights
    assert rank0["history"] == rank1["history"] and rank0["run_id"] == rank1["run_id"]
    assert rank0["group_left"] and rank1["group_left"]  # train() destroys the group it created, not exit


def test_the_mlflow_store_has_exactly_one_run_logged_by_rank_zero(runs) -> None:
    config = runs["two_config"]
    client = MlflowClient(config.tracking.tracking_uri)
    experiment = client.get_experiment_by_name(config.tracking.experiment)
    found = client.search_runs([experiment.experiment_id])
    assert [run.info.run_id for run in found] == [runs["two"][0]["run_id"]]
    history = client.get_metric_history(found[0].info.run_id, "train_loss")
    assert sorted(metric.step for metric in history) == list(range(EPOCHS))  # logged once per epoch
    logged = {metric.step: metric.value for metric in history}
    assert [logged[epoch] for epoch in range(EPOCHS)] == pytest.approx([row["train_loss"] for row in
                                                                        runs["two"][0]["history"]])
    assert Checkpoint.load(config.training.output_dir / "last.pt").epoch == EPOCHS


def _global_step_loss(rank0: dict, rank1: dict) -> np.ndarray:
    """Each step's loss over all valid steps of both ranks (the quantity 1 rank with batch 2B reports)."""
    losses = np.array([rank0["losses"], rank1["losses"]])
    counts = np.array([rank0["valid_steps"], rank1["valid_steps"]], dtype=float)
    return (losses * counts).sum(axis=0) / counts.sum(axis=0)


def test_two_ranks_with_batch_b_follow_one_rank_with_batch_2b(runs) -> None:
    rank0, rank1 = runs["two"]
    one = runs["one"]
    step_counts = np.array(rank0["valid_steps"]) + np.array(rank1["valid_steps"])
    assert step_counts.tolist() == one["valid_steps"]  # the same samples in every step
    two_losses = _global_step_loss(rank0, rank1)
    np.testing.assert_allclose(two_losses[0], one["losses"][0], rtol=1e-5)  # same start, same batch
    np.testing.assert_allclose(two_losses, one["losses"], rtol=STEP_LOSS_RTOL)
    for two_epoch, one_epoch in zip(rank0["history"], one["history"], strict=True):
        assert two_epoch["val_loss"] == pytest.approx(one_epoch["val_loss"], rel=VAL_LOSS_RTOL)


@pytest.mark.exhaustive  # a minute of two-process training; `make test` resumes single-process runs
def test_resumed_distributed_run_ends_with_the_uninterrupted_weights(runs, monkeypatch: pytest.MonkeyPatch) -> None:
    """``hydroseq train --nproc 2 --resume`` from the checkpoint that a kill after epoch 1 leaves."""
    for variable in ("OMP_NUM_THREADS", "TORCHELASTIC_SIGNALS_TO_HANDLE"):  # torchrun sets them in its own process
        monkeypatch.delenv(variable, raising=False)
    straight = runs["two_config"]
    resumed_dir = runs["tmp"] / "resumed"
    shutil.copytree(runs["tmp"] / "two", resumed_dir)
    config = straight.model_copy(update={"training": straight.training.model_copy(
        update={"output_dir": resumed_dir / "out"})})
    shutil.copy(resumed_dir / "last_after_epoch_1.pt", resumed_dir / "out" / "last.pt")
    config_path = resumed_dir / "resume.yaml"
    config_path.write_text(dump_config(config))
    tracking_uri = f"sqlite:///{resumed_dir / 'mlruns.db'}"
    arguments = ["train", "--config", str(config_path), "--nproc", "2", "--resume", "--tracking-uri", tracking_uri]
    assert main(arguments) == 0
    resumed = Checkpoint.load(resumed_dir / "out" / "last.pt")
    uninterrupted = Checkpoint.load(straight.training.output_dir / "last.pt")
    assert resumed.epoch == EPOCHS and resumed.run_id == runs["two"][0]["run_id"]
    for name, value in uninterrupted.model_state.items():
        assert torch.equal(resumed.model_state[name], value), name
    assert [row["train_loss"] for row in resumed.history] == [row["train_loss"] for row in uninterrupted.history]
    client = MlflowClient(tracking_uri)
    experiment = client.get_experiment_by_name(config.tracking.experiment)
    assert [run.info.run_id for run in client.search_runs([experiment.experiment_id])] == [resumed.run_id]
