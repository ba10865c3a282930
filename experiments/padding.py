"""Valid timesteps per second for naive padding, length buckets and the packed LSTM path.

Every strategy batches the same training samples (epoch 0 of its sampler) and starts from the
same model initialisation and optimiser:

- ``random, padded``: random batches padded to their longest sample (what a plain DataLoader does);
- ``bucketed, padded``: hydroseq's length buckets, padded to the batch maximum;
- ``random, packed``: random batches through ``pack_padded_sequence`` (the LSTM skips padding;
  its padded slots are not computed, so its padding share is reported as 0).

Batches are assembled before the clock starts: this measures the model's work, not the pipeline
(that is :mod:`experiments.overhead`).
"""

from __future__ import annotations

from functools import partial

import numpy as np
import torch

from benchmarks.timing import repeat_seconds
from experiments.measures import PaddingRun
from experiments.steps import make_kit, run_steps
from hydroseq.batching import LengthBucketBatchSampler, RandomBatchSampler
from hydroseq.config import TrainConfig
from hydroseq.dataset import SequenceDataset

STRATEGIES = ("random, padded", "bucketed, padded", "random, packed")


def epoch_batches(lengths: np.ndarray, strategy: str, batch_size: int, seed: int) -> list[np.ndarray]:
    """Sample positions of every batch of epoch 0 under ``strategy``."""
    if strategy.startswith("bucketed"):
        sampler = LengthBucketBatchSampler(lengths, batch_size, seed=seed)
    else:
        sampler = RandomBatchSampler(lengths, batch_size, seed=seed)
    sampler.set_epoch(0)
    return [np.asarray(batch) for batch in sampler]


def slot_counts(lengths: np.ndarray, batches: list[np.ndarray], packed: bool) -> tuple[int, int]:
    """(valid steps, computed step slots) of ``batches``: padded to each batch's longest unless packed."""
    valid = int(sum(lengths[batch].sum() for batch in batches))
    slots = valid if packed else int(sum(len(batch) * lengths[batch].max() for batch in batches))
    return valid, slots


def measure_padding(config: TrainConfig, dataset: SequenceDataset, station_std: torch.Tensor, n_batches: int,
                    repeats: int, packed_batches: int = 1, max_batch_samples: int | None = None,
                    packed_batch_samples: int | None = None) -> list[PaddingRun]:
    """Throughput of each strategy in :data:`STRATEGIES` on the training samples of ``dataset``.

    The padding share is counted over the whole epoch; the time over the epoch's first
    ``n_batches`` batches (``packed_batches`` for the packed path, whose CPU backward is slow),
    each cut to its first ``max_batch_samples`` samples if given (quick mode: a smoke test) and,
    for the packed path, to ``packed_batch_samples``.
    """
    lengths, seed, runs = dataset.lengths, config.training.seed, []
    for strategy in STRATEGIES:
        packed = strategy.endswith("packed")
        batches = epoch_batches(lengths, strategy, config.batching.batch_size, seed)
        epoch_valid, epoch_slots = slot_counts(lengths, batches, packed)
        cut = packed_batch_samples if packed else max_batch_samples
        timed = [dataset.gather(batch[:cut]) for batch in batches[: packed_batches if packed else n_batches]]
        kit = make_kit(config, dataset, station_std, lstm_path="packed" if packed else "padded")
        seconds = repeat_seconds(partial(run_steps, kit, timed), repeats, warmup=partial(run_steps, kit, timed[:1]))
        runs.append(PaddingRun(strategy=strategy, valid_steps=sum(batch.valid_steps for batch in timed),
                               epoch_slots=epoch_slots, seconds=seconds,
                               epoch_padding=1.0 - epoch_valid / epoch_slots))
    return runs
