"""SequenceDataset.gather: every sample keeps its own inputs and targets, padding is inert, nothing from the future."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hydroseq.dataset import Scalers, SequenceDataset, build_sample_index, load_station_data


def _build(path: Path, config, split: str = "train", mode=None, data=None):
    data = data if data is not None else load_station_data(path, config)
    scalers = Scalers.fit(data, config)
    index = build_sample_index(data, config, split, cache_dir=None, mode=mode)
    return data, scalers, index, SequenceDataset(data, scalers, index, config)


def _expected_inputs(data, scalers, index, position: int, lagged: bool) -> np.ndarray:
    """Straightforward per-sample reading: slice the window, scale, append lagged target and statics."""
    s, end, length = index.station[position], index.end[position], index.length[position]
    window = slice(end - length + 1, end + 1)
    parts = [scalers.transform_inputs(data.dynamic[s, window])]
    if lagged:
        parts.append(scalers.transform_target(data.target[s, window])[:, None])
    parts.append(np.repeat(scalers.transform_static(data.static[s])[None, :], length, axis=0))
    return np.concatenate(parts, axis=1)


@pytest.fixture(scope="module")
def sequence_set(small_nc: Path, make_config):
    """Sequence mode with lagged discharge and leads 1 and 3, on a split with gaps in the target."""
    config = make_config(mode="sequence", leads=[1, 3], lagged_target=True, min_len=5, seq_len=60)
    return _build(small_nc, config, split="test") + (config,)


@pytest.fixture(scope="module")
def per_step_set(small_nc: Path, make_config):
    config = make_config(seq_len=100, min_len=10, spin_up=7)
    return _build(small_nc, config, split="test") + (config,)


@settings(max_examples=40, deadline=None)
@given(picks=st.lists(st.integers(0, 10**9), min_size=1, max_size=40))
def test_sequence_batches_keep_every_target_with_its_own_sequence(sequence_set, picks) -> None:
    data, scalers, index, dataset, config = sequence_set
    positions = np.array(picks) % len(dataset)
    batch = dataset.gather(positions)
    lengths = batch.lengths.numpy()
    assert batch.lengths.dtype == torch.int64 and batch.lengths.device.type == "cpu"
    assert np.all(np.diff(lengths) <= 0)
    assert batch.valid_steps == lengths.sum()
    target = data.target
    for row in range(len(positions)):
        # find which requested sample this row is, by its (station, end) pair
        s, end = int(batch.station[row]), int(batch.end[row])
        matches = positions[(index.station[positions] == s) & (index.end[positions] == end)]
        position = int(matches[0])
        length = int(index.length[position])
        assert lengths[row] == length
        expected = _expected_inputs(data, scalers, index, position, lagged=True)
        np.testing.assert_allclose(batch.x[row, :length].numpy(), expected, rtol=1e-5, atol=1e-6)
        assert torch.all(batch.x[row, length:] == 0)
        observed = target[s, end + np.array(config.leads)]
        assert batch.mask[row].numpy().tolist() == np.isfinite(observed).tolist()
        scaled = scalers.transform_target(observed)
        np.testing.assert_allclose(batch.y[row].numpy(), np.where(np.isfinite(scaled), scaled, 0), rtol=1e-6)
    # the lagged target is observed discharge up to the last input step, never the target itself
    assert dataset.feature_names[3] == "streamflow_lagged"


def test_sequence_mode_has_missing_leads_masked_not_dropped(sequence_set) -> None:
    data, _, index, dataset, _ = sequence_set
    partly_missing = np.flatnonzero(np.isfinite(data.target[index.station, index.end + 1])
                                    != np.isfinite(data.target[index.station, index.end + 3]))
    assert len(partly_missing) > 0  # the 2014 streamflow tail ends at different days per station
    batch = dataset.gather(partly_missing)
    assert torch.all(batch.mask.sum(dim=1) == 1)


def test_per_step_mask_covers_valid_targets_after_spin_up_inside_the_length(per_step_set) -> None:
    data, scalers, index, dataset, config = per_step_set
    positions = np.arange(len(dataset))
    batch = dataset.gather(positions)
    assert batch.y.shape == batch.mask.shape == (*batch.x.shape[:2], 1)  # one lead: 0 (simulation)
    y, mask = batch.y[..., 0], batch.mask[..., 0]
    assert not mask[:, : config.spin_up].any()
    for row in range(len(batch)):
        s, end, length = int(batch.station[row]), int(batch.end[row]), int(batch.lengths[row])
        observed = data.target[s, end - length + 1: end + 1]
        expected_mask = np.isfinite(observed)
        expected_mask[: config.spin_up] = False
        assert mask[row, :length].numpy().tolist() == expected_mask.tolist()
        assert not mask[row, length:].any()
        scaled = scalers.transform_target(observed)
        np.testing.assert_allclose(y[row, :length].numpy()[expected_mask], scaled[expected_mask], rtol=1e-6)
    assert (~np.isfinite(data.target[:, -60:])).any()  # there are masked (not dropped) missing targets


def test_changing_the_future_does_not_move_any_sample(sequence_set, small_nc: Path) -> None:
    data, scalers, index, dataset, config = sequence_set
    cut = int(np.median(index.end))
    future = dataclasses.replace(data, dynamic=data.dynamic.copy(), target=data.target.copy())
    future.dynamic[:, cut + 1:] += 50.0
    future.target[:, cut + 1:] *= 3.0
    changed = SequenceDataset(future, scalers, index, config)
    past = np.flatnonzero(index.end <= cut)
    before, after = dataset.gather(past), changed.gather(past)
    assert torch.equal(before.x, after.x)  # inputs end at `end`, the lagged target included
    later = np.flatnonzero(index.end + 1 > cut)
    assert not torch.equal(dataset.gather(later).y, changed.gather(later).y)  # targets do lie after `end`


def test_pad_to_and_per_step_evaluation_index(small_nc: Path, make_config) -> None:
    config = make_config(seq_len=50, min_len=10)
    data, scalers, index, dataset = _build(small_nc, config, split="validation", mode="sequence")
    assert index.leads == (0,)
    batch = dataset.gather(np.arange(8), pad_to=80)
    assert batch.x.shape == (8, 80, dataset.n_features) and batch.padded_steps == 640
    s, end = int(batch.station[0]), int(batch.end[0])
    expected = scalers.transform_target(data.target[s, end: end + 1])
    np.testing.assert_allclose(batch.y[0].numpy(), expected)  # lead 0: the target at the last input step
    with pytest.raises(ValueError, match="shorter than the longest"):
        dataset.gather(np.arange(8), pad_to=10)


def test_batch_to_keeps_lengths_on_cpu(sequence_set) -> None:
    dataset = sequence_set[3]
    batch = dataset.gather(np.arange(4)).to("cpu")
    assert batch.lengths.device.type == "cpu" and len(batch) == 4
    if torch.cuda.is_available():  # pragma: no cover - GPU machines only
        moved = batch.pin_memory().to("cuda")
        assert moved.x.is_cuda and not moved.lengths.is_cuda
