"""Hiding the observed discharge: in training (random steps, stretches, chunks) and in late-gauge scores."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import torch

from hydroseq.config import DataConfig, ModelConfig
from hydroseq.config.train import ObservedTargetHiding
from hydroseq.dataset import FeatureLayout, Scalers, load_station_data
from hydroseq.dataset.batch import Batch
from hydroseq.model import get_model
from hydroseq.training.augment import hidden_steps, hide_observed
from hydroseq.training.predict import ALWAYS_HIDDEN, predict_split

LAYOUT = FeatureLayout(("p", "t"), ("area",), "q", lagged_target=True, observed_flag=True)


def _batch(rows: int = 64, steps: int = 200) -> Batch:
    x = torch.rand(rows, steps, len(LAYOUT.names)) + 0.5
    x[..., LAYOUT.flag_column] = 1.0
    lengths = torch.full((rows,), steps, dtype=torch.int64)
    zeros = torch.zeros(rows, steps, 1)
    return Batch(x=x, lengths=lengths, y=zeros, mask=zeros.bool(), station=torch.zeros(rows, dtype=torch.int64),
                 end=torch.zeros(rows, dtype=torch.int64), valid_steps=rows * steps)


def test_hidden_steps_read_as_missing_and_nothing_else_changes() -> None:
    torch.manual_seed(0)
    batch = _batch()
    hidden = hide_observed(batch, LAYOUT, ObservedTargetHiding(step_rate=0.1, stretch_rate=0.5, chunk_rate=0.1))
    flag = hidden.x[..., LAYOUT.flag_column]
    value = hidden.x[..., LAYOUT.lagged_column]
    assert set(flag.unique().tolist()) == {0.0, 1.0}
    assert torch.equal(flag == 0, value == 0)  # value and flag are hidden together
    others = [i for i in range(len(LAYOUT.names)) if i not in (LAYOUT.flag_column, LAYOUT.lagged_column)]
    assert torch.equal(hidden.x[..., others], batch.x[..., others])
    assert (batch.x[..., LAYOUT.flag_column] == 1).all()  # the input batch is not modified


def test_hiding_rates_and_stretch_lengths() -> None:
    torch.manual_seed(1)
    none = hidden_steps(500, 100, ObservedTargetHiding(step_rate=0, stretch_rate=0, chunk_rate=0), torch.device("cpu"))
    assert not none.any()
    every = hidden_steps(50, 100, ObservedTargetHiding(step_rate=0, stretch_rate=0, chunk_rate=1), torch.device("cpu"))
    assert every.all()
    steps = hidden_steps(2000, 100, ObservedTargetHiding(step_rate=0.2, stretch_rate=0, chunk_rate=0),
                         torch.device("cpu"))
    assert abs(steps.float().mean().item() - 0.2) < 0.01
    stretches = hidden_steps(2000, 100, ObservedTargetHiding(step_rate=0, stretch_rate=1, stretch_max_steps=10,
                                                             chunk_rate=0), torch.device("cpu"))
    per_row = stretches.sum(dim=1)
    assert per_row.min() >= 1 and per_row.max() <= 10  # one contiguous stretch of 1..10 steps per chunk
    changes = (stretches[:, 1:] != stretches[:, :-1]).sum(dim=1) + stretches[:, 0].long() + stretches[:, -1].long()
    assert (changes == 2).all()


def test_same_seed_same_hiding() -> None:
    hiding = ObservedTargetHiding()
    torch.manual_seed(5)
    first = hidden_steps(8, 50, hiding, torch.device("cpu"))
    torch.manual_seed(5)
    assert torch.equal(first, hidden_steps(8, 50, hiding, torch.device("cpu")))


def _late_gauge_setup(small_nc: Path, make_config, tmp_path: Path):
    tiny = make_config(tmp_path, small_nc)
    config = DataConfig.model_validate({**tiny.data.model_dump(), "leads": [1, 2], "lagged_target": True,
                                        "seq_len": 40})
    data = load_station_data(small_nc, config)
    torch.manual_seed(0)
    model = get_model(ModelConfig(hidden_size=8), len(FeatureLayout.from_config(config).names), 2, "per_step")
    return config, data, Scalers.fit(data, config), model


def test_always_hidden_scores_never_read_the_observed_discharge(small_nc: Path, make_config, tmp_path: Path) -> None:
    config, data, scalers, model = _late_gauge_setup(small_nc, make_config, tmp_path)
    cpu = torch.device("cpu")
    changed = dataclasses.replace(data, target=data.target * np.float32(1.7))
    hidden = [predict_split(model, d, scalers, config, "test", cpu, hide_last=ALWAYS_HIDDEN) for d in (data, changed)]
    np.testing.assert_array_equal(hidden[0].sim, hidden[1].sim)
    assert np.isfinite(hidden[0].sim).any()
    plain = [predict_split(model, d, scalers, config, "test", cpu) for d in (data, changed)]
    assert not np.array_equal(plain[0].sim, plain[1].sim, equal_nan=True)  # control: the model does read it


def test_hidden_last_k_ignores_exactly_the_last_k_observations(small_nc: Path, make_config, tmp_path: Path) -> None:
    """Q changed at step tau: issue steps tau..tau+k-1 do not move, issue step tau+k does."""
    config, data, scalers, model = _late_gauge_setup(small_nc, make_config, tmp_path)
    k, cpu = 3, torch.device("cpu")
    base = predict_split(model, data, scalers, config, "test", cpu, hide_last=k)
    tau = int(np.flatnonzero(base.in_split)[200])
    target = data.target.copy()
    target[:, tau] = target[:, tau] * 5.0 + 1.0
    moved = predict_split(model, dataclasses.replace(data, target=target), scalers, config, "test", cpu, hide_last=k)
    first = int(np.flatnonzero(base.in_split)[0])
    for row, lead in enumerate(base.leads):
        unmoved = [tau + offset + lead - first for offset in range(k)]  # valid times of issues tau..tau+k-1
        np.testing.assert_array_equal(base.sim[row][:, unmoved], moved.sim[row][:, unmoved])
        later = tau + k + lead - first  # issue tau+k sees tau as its newest observation
        assert not np.array_equal(base.sim[row][:, later], moved.sim[row][:, later])
