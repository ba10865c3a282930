"""Where a hydroseq training step spends its time: torch.profiler's top operators.

The profiled region is what the training loop does per batch: fetch the batch from the real
loader (sampler, ``gather``), then forward, NSE* loss, backward, clipping and Adam. Shares are of
the summed self CPU time of all operators; the numpy batch assembly, which torch does not see as
operators, is the self time of the ``fetch batch`` record.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.profiler import ProfilerActivity, profile, record_function

from experiments.steps import make_kit, train_step
from hydroseq.batching import make_loader
from hydroseq.config import TrainConfig
from hydroseq.dataset import SequenceDataset


@dataclass(frozen=True)
class ProfileRow:
    """One operator: its own CPU time over the profiled steps and its share of the total."""

    name: str
    self_ms: float
    share: float


@dataclass(frozen=True)
class StepProfile:
    """The top operators of ``batches`` training steps in one mode."""

    mode: str
    batches: int
    total_ms: float
    rows: tuple[ProfileRow, ...]


def profile_steps(config: TrainConfig, dataset: SequenceDataset, station_std: torch.Tensor, batches: int,
                  top: int = 8) -> StepProfile:
    """Profile ``batches`` steps of epoch 0 (after one warm-up step) and keep the ``top`` operators."""
    loader = make_loader(dataset, config.batching, shuffle=True, seed=config.training.seed)
    loader.sampler.set_epoch(0)
    kit = make_kit(config, dataset, station_std)
    train_step(kit, next(iter(loader)))  # warm-up outside the profile
    stream = iter(loader)
    with profile(activities=[ProfilerActivity.CPU]) as profiler:
        for _ in range(batches):
            with record_function("fetch batch"):
                batch = next(stream, None)
            if batch is None:
                break
            train_step(kit, batch)
    events = [(event.key, event.self_cpu_time_total) for event in profiler.key_averages()]
    total = sum(micros for _, micros in events)
    ranked = sorted(events, key=lambda item: -item[1])[:top]
    rows = tuple(ProfileRow(name, micros / 1000, micros / total if total else 0.0) for name, micros in ranked)
    return StepProfile(mode=dataset.index.mode, batches=batches, total_ms=total / 1000, rows=rows)
