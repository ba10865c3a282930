"""build_sample_index: the vectorised index equals a plain loop, respects periods, and is cached."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hydroseq.dataset import build_sample_index, load_station_data, require_samples, run_length_so_far
from hydroseq.errors import InputDataError
from hydroseq.grid import GridSpec

UTC_DAILY = GridSpec("1D", "UTC")


def _reference_sequence(valid_input, valid_target, in_period, train: bool, leads, seq_len, min_len):
    """Plain-loop reading of the sequence-mode rule (the specification the vectorised code must meet)."""
    samples = []
    n_stations, n_times = valid_target.shape
    for s in range(n_stations):
        for t in range(n_times - max(leads)):
            if not all(in_period[t + lead] for lead in leads):
                continue
            if not any(valid_target[s, t + lead] for lead in leads):
                continue
            run = 0
            while t - run >= 0 and valid_input[s, t - run] and (in_period[t - run] or not train):
                run += 1
            if min(run, seq_len) >= min_len:
                samples.append((s, t, min(run, seq_len)))
    return samples


def _reference_per_step(valid_input, valid_target, in_period, seq_len, min_len, spin_up):
    samples = []
    n_stations, n_times = valid_target.shape
    for s in range(n_stations):
        t = 0
        while t < n_times:
            if not (valid_input[s, t] and in_period[t]):
                t += 1
                continue
            run_start = t
            while t < n_times and valid_input[s, t] and in_period[t]:
                t += 1
            for start in range(run_start, t, seq_len):
                stop = min(start + seq_len, t)
                if stop - start >= min_len and valid_target[s, start + spin_up: stop].any():
                    samples.append((s, stop - 1, stop - start))
    return samples


def _as_tuples(index) -> list[tuple[int, int, int]]:
    return list(zip(index.station.tolist(), index.end.tolist(), index.length.tolist(), strict=True))


gappy_record = st.tuples(st.integers(1, 3), st.integers(40, 120), st.floats(0.0, 0.3), st.floats(0.0, 0.5),
                         st.integers(0, 2**31 - 1))


@settings(max_examples=60, deadline=None)
@given(record=gappy_record, seq_len=st.integers(2, 25), min_len=st.integers(1, 25),
       leads=st.lists(st.integers(1, 4), min_size=1, max_size=3, unique=True), lagged=st.booleans(),
       split=st.sampled_from(["train", "validation", "test"]))
def test_sequence_index_equals_the_plain_loop(synthetic, record, seq_len, min_len, leads, lagged, split) -> None:
    make_data, make_config = synthetic
    n_stations, n_times, input_gaps, target_gaps, seed = record
    rng = np.random.default_rng(seed)
    dynamic = np.where(rng.random((n_stations, n_times, 2)) < input_gaps / 2, np.nan, 1.0)
    target = np.where(rng.random((n_stations, n_times)) < target_gaps, np.nan, 2.0)
    min_len = min(min_len, seq_len)
    config = make_config(n_times, dynamic_inputs=["x0", "x1"], mode="sequence", seq_len=seq_len, min_len=min_len,
                         leads=leads, lagged_target=lagged)
    data = make_data(dynamic, target)
    index = build_sample_index(data, config, split, cache_dir=None)
    valid_input = np.isfinite(dynamic).all(-1) & (np.isfinite(target) if lagged else True)
    in_period = UTC_DAILY.period_mask(data.times, getattr(config.splits, split))
    expected = _reference_sequence(valid_input, np.isfinite(target), in_period, split == "train", leads,
                                   seq_len, min_len)
    assert _as_tuples(index) == expected


@settings(max_examples=60, deadline=None)
@given(record=gappy_record, seq_len=st.integers(2, 25), min_len=st.integers(1, 25), spin_up=st.integers(0, 24),
       split=st.sampled_from(["train", "validation", "test"]))
def test_per_step_index_equals_the_plain_loop(synthetic, record, seq_len, min_len, spin_up, split) -> None:
    make_data, make_config = synthetic
    n_stations, n_times, input_gaps, target_gaps, seed = record
    rng = np.random.default_rng(seed)
    dynamic = np.where(rng.random((n_stations, n_times, 1)) < input_gaps, np.nan, 1.0)
    target = np.where(rng.random((n_stations, n_times)) < target_gaps, np.nan, 2.0)
    min_len, spin_up = min(min_len, seq_len), min(spin_up, seq_len - 1)
    config = make_config(n_times, seq_len=seq_len, min_len=min_len, spin_up=spin_up)
    data = make_data(dynamic, target)
    index = build_sample_index(data, config, split, cache_dir=None)
    in_period = UTC_DAILY.period_mask(data.times, getattr(config.splits, split))
    expected = _reference_per_step(np.isfinite(dynamic).all(-1), np.isfinite(target), in_period, seq_len,
                                   min_len, spin_up)
    assert _as_tuples(index) == expected


def test_run_length_so_far_counts_back_to_the_last_gap() -> None:
    valid = np.array([[1, 1, 0, 1, 1, 1, 0, 0, 1]], dtype=bool)
    assert run_length_so_far(valid).tolist() == [[1, 2, 0, 1, 2, 3, 0, 0, 1]]


def test_real_sequence_index_keeps_short_histories_and_train_stays_in_train(small_nc: Path, data_config) -> None:
    config = data_config(mode="sequence", leads=[1, 2])
    data = load_station_data(small_nc, config)
    train = build_sample_index(data, config, "train")
    in_train = data.grid.period_mask(data.times, config.splits.train)
    first_train, last_train = np.flatnonzero(in_train)[[0, -1]]
    # 5478 training days: ends 29 .. 5475 (lead 2 must stay in the period) for each of 4 stations
    assert len(train) == 4 * (5475 - 29 + 1)
    assert train.start().min() == first_train and (train.end + 2).max() == last_train
    assert np.all(train.length == np.minimum(train.end - first_train + 1, 365))
    # the first 335 ends per station have 30..364 steps: fixed 365-step windows would drop them
    assert int((train.length < 365).sum()) == 4 * 335
    test = build_sample_index(data, config, "test")
    in_test = data.grid.period_mask(data.times, config.splits.test)
    assert in_test[test.end + 1].all() and in_test[test.end + 2].all()
    assert np.all(test.length == 365)  # histories may reach back into the validation period


def test_gappy_real_station_still_contributes_samples(tmp_path: Path, contract_writer, data_config) -> None:
    def punch_gaps(frames):
        frame = frames["01547700"]
        for start in (400, 1000, 1500, 3100, 4200):
            frame.loc[start: start + 9, "temperature_2m_mean"] = np.nan

    path = contract_writer(tmp_path / "gappy.nc", ["01022500", "01547700"], transform=punch_gaps)
    config = data_config(mode="sequence")
    data = load_station_data(path, config)
    index = build_sample_index(data, config, "train")
    gappy = index.station == 1
    assert gappy.sum() > 4000  # variable length: most of the record is still usable
    assert (index.length[gappy] == 365).sum() < gappy.sum() - 1000  # fixed windows would lose these
    ends = index.end[gappy]
    assert not np.isin(ends, np.arange(400, 410)).any()  # no sample ends inside a gap
    per_step = build_sample_index(data, data_config(spin_up=10), "train")
    assert per_step.length.min() >= 30 and (per_step.length < 365).sum() >= 5


def test_index_is_read_from_the_cache_on_a_second_run(small_nc: Path, data_config, tmp_path: Path) -> None:
    config = data_config(mode="sequence")
    data = load_station_data(small_nc, config)
    first = build_sample_index(data, config, "validation")
    cache_files = list(config.cache_dir.glob("sample_index_*.npz"))
    assert len(cache_files) == 1
    # same checksum, different arrays: a cache hit must return the stored index untouched
    emptied = dataclasses.replace(data, dynamic=np.full_like(data.dynamic, np.nan))
    again = build_sample_index(emptied, config, "validation")
    assert _as_tuples(again) == _as_tuples(first) and again.key == first.key
    # a different checksum or a different seq_len is a different cache entry
    assert len(build_sample_index(dataclasses.replace(emptied, checksum="other"), config, "validation")) == 0
    build_sample_index(data, data_config(mode="sequence", seq_len=100), "validation")
    assert len(list(config.cache_dir.glob("sample_index_*.npz"))) == 3


def test_corrupt_cache_file_is_rebuilt(small_nc: Path, data_config) -> None:
    config = data_config()
    data = load_station_data(small_nc, config)
    first = build_sample_index(data, config, "train")
    (cache_file,) = config.cache_dir.glob("sample_index_*.npz")
    cache_file.write_bytes(b"truncated")
    assert _as_tuples(build_sample_index(data, config, "train")) == _as_tuples(first)


def test_per_step_config_has_a_lead_zero_evaluation_index(small_nc: Path, data_config) -> None:
    config = data_config(spin_up=30)
    data = load_station_data(small_nc, config)
    evaluation = build_sample_index(data, config, "test", mode="sequence")
    assert evaluation.leads == (0,) and evaluation.mode == "sequence"
    in_test = data.grid.period_mask(data.times, config.splits.test)
    valid_test_targets = int((np.isfinite(data.target) & in_test).sum())
    assert len(evaluation) == valid_test_targets  # every valid target time of the split, once
    with pytest.raises(ValueError, match="no per-step index"):
        build_sample_index(data, data_config(mode="sequence"), "test", mode="per_step")


def test_an_empty_split_is_one_error_naming_the_dataset_the_split_and_its_period(small_nc: Path, data_config) -> None:
    """A test period after the data's end (2014): the split's index is empty, and requiring its samples says which
    file, which split and which period; a split with samples passes through unchanged."""
    splits = {"train": {"start": "1981-01-01", "end": "1995-12-31"},
              "validation": {"start": "1996-01-01", "end": "2004-12-31"},
              "test": {"start": "2020-01-01", "end": "2020-12-31"}}
    config = data_config(splits=splits, min_len=30)
    data = load_station_data(small_nc, config)
    empty = build_sample_index(data, config, "test", mode="sequence")
    assert len(empty) == 0
    with pytest.raises(InputDataError) as raised:
        require_samples(empty, data, config)
    assert str(raised.value) == (f"{small_nc} (test 2020-01-01..2020-12-31): the test period holds no sample: no "
                                 "window of at least min_len 30 valid steps of the inputs and the target (check "
                                 "data.splits, data.min_len and the gaps of the data)")
    validation = build_sample_index(data, config, "validation")
    assert require_samples(validation, data, config) is validation and len(validation) > 0
