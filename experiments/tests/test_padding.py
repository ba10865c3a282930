"""Batch strategies on the real training samples: padding counts and the step benchmarks run."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from experiments.hydroseq_side import hydroseq_config
from experiments.overhead import measure_overhead
from experiments.padding import STRATEGIES, epoch_batches, measure_padding, slot_counts
from experiments.protocol import quick_protocol
from hydroseq.training.data import load_training_data


def test_buckets_pad_less_than_random_batches_on_real_sequence_samples(caravan_nc: Path, tmp_path: Path) -> None:
    config = hydroseq_config(quick_protocol(), "sequence", caravan_nc, tmp_path)
    lengths = load_training_data(config).train_set.lengths
    assert lengths.min() < lengths.max()  # short histories at the start of the training period
    padding = {}
    for strategy in STRATEGIES:
        batches = epoch_batches(lengths, strategy, 256, seed=0)
        assert np.array_equal(np.sort(np.concatenate(batches)), np.arange(len(lengths)))  # each sample once
        valid, slots = slot_counts(lengths, batches, packed=strategy.endswith("packed"))
        assert valid == int(lengths.sum())
        padding[strategy] = 1 - valid / slots
    assert padding["random, packed"] == 0.0
    assert padding["bucketed, padded"] < padding["random, padded"]


def test_step_benchmarks_report_every_strategy(caravan_nc: Path, tmp_path: Path) -> None:
    config = hydroseq_config(quick_protocol(), "sequence", caravan_nc, tmp_path)
    data = load_training_data(config)
    runs = measure_padding(config, data.train_set, data.station_std, n_batches=1, repeats=1, max_batch_samples=8)
    assert [run.strategy for run in runs] == list(STRATEGIES)
    assert all(run.valid_steps > 0 and run.best_valid_steps_per_s > 0 for run in runs)
    overhead = measure_overhead(config, data.train_set, data.station_std, n_batches=1, repeats=1)
    assert 0.0 <= overhead.overhead_fraction < 1.0
