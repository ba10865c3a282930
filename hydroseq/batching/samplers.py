"""Batch samplers: length buckets (little padding) and plain random batches (the baseline).

Both are reproducible from ``seed`` and the epoch set by :meth:`set_epoch`, and both support a
distributed mode in which every rank draws the same global batch list and takes its own share:
every rank gets the same number of batches and no two ranks share a sample.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

import numpy as np

from hydroseq.config import BatchingConfig

TailPolicy = Literal["keep", "drop"]


class _EpochBatchSampler:
    """Shared machinery: epoch seeding, distributed sharding, ``__iter__``/``__len__``."""

    def __init__(self, lengths: np.ndarray, batch_size: int, *, tail: TailPolicy, shuffle: bool, seed: int,
                 num_replicas: int, rank: int) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        if tail not in ("keep", "drop"):
            raise ValueError(f"tail must be 'keep' or 'drop', got {tail!r}")
        if not 0 <= rank < num_replicas:
            raise ValueError(f"rank {rank} is outside 0..{num_replicas - 1}")
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.batch_size = batch_size
        self.tail = tail
        self.shuffle = shuffle
        self.seed = seed
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self._cached: list[np.ndarray] = []
        self._cached_epoch: int | None = None

    def set_epoch(self, epoch: int) -> None:
        """Select the epoch whose order :meth:`__iter__` yields (call before every epoch)."""
        self.epoch = epoch

    def _rng(self) -> np.random.Generator:
        return np.random.default_rng([self.seed, self.epoch])

    def global_batches(self) -> list[np.ndarray]:
        """All batches of the current epoch, before the split between ranks."""
        raise NotImplementedError

    def rank_batches(self) -> list[np.ndarray]:
        """The batches of this rank in the current epoch (computed once per epoch)."""
        if self._cached_epoch != self.epoch:
            batches = self.global_batches()
            if self.num_replicas > 1:
                batches = _share_between_ranks(batches, self.num_replicas, self.tail)[self.rank]
            self._cached, self._cached_epoch = batches, self.epoch
        return self._cached

    def __iter__(self) -> Iterator[list[int]]:
        for batch in self.rank_batches():
            yield batch.tolist()

    def __len__(self) -> int:
        return len(self.rank_batches())


class LengthBucketBatchSampler(_EpochBatchSampler):
    """Batches of similar length, so that padding to the batch maximum wastes little compute.

    Each epoch the samples are shuffled (seed, epoch), then sorted by length with ties kept in
    shuffled order, and cut into buckets of ``bucket_width * batch_size`` consecutive samples
    (with a token budget: of about ``bucket_width * token_budget`` valid steps).
    Each bucket is cut into batches of ``batch_size`` samples, or, with ``token_budget``, of as
    many samples as fit in that many valid steps (batch size then varies with length; a sample
    longer than the budget gets a batch of its own). Finally the order of all batches is shuffled.
    Without ``shuffle`` the order is longest first and the same every epoch.

    Tail policy: the last batch of a bucket may be short (fewer than ``batch_size`` samples, or,
    with a token budget, room left for another sample as long as its longest). ``keep`` keeps it: every sample appears
    exactly once per epoch. ``drop`` drops it: every batch is full and at most one batch's worth of
    samples per bucket is skipped each epoch (different ones each epoch when shuffling).

    Parameters
    ----------
    lengths
        Length of every sample (the cached index's ``length`` array).
    batch_size
        Samples per batch (ignored when ``token_budget`` is given).
    token_budget
        Maximum valid steps (sum of lengths) per batch.
    bucket_width
        Batches per bucket: larger mixes more lengths per bucket (more randomness, more padding).
    tail, shuffle, seed
        See above.
    num_replicas, rank
        Distributed training: see :func:`_share_between_ranks`.
    """

    def __init__(self, lengths: np.ndarray, batch_size: int, *, token_budget: int | None = None,
                 bucket_width: int = 8, tail: TailPolicy = "keep", shuffle: bool = True, seed: int = 0,
                 num_replicas: int = 1, rank: int = 0) -> None:
        super().__init__(lengths, batch_size, tail=tail, shuffle=shuffle, seed=seed, num_replicas=num_replicas,
                         rank=rank)
        if token_budget is not None and token_budget < 1:
            raise ValueError(f"token_budget must be positive, got {token_budget}")
        if bucket_width < 1:
            raise ValueError(f"bucket_width must be positive, got {bucket_width}")
        self.token_budget = token_budget
        self.bucket_width = bucket_width

    def buckets(self) -> list[np.ndarray]:
        """The sample indices of each bucket in the current epoch, longest bucket first."""
        rng = self._rng()
        order = rng.permutation(len(self.lengths)) if self.shuffle else np.arange(len(self.lengths))
        order = order[np.argsort(-self.lengths[order], kind="stable")]
        if self.token_budget is None:
            size = self.bucket_width * self.batch_size
            return [order[i: i + size] for i in range(0, len(order), size)]
        steps_before = np.cumsum(self.lengths[order]) - self.lengths[order]
        bucket_of = steps_before // (self.bucket_width * self.token_budget)
        cuts = np.flatnonzero(np.diff(bucket_of)) + 1
        return np.split(order, cuts) if len(order) else []

    def global_batches(self) -> list[np.ndarray]:
        """The epoch's batches of every rank, in the order the ranks take them."""
        batches: list[np.ndarray] = []
        for bucket in self.buckets():
            bounds = self._batch_bounds(self.lengths[bucket])
            full = bounds[:-1] if self.tail == "drop" and not self._last_is_full(bucket, bounds) else bounds
            batches.extend(bucket[start:stop] for start, stop in full)
        if self.shuffle:
            order = self._rng().permutation(len(batches))
            batches = [batches[i] for i in order]
        return batches

    def _batch_bounds(self, bucket_lengths: np.ndarray) -> list[tuple[int, int]]:
        """(start, stop) of each batch inside a bucket."""
        n = len(bucket_lengths)
        if self.token_budget is None:
            return [(i, min(i + self.batch_size, n)) for i in range(0, n, self.batch_size)]
        bounds, start, used = [], 0, 0
        for position, length in enumerate(bucket_lengths.tolist()):
            if position > start and used + length > self.token_budget:
                bounds.append((start, position))
                start, used = position, 0
            used += length
        bounds.append((start, n))
        return bounds

    def _last_is_full(self, bucket: np.ndarray, bounds: list[tuple[int, int]]) -> bool:
        """Whether the bucket's last batch is as full as the others (it could not take another sample)."""
        start, stop = bounds[-1]
        if self.token_budget is None:
            return stop - start == self.batch_size
        lengths = self.lengths[bucket[start:stop]]
        return int(lengths.sum() + lengths.max()) > self.token_budget


class RandomBatchSampler(_EpochBatchSampler):
    """Random batches of ``batch_size`` samples regardless of length (the baseline to compare with).

    Tail policy: ``keep`` keeps the last, shorter batch; ``drop`` drops it.
    """

    def __init__(self, lengths: np.ndarray, batch_size: int, *, tail: TailPolicy = "keep", shuffle: bool = True,
                 seed: int = 0, num_replicas: int = 1, rank: int = 0) -> None:
        super().__init__(lengths, batch_size, tail=tail, shuffle=shuffle, seed=seed, num_replicas=num_replicas,
                         rank=rank)

    def global_batches(self) -> list[np.ndarray]:
        """The epoch's batches of every rank, in the order the ranks take them."""
        n = len(self.lengths)
        order = self._rng().permutation(n) if self.shuffle else np.arange(n)
        stop = n - n % self.batch_size if self.tail == "drop" else n
        return [order[i: min(i + self.batch_size, stop)] for i in range(0, stop, self.batch_size)]


def _share_between_ranks(batches: list[np.ndarray], num_replicas: int, tail: TailPolicy) -> list[list[np.ndarray]]:
    """Deal the global batches to ranks so that every rank has the same count and none shares a sample.

    Rank ``r`` gets batches ``r, r + R, ...`` up to ``R * floor(n / R)``. The ``n mod R`` batches
    left over are, with ``tail="keep"``, pooled and split into ``R`` smaller batches, one more per
    rank, so every sample is still used once (when the pool has fewer than ``R`` samples they are
    skipped this epoch); with ``tail="drop"`` they are skipped.
    """
    whole = len(batches) - len(batches) % num_replicas
    shares = [batches[rank:whole:num_replicas] for rank in range(num_replicas)]
    leftover = batches[whole:]
    if tail == "keep" and leftover:
        pool = np.concatenate(leftover)
        if len(pool) >= num_replicas:
            for rank, part in enumerate(np.array_split(pool, num_replicas)):
                shares[rank] = [*shares[rank], part]
    return shares


def make_batch_sampler(lengths: np.ndarray, batching_config: BatchingConfig, *, shuffle: bool, seed: int,
                       num_replicas: int = 1, rank: int = 0) -> LengthBucketBatchSampler | RandomBatchSampler:
    """The batch sampler the config's ``strategy`` names (``global_pad`` uses random batches)."""
    if batching_config.strategy == "bucket":
        return LengthBucketBatchSampler(
            lengths, batching_config.batch_size, token_budget=batching_config.token_budget,
            bucket_width=batching_config.bucket_width, tail=batching_config.tail, shuffle=shuffle, seed=seed,
            num_replicas=num_replicas, rank=rank)
    return RandomBatchSampler(lengths, batching_config.batch_size, tail=batching_config.tail, shuffle=shuffle,
                              seed=seed, num_replicas=num_replicas, rank=rank)
