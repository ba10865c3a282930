"""The single-process side of ``hydroseq.training.distributed``: no launcher, no process group."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from hydroseq.config import TrainConfig, TrainingConfig, load_config
from hydroseq.errors import ConfigError
from hydroseq.training.distributed import DistributedContext, LaunchOptions, launch, setup, torchrun_arguments

REPO_ROOT = Path(__file__).resolve().parents[2]
LAUNCHER_ENV = {"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29599"}


def test_without_torchrun_the_context_is_one_inactive_process(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in LAUNCHER_ENV:
        monkeypatch.delenv(name, raising=False)
    context = setup(TrainingConfig(device="cpu"))
    assert (context.rank, context.world_size, context.active, context.is_main) == (0, 1, False, True)
    model = torch.nn.Linear(2, 1)
    assert context.wrap(model) is model
    assert context.all_gather({"a": 1}) == [{"a": 1}]
    assert context.from_main(lambda: "run-id") == "run-id"
    assert context.combine_metrics({"train_loss": 0.5}) == {"train_loss": 0.5}
    assert not torch.distributed.is_initialized()


def test_each_rank_resumes_its_own_generator_states() -> None:
    checkpoint = SimpleNamespace(rng="rank 0 of a 1-process run", rng_by_rank=["rank 0", "rank 1"])
    rank1 = DistributedContext(1, 2, 1, 2, torch.device("cpu"), active=True)
    assert rank1.own_rng_state(checkpoint) == "rank 1"
    other_size = DistributedContext(1, 4, 1, 4, torch.device("cpu"), active=True)
    assert other_size.own_rng_state(checkpoint) == "rank 0 of a 1-process run"
    assert rank1.own_rng_state(SimpleNamespace(rng="old checkpoint", rng_by_rank=[])) == "old checkpoint"


def test_nproc_becomes_a_standalone_torchrun_command() -> None:
    options = LaunchOptions(nproc=4, data_path=Path("d.nc"), resume=True, tracking_uri="sqlite:///x.db")
    assert torchrun_arguments(Path("c.yaml"), options) == [
        "--standalone", "--nproc_per_node=4", "-m", "hydroseq", "train", "--config", "c.yaml", "--data", "d.nc",
        "--resume", "--tracking-uri", "sqlite:///x.db"]


def test_nproc_inside_a_torchrun_job_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in LAUNCHER_ENV.items():
        monkeypatch.setenv(name, value)
    config = load_config(REPO_ROOT / "configs" / "train_demo_cpu.yaml", TrainConfig)
    with pytest.raises(ConfigError, match="leave it out"):
        launch(config, LaunchOptions(nproc=2))
