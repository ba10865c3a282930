"""Quantile head: never crosses, causal, the same on both LSTM paths; the pinball loss finds quantiles."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from hydroseq.config import ModelConfig
from hydroseq.dataset import FeatureLayout
from hydroseq.model import EnsembleModel, get_model, pinball_loss
from hydroseq.model.quantile_head import ordered_quantiles
from tests.fixtures import per_step_forecast_data_config

LEVELS = (0.05, 0.25, 0.5, 0.75, 0.95)


@given(arrays(np.float64, (6, len(LEVELS)), elements=st.floats(-30, 30)), st.integers(0, len(LEVELS) - 1))
@settings(max_examples=60, deadline=None)
def test_ordered_quantiles_never_decrease_and_keep_the_median(raw: np.ndarray, median_index: int) -> None:
    out = ordered_quantiles(torch.from_numpy(raw), median_index).numpy()
    assert np.all(np.diff(out, axis=-1) >= 0)
    np.testing.assert_array_equal(out[:, median_index], raw[:, median_index])


def test_minimising_the_pinball_loss_of_a_constant_finds_the_sample_quantiles() -> None:
    torch.manual_seed(0)
    target = torch.distributions.Gamma(2.0, 1.0).sample((4000,)).view(1, 4000)
    levels = torch.tensor(LEVELS)
    constant = torch.zeros(len(LEVELS), requires_grad=True)
    optimiser = torch.optim.Adam([constant], lr=0.05)
    for _ in range(1500):
        optimiser.zero_grad()
        pinball_loss(constant.expand(1, 4000, -1), target, None, levels).backward()
        optimiser.step()
    expected = np.quantile(target.numpy(), LEVELS)
    np.testing.assert_allclose(constant.detach().numpy(), expected, atol=0.05)


def test_pinball_loss_ignores_masked_and_missing_targets() -> None:
    pred = torch.zeros(2, 3, len(LEVELS))
    target = torch.tensor([[1.0, float("nan"), 1.0], [100.0, 1.0, 1.0]])
    mask = torch.tensor([[True, True, True], [False, True, True]])
    loss = pinball_loss(pred, target, mask, torch.tensor(LEVELS))
    expected = np.mean([max(level * 1.0, (level - 1) * 1.0) for level in LEVELS])  # every valid error is 1
    assert loss.item() == pytest.approx(expected)


@pytest.fixture(scope="module")
def setup():
    data = per_step_forecast_data_config()
    layout = FeatureLayout.from_config(data)
    torch.manual_seed(0)
    config = ModelConfig(hidden_size=8, observed_skip=True, quantiles=list(LEVELS))
    model = get_model(config, len(layout.names), 3, "per_step", data=data).double().eval()
    x = torch.randn(4, 12, len(layout.names), dtype=torch.float64)
    x[..., layout.flag_column] = (x[..., layout.flag_column] > 0).double()
    return model, x, torch.tensor([12, 10, 7, 3]), data


def test_outputs_are_lead_by_level_and_ordered_on_both_paths(setup) -> None:
    model, x, lengths, data = setup
    with torch.no_grad():
        padded, packed = model(x, lengths, path="padded"), model(x, lengths, path="packed")
        last = model(x, lengths, path="padded", last_only=True)
    assert padded.shape == (4, 12, 3, len(LEVELS)) and last.shape == (4, 3, len(LEVELS))
    valid = torch.arange(12)[None, :] < lengths[:, None]
    torch.testing.assert_close(padded[valid], packed[valid])
    torch.testing.assert_close(last, padded[torch.arange(4), lengths - 1])
    assert torch.all(padded.diff(dim=-1) >= 0)


def test_an_input_changed_after_t_never_moves_a_quantile_at_t(setup) -> None:
    model, x, lengths, data = setup
    changed = x.clone()
    changed[:, 6:] += torch.randn_like(changed[:, 6:]) * 3
    with torch.no_grad():
        before, after = model(x, lengths, path="padded"), model(changed, lengths, path="padded")
    assert torch.equal(before[:, :6], after[:, :6])
    assert (before[:, 6:] - after[:, 6:]).abs().max() > 1e-6


def test_an_ensemble_of_quantile_models_averages_each_level_and_stays_ordered(setup) -> None:
    model, x, lengths, data = setup
    other = get_model(ModelConfig(hidden_size=8, observed_skip=True, quantiles=list(LEVELS)), x.shape[-1], 3,
                      "per_step", data=data).double().eval()
    ensemble = EnsembleModel([model, other])
    with torch.no_grad():
        mean = ensemble(x, lengths, path="padded")
        expected = (model(x, lengths, path="padded") + other(x, lengths, path="padded")) / 2
    torch.testing.assert_close(mean, expected)
    assert ensemble.quantiles == LEVELS and torch.all(mean.diff(dim=-1) >= 0)
