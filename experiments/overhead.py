"""hydroseq's pipeline overhead: a full training step against the bare LSTM forward/backward.

*Full*: the configured loader (batch sampler, ``SequenceDataset.gather``, DataLoader machinery)
feeds ``batch.to(device)`` and the optimisation step, as the training loop does. *Bare*: the same
batches, assembled beforehand, go through the same optimisation step only. Both start from the
same initial weights. The difference is the data pipeline's share of a step.
"""

from __future__ import annotations

import itertools

import torch

from benchmarks.timing import repeat_seconds
from experiments.measures import OverheadRun
from experiments.steps import make_kit, run_steps, train_step
from hydroseq.batching import make_loader
from hydroseq.config import TrainConfig
from hydroseq.dataset import SequenceDataset


def measure_overhead(config: TrainConfig, dataset: SequenceDataset, station_std: torch.Tensor,
                     n_batches: int, repeats: int) -> OverheadRun:
    """Time ``n_batches`` steps of epoch 0 with the real loader and with pre-assembled batches."""
    loader = make_loader(dataset, config.batching, shuffle=True, seed=config.training.seed)
    sampler = loader.sampler  # make_loader passes the batch sampler as the loader's sampler
    sampler.set_epoch(0)
    device = torch.device("cpu")
    n_batches = min(n_batches, len(sampler))
    prepared = [batch.to(device) for batch in itertools.islice(iter(loader), n_batches)]
    kit = make_kit(config, dataset, station_std)

    def full() -> None:
        for batch in itertools.islice(iter(loader), n_batches):
            train_step(kit, batch.to(device))

    def bare() -> None:
        run_steps(kit, prepared)

    train_step(kit, prepared[0])  # warm-up: first-call allocations and thread-pool start
    full_s, bare_s = [], []
    for _ in range(repeats):  # interleaved, so that machine noise hits both alike
        full_s += repeat_seconds(full, 1, warmup=lambda: None)
        bare_s += repeat_seconds(bare, 1, warmup=lambda: None)
    return OverheadRun(mode=dataset.index.mode, batches=n_batches, full_s=tuple(full_s), bare_s=tuple(bare_s))
