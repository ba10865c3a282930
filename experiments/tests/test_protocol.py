"""Both tools get the same experiment: NeuralHydrology's config and hydroseq's config agree."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from experiments.hydroseq_side import hydroseq_config
from experiments.nh.config import nh_config, nh_date
from experiments.protocol import HYDROSEQ_PER_STEP_CONFIG, full_protocol, quick_protocol
from hydroseq.config import TrainConfig, load_config


@pytest.mark.parametrize("make_protocol", [full_protocol, quick_protocol])
@pytest.mark.parametrize("mode", ["per_step", "sequence", "sequence_bf16"])
def test_nh_and_hydroseq_share_every_fixed_setting(make_protocol, mode: str, tmp_path: Path) -> None:
    protocol = make_protocol()
    nh = nh_config(protocol, data_dir=tmp_path, basin_file=tmp_path / "basins.txt", run_dir=tmp_path)
    ours = hydroseq_config(protocol, mode, tmp_path / "data.nc", tmp_path)
    assert nh["dynamic_inputs"] == ours.data.dynamic_inputs
    assert nh["static_attributes"] == ours.data.static_inputs
    assert nh["target_variables"] == [ours.data.target]
    assert nh["hidden_size"] == ours.model.hidden_size
    assert nh["batch_size"] == ours.batching.batch_size
    assert nh["seq_length"] == ours.data.seq_len
    assert nh["loss"] == "NSE" and ours.training.loss == "nse"
    assert nh["device"] == "cpu" and ours.training.device == "cpu"
    assert ours.training.threads == protocol.threads
    assert ours.data.stations == list(protocol.basins)
    assert not ours.data.lagged_target  # NeuralHydrology gets no observed streamflow as input either
    for period in ("train", "validation", "test"):
        span = getattr(ours.data.splits, period)
        assert nh[f"{period}_start_date"] == nh_date(span.start)
        assert nh[f"{period}_end_date"] == nh_date(span.end)


def test_the_bf16_mode_is_the_sequence_mode_with_autocast_only(tmp_path: Path) -> None:
    sequence = hydroseq_config(full_protocol(), "sequence", tmp_path / "data.nc", tmp_path).model_dump()
    bf16 = hydroseq_config(full_protocol(), "sequence_bf16", tmp_path / "data.nc", tmp_path).model_dump()
    assert not sequence["training"]["bf16"] and bf16["training"]["bf16"]
    bf16["training"]["bf16"] = False
    for section in ("data", "training", "tracking"):  # run folders are named after the mode
        for config in (sequence, bf16):
            config[section] = {key: value for key, value in config[section].items()
                               if not ("dir" in key or "uri" in key or "root" in key or key == "experiment")}
    assert bf16 == sequence


def test_static_attributes_follow_hydroseqs_per_step_config() -> None:
    statics = load_config(HYDROSEQ_PER_STEP_CONFIG, TrainConfig).data.static_inputs
    assert list(full_protocol().static_inputs) == statics


def test_full_protocol_is_the_issue_split_over_all_basins() -> None:
    protocol = full_protocol()
    assert len(protocol.basins) == 31
    assert (protocol.train.start, protocol.train.end) == (dt.date(1981, 10, 1), dt.date(2001, 9, 30))
    assert (protocol.validation.start, protocol.validation.end) == (dt.date(2001, 10, 1), dt.date(2005, 9, 30))
    assert (protocol.test.start, protocol.test.end) == (dt.date(2005, 10, 1), dt.date(2014, 9, 30))


def test_nh_date_format() -> None:
    assert nh_date(dt.date(1981, 10, 1)) == "01/10/1981"


def test_spread_picks_distinct_basins_from_both_ends() -> None:
    from experiments.compare import spread

    basins = full_protocol().basins
    chosen = spread(basins, 8)
    assert len(set(chosen)) == 8 and chosen[0] == basins[0] and chosen[-1] == basins[-1]
    assert spread(basins, 100) == basins
