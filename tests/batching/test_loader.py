"""make_loader: the same batches with and without worker processes; strategies pad as documented."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from hydroseq.batching import make_loader
from hydroseq.config import BatchingConfig
from hydroseq.dataset import Scalers, SequenceDataset, build_sample_index, load_station_data


@pytest.fixture(scope="module")
def train_set(small_nc: Path, make_config) -> SequenceDataset:
    config = make_config(mode="sequence", min_len=30, stations=["01022500", "02064000"])
    data = load_station_data(small_nc, config)
    index = build_sample_index(data, config, "train", cache_dir=None)
    return SequenceDataset(data, Scalers.fit(data, config), index, config)


def _epoch(loader, epoch: int) -> list[tuple[np.ndarray, np.ndarray]]:
    loader.sampler.set_epoch(epoch)
    return [(batch.station.numpy() * 100_000 + batch.end.numpy(), batch.x.numpy()) for batch in loader]


def test_two_worker_processes_yield_the_same_batches_as_the_main_process(train_set: SequenceDataset) -> None:
    config = BatchingConfig(batch_size=512, bucket_width=2)
    main = _epoch(make_loader(train_set, config, shuffle=True, seed=5), epoch=1)
    workers = make_loader(train_set, config.model_copy(update={"num_workers": 2}), shuffle=True, seed=5)
    parallel = _epoch(workers, epoch=1)
    assert len(main) == len(parallel) == len(workers)
    for (ids_a, x_a), (ids_b, x_b) in zip(main, parallel, strict=True):
        assert np.array_equal(ids_a, ids_b) and np.array_equal(x_a, x_b)
    all_ids = np.concatenate([ids for ids, _ in main])
    assert len(np.unique(all_ids)) == len(train_set)
    assert _epoch(workers, epoch=2)[0][0].tolist() != parallel[0][0].tolist()


@pytest.mark.parametrize("strategy", ["bucket", "random", "global_pad"])
def test_strategies_pad_as_documented(train_set: SequenceDataset, strategy: str) -> None:
    config = BatchingConfig(strategy=strategy, batch_size=256)
    loader = make_loader(train_set, config, shuffle=True, seed=0)
    widths = [batch.x.shape[1] for batch in loader]
    longest = [int(batch.lengths.max()) for batch in loader]
    if strategy == "global_pad":
        assert set(widths) == {int(train_set.lengths.max())}
    else:
        assert widths == longest
    assert sum(len(batch) for batch in loader) == len(train_set)


def test_pin_memory_auto_follows_cuda(train_set: SequenceDataset) -> None:
    loader = make_loader(train_set, BatchingConfig(), shuffle=False, seed=0)
    assert loader.pin_memory == torch.cuda.is_available()
    first = next(iter(loader))
    assert first.lengths.dtype == torch.int64 and torch.all(first.lengths[:-1] >= first.lengths[1:])
