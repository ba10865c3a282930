"""Padding cost of each batching strategy, computed from the cached lengths alone (no data touched)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from hydroseq.batching.samplers import make_batch_sampler
from hydroseq.config import BatchingConfig

STRATEGIES = ("global_pad", "random", "bucket")


@dataclass(frozen=True)
class PaddingFigures:
    """What one epoch of a strategy costs in padded steps.

    Attributes
    ----------
    strategy
        ``global_pad`` (random batches padded to the longest sample), ``random`` (random batches
        padded to their own longest) or ``bucket`` (length buckets padded to their own longest).
    batches, samples
        Batches and samples in the epoch.
    valid_steps, padded_steps
        Real input steps, and step slots the LSTM runs over (``batch size x padded length``).
    padding_ratio
        ``1 - valid_steps / padded_steps``: the share of compute spent on padding.
    valid_steps_per_batch
        Mean real steps per batch.
    """

    strategy: str
    batches: int
    samples: int
    valid_steps: int
    padded_steps: int
    padding_ratio: float
    valid_steps_per_batch: float

    def to_dict(self) -> dict[str, float | int | str]:
        """Plain mapping (for JSON and MLflow)."""
        return asdict(self)


def padding_figures(lengths: np.ndarray, batches: list[np.ndarray], strategy: str,
                    pad_to: int | None = None) -> PaddingFigures:
    """Padding of ``batches`` (index arrays into ``lengths``), each padded to its longest or to ``pad_to``."""
    valid = padded = samples = 0
    for batch in batches:
        batch_lengths = lengths[batch]
        width = pad_to if pad_to is not None else int(batch_lengths.max())
        valid += int(batch_lengths.sum())
        padded += width * len(batch)
        samples += len(batch)
    ratio = 1.0 - valid / padded if padded else 0.0
    return PaddingFigures(strategy=strategy, batches=len(batches), samples=samples, valid_steps=valid,
                          padded_steps=padded, padding_ratio=ratio,
                          valid_steps_per_batch=valid / len(batches) if batches else 0.0)


def padding_by_strategy(lengths: np.ndarray, batching_config: BatchingConfig, *, seed: int = 0,
                        epoch: int = 0) -> dict[str, PaddingFigures]:
    """One shuffled epoch of each strategy on the same lengths, with the config's batch size and tail.

    The token budget and bucket width apply to the bucket strategy only.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    figures = {}
    for strategy in STRATEGIES:
        config = batching_config.model_copy(update={"strategy": strategy})
        sampler = make_batch_sampler(lengths, config, shuffle=True, seed=seed)
        sampler.set_epoch(epoch)
        pad_to = int(lengths.max()) if strategy == "global_pad" and len(lengths) else None
        figures[strategy] = padding_figures(lengths, sampler.global_batches(), strategy, pad_to)
    return figures
