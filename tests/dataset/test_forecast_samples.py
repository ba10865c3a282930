"""Per-step forecast samples: targets at t + lead inside the split only, observed target with a flag, no leak."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hydroseq.config import ModelConfig
from hydroseq.dataset import (
    FeatureLayout,
    Scalers,
    SequenceDataset,
    build_features,
    build_sample_index,
    load_station_data,
)
from hydroseq.model import get_model

LEADS = [1, 3]


@pytest.fixture(scope="module")
def forecast_set(small_nc: Path, make_config):
    """Per-step, leads 1 and 3, observed discharge as an input, on the train split."""
    config = make_config(leads=LEADS, lagged_target=True, seq_len=120, min_len=10, spin_up=5)
    data = load_station_data(small_nc, config)
    scalers = Scalers.fit(data, config)
    index = build_sample_index(data, config, "train", cache_dir=None)
    return data, scalers, index, SequenceDataset(data, scalers, index, config), config


def test_features_carry_the_observed_target_and_its_flag(forecast_set) -> None:
    data, scalers, index, dataset, config = forecast_set
    names = dataset.feature_names
    assert names[3:5] == ["streamflow_lagged", "streamflow_lagged_observed"]
    batch = dataset.gather(np.arange(len(index)))
    for row in range(len(batch)):
        s, end, length = int(batch.station[row]), int(batch.end[row]), int(batch.lengths[row])
        observed = data.target[s, end - length + 1: end + 1]
        flag = batch.x[row, :length, 4].numpy()
        assert flag.tolist() == np.isfinite(observed).astype(np.float32).tolist()
        value = batch.x[row, :length, 3].numpy()
        expected = np.nan_to_num(scalers.transform_target(observed))
        np.testing.assert_allclose(value, expected, rtol=1e-6)


def test_targets_are_t_plus_lead_and_never_leave_the_split(forecast_set) -> None:
    data, scalers, index, dataset, config = forecast_set
    in_train = data.grid.period_mask(data.times, config.splits.train)
    batch = dataset.gather(np.arange(len(index)))
    assert batch.y.shape == (*batch.x.shape[:2], len(LEADS))
    masked_by_period = 0
    for row in range(len(batch)):
        s, end, length = int(batch.station[row]), int(batch.end[row]), int(batch.lengths[row])
        steps = np.arange(end - length + 1, end + 1)
        for column, lead in enumerate(LEADS):
            valid_time = steps + lead
            inside = valid_time < data.n_times
            target = np.full(length, np.nan, np.float32)
            target[inside] = data.target[s, valid_time[inside]]
            allowed = inside.copy()
            allowed[inside] &= in_train[valid_time[inside]]
            expected = np.isfinite(target) & allowed
            expected[: config.spin_up] = False
            masked_by_period += int((np.isfinite(target) & ~allowed).sum())
            assert batch.mask[row, :length, column].numpy().tolist() == expected.tolist()
            np.testing.assert_allclose(batch.y[row, :length, column].numpy()[expected],
                                       scalers.transform_target(target)[expected], rtol=1e-6)
    assert masked_by_period > 0  # chunks at the end of the train period do reach past it, masked


@settings(max_examples=25, deadline=None)
@given(cut=st.integers(0, 119), path=st.sampled_from(["packed", "padded"]), seed=st.integers(0, 3),
       bump=st.floats(-50, 50, allow_nan=False).filter(lambda v: abs(v) > 1e-3), skip=st.booleans())
def test_perturbing_inputs_after_t_never_moves_an_output_at_t(forecast_set, cut, path, seed, bump, skip) -> None:
    """Raw data (forcing and observed discharge) changed after step t: every output at or before t is
    bit-identical, with and without the skip from the newest observation."""
    data, scalers, index, dataset, config = forecast_set
    torch.manual_seed(seed)
    model = get_model(ModelConfig(hidden_size=8, observed_skip=skip), dataset.n_features, len(LEADS), "per_step",
                      data=config).eval()
    longest = np.flatnonzero(index.length == index.length.max())
    _, first_of_station = np.unique(index.station[longest], return_index=True)
    rows = longest[first_of_station]  # one full-length chunk per station
    batch = dataset.gather(rows)
    future = dataclasses.replace(data, dynamic=data.dynamic.copy(), target=data.target.copy())
    for row in range(len(rows)):  # station s changed after its own t = start of its chunk + cut
        s, t = int(batch.station[row]), int(batch.end[row] - batch.lengths[row] + 1) + cut
        future.dynamic[s, t + 1:] += bump
        tail = future.target[s, t + 1:]
        future.target[s, t + 1:] = np.where(np.isfinite(tail), np.nan, 1.0)  # flip observed and missing
    changed = SequenceDataset(future, scalers, index, config).gather(rows)
    assert torch.equal(batch.station, changed.station) and torch.equal(batch.end, changed.end)
    with torch.no_grad():
        before = model(batch.x, batch.lengths, path=path)
        after = model(changed.x, changed.lengths, path=path)
    assert torch.equal(before[:, : cut + 1], after[:, : cut + 1])
    if cut + 1 < int(batch.lengths.min()):
        assert not torch.equal(before[:, cut + 1:], after[:, cut + 1:])  # control: the future does move later steps


def test_layout_columns_match_the_built_features(forecast_set) -> None:
    data, scalers, _, _, config = forecast_set
    layout = FeatureLayout.of(data.dynamic_names, data.static_names, data.target_name, "per_step", True)
    features, valid = build_features(data, scalers, layout)
    assert features.shape[-1] == len(layout.names)
    assert np.array_equal(features[..., layout.flag_column], np.isfinite(data.target).astype(np.float32))
    assert np.array_equal(valid, np.isfinite(data.dynamic).all(axis=-1))  # a missing gauge does not cut history
    sequence = FeatureLayout.of(data.dynamic_names, data.static_names, data.target_name, "sequence", True)
    assert sequence.flag_column is None and "streamflow_lagged_observed" not in sequence.names
    _, sequence_valid = build_features(data, scalers, sequence)
    assert np.array_equal(sequence_valid, valid & np.isfinite(data.target))


def test_a_forecast_config_refuses_a_lead_that_would_read_its_own_target(make_config) -> None:
    with pytest.raises(ValueError, match="every lead >= 1"):
        make_config(leads=[0, 1], lagged_target=True)
    with pytest.raises(ValueError, match="target_hiding applies"):
        make_config(leads=[1], target_hiding={})
    assert make_config().lead_steps == [0]
    assert make_config(mode="sequence").lead_steps == [1]
