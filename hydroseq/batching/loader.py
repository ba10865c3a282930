"""A ``torch.utils.data.DataLoader`` over whole batches assembled by ``SequenceDataset.gather``."""

from __future__ import annotations

import torch
from torch.utils.data import DataLoader, Dataset

from hydroseq.batching.samplers import LengthBucketBatchSampler, RandomBatchSampler, make_batch_sampler
from hydroseq.config import BatchingConfig
from hydroseq.dataset.batch import Batch
from hydroseq.dataset.sequence_dataset import SequenceDataset


class BatchLoader(DataLoader[Batch]):
    """A loader of whole :class:`Batch` objects whose sampler gives each epoch's order."""

    sampler: LengthBucketBatchSampler | RandomBatchSampler


class _BatchGather(Dataset[Batch]):
    """Maps a list of sample indices (one batch from the batch sampler) to a :class:`Batch`."""

    def __init__(self, dataset: SequenceDataset, pad_to: int | None) -> None:
        self.dataset = dataset
        self.pad_to = pad_to

    def __getitem__(self, indices: list[int]) -> Batch:
        return self.dataset.gather(indices, pad_to=self.pad_to)

    def __len__(self) -> int:
        return len(self.dataset)


def _whole_batch(batch: Batch) -> Batch:
    return batch


def make_loader(dataset: SequenceDataset, batching_config: BatchingConfig, *, shuffle: bool, seed: int,
                num_replicas: int = 1, rank: int = 0) -> BatchLoader:
    """A loader yielding :class:`Batch` objects for one split.

    Call ``loader.sampler.set_epoch(epoch)`` before each epoch to get that epoch's order (the
    order is a function of ``seed`` and the epoch only). ``strategy: global_pad`` pads every batch
    to the longest sample of the dataset (the baseline that wastes the most compute).
    ``pin_memory: auto`` pins when CUDA is available. Workers, when configured, are persistent.

    Parameters
    ----------
    dataset
        The split's :class:`SequenceDataset`.
    batching_config
        Strategy, batch size, token budget, bucket width, tail policy, workers, pinning.
    shuffle
        Shuffle (training) or a fixed longest-first order (evaluation).
    seed
        Base seed of the per-epoch order.
    num_replicas, rank
        Distributed training: this process's share of every epoch.
    """
    sampler = make_batch_sampler(dataset.lengths, batching_config, shuffle=shuffle, seed=seed,
                                 num_replicas=num_replicas, rank=rank)
    pad_to = int(dataset.lengths.max()) if batching_config.strategy == "global_pad" and len(dataset) else None
    pin = torch.cuda.is_available() if batching_config.pin_memory == "auto" else batching_config.pin_memory
    workers = batching_config.num_workers
    # torch types collate_fn for lists of samples; with batch_size=None it gets one (already whole) batch.
    return BatchLoader(_BatchGather(dataset, pad_to), sampler=sampler, batch_size=None,
                       collate_fn=_whole_batch,  # type: ignore[arg-type]
                       num_workers=workers, pin_memory=pin, persistent_workers=workers > 0,
                       prefetch_factor=2 if workers > 0 else None)
