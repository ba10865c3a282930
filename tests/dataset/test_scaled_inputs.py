"""Scaled inputs: one copy shared by every split, and the disk storage gives the same batches as memory."""

from __future__ import annotations

import gc
from pathlib import Path

import numpy as np
import pytest

from hydroseq.dataset import (
    FeatureLayout,
    Scalers,
    SequenceDataset,
    build_features,
    build_sample_index,
    load_station_data,
)
from hydroseq.dataset.scaled_inputs import STATION_BLOCK, build_scaled_inputs


@pytest.fixture(scope="module", params=[
    {"leads": [1, 3], "lagged_target": True, "spin_up": 5},
    {"mode": "sequence", "leads": [2], "lagged_target": True},
], ids=["per_step_forecast", "sequence"])
def config_and_data(request, small_nc: Path, make_config):
    config = make_config(seq_len=120, min_len=10, **request.param)
    data = load_station_data(small_nc, config)
    return config, data, Scalers.fit(data, config)


def _batch_arrays(dataset: SequenceDataset) -> list[np.ndarray]:
    batch = dataset.gather(np.arange(len(dataset)))
    return [batch.x.numpy(), batch.y.numpy(), batch.mask.numpy(), batch.lengths.numpy(), batch.station.numpy()]


@pytest.mark.parametrize("split", ["train", "validation", "test"])
def test_disk_storage_gives_bit_identical_batches(config_and_data, split: str, tmp_path: Path) -> None:
    config, data, scalers = config_and_data
    index = build_sample_index(data, config, split, cache_dir=None)
    in_memory = SequenceDataset(data, scalers, index, config)
    disk_config = config.model_copy(update={"storage": "disk", "cache_dir": tmp_path})
    on_disk = SequenceDataset(data, Scalers.fit(data, config), index, disk_config)  # new scalers: not shared
    assert in_memory.inputs.storage == "memory" and on_disk.inputs.storage == "disk"
    for got, expected in zip(_batch_arrays(on_disk), _batch_arrays(in_memory), strict=True):
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


def test_every_split_shares_one_copy_until_the_scalers_change(config_and_data) -> None:
    config, data, scalers = config_and_data
    datasets = [SequenceDataset(data, scalers, build_sample_index(data, config, split, cache_dir=None), config)
                for split in ("train", "validation", "test")]
    assert datasets[0].inputs is datasets[1].inputs is datasets[2].inputs
    refitted = Scalers.fit(data, config)
    again = SequenceDataset(data, refitted, datasets[0].index, config)
    assert again.inputs is not datasets[0].inputs


def test_per_step_columns_and_static_rows_are_the_forecast_features(config_and_data) -> None:
    """Training and forecasting read one feature code: the blocks equal build_features' columns."""
    config, data, scalers = config_and_data
    layout = FeatureLayout.from_config(config.model_copy())
    features, _ = build_features(data, scalers, layout)
    inputs = build_scaled_inputs(data, scalers, layout, max_lead=3)
    n_step = inputs.n_step_features
    for station in range(data.n_stations):
        np.testing.assert_array_equal(inputs.features(station * data.n_times, data.n_times),
                                      features[station, :, :n_step])
        np.testing.assert_array_equal(features[station, :, n_step:],
                                      np.broadcast_to(inputs.static[station], features[station, :, n_step:].shape))
    assert data.n_stations < STATION_BLOCK  # one block here; the block seams are tested below


def test_station_blocks_join_without_seams(config_and_data, monkeypatch: pytest.MonkeyPatch) -> None:
    config, data, scalers = config_and_data
    layout = FeatureLayout.from_config(config)
    whole = build_scaled_inputs(data, scalers, layout, max_lead=3)
    monkeypatch.setattr("hydroseq.dataset.scaled_inputs.STATION_BLOCK", 3)
    for storage in ("memory", "disk"):
        blocks = build_scaled_inputs(data, scalers, layout, max_lead=3, storage=storage)
        rows = data.n_stations * data.n_times
        np.testing.assert_array_equal(blocks.features(0, rows), whole.features(0, rows))
        np.testing.assert_array_equal(blocks.target(0, data.n_stations * whole.row_steps),
                                      whole.target(0, data.n_stations * whole.row_steps))


def test_the_disk_file_goes_with_the_object(config_and_data, tmp_path: Path) -> None:
    config, data, scalers = config_and_data
    inputs = build_scaled_inputs(data, scalers, FeatureLayout.from_config(config), 3, "disk", tmp_path)
    assert len(list(tmp_path.iterdir())) == 1
    del inputs
    gc.collect()
    assert list(tmp_path.iterdir()) == []


def test_a_memory_budget_too_small_puts_the_inputs_on_disk(config_and_data, tmp_path: Path) -> None:
    config, data, _ = config_and_data
    index = build_sample_index(data, config, "train", cache_dir=None)
    roomy = SequenceDataset(data, Scalers.fit(data, config), index, config.model_copy(update={"memory_budget_gb": 1e3}))
    tight = config.model_copy(update={"memory_budget_gb": 1e-3, "cache_dir": tmp_path})
    assert roomy.inputs.storage == "memory"
    assert SequenceDataset(data, Scalers.fit(data, config), index, tight).inputs.storage == "disk"
