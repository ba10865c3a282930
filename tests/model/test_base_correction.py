"""A correction of a base model: the base itself wherever the forecast is absent or a lead's gate is off,
causal, the base frozen, the same on both LSTM paths and at the last step alone."""

from __future__ import annotations

import pytest
import torch

from hydroseq.config import ModelConfig
from hydroseq.dataset import FeatureLayout
from hydroseq.model import BaseCorrectedModel, EnsembleModel, get_model
from tests.fixtures import per_step_forecast_data_config

QUANTILES = [0.1, 0.5, 0.9]
LEADS = [1, 2, 3, 4, 5]


@pytest.fixture(scope="module")
def setup():
    """A correction of a 2-member base of leads 1-2 over leads 1-5 (random, non-zero correction weights)."""
    data = per_step_forecast_data_config(leads=LEADS, forecast_inputs=[{"variable": "p_fc", "source": "ingested"},
                                                                       {"variable": "t", "source": "perfect"}])
    layout = FeatureLayout.from_config(data)
    config = ModelConfig(hidden_size=8, observed_skip=True, forecast_rollout=True, forecast_hidden_size=6,
                         quantiles=QUANTILES, base_correction={"base_leads": [1, 2], "base_members": 2})
    torch.manual_seed(0)
    model = get_model(config, len(layout.names), len(LEADS), "per_step", data=data)
    assert isinstance(model, BaseCorrectedModel)
    for parameter in model.correction.head.parameters():  # trained: not the zero start
        torch.nn.init.normal_(parameter, std=0.5)
    model.base_scale.copy_(torch.tensor([[1.2, 1.0, 0.8], [1.1, 1.0, 1.3]]))
    model = model.double().eval()
    x = torch.randn(4, 12, len(layout.names), dtype=torch.float64)
    x[..., layout.flag_column] = (x[..., layout.flag_column] > 0).double()
    flags = slice(layout.forecast_columns.start + 2 * 5, layout.forecast_columns.stop)
    x[..., flags] = 1.0
    lengths = torch.tensor([12, 10, 7, 3])
    return model, layout, x, lengths, flags


def _base(model: BaseCorrectedModel, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """The base ensemble on its own (its calibration applied), anchored as the correction anchors it."""
    history = x[..., model.hindcast_columns]
    base = EnsembleModel(list(model.base.members)).double().eval()
    base.set_quantile_scale(model.base_scale)
    with torch.no_grad():
        out = base(history, lengths, path="padded")
    return out[..., [0, 1, 1, 1, 1], :]


def test_a_gate_of_zero_gives_the_base_exactly_and_one_corrects(setup) -> None:
    model, _, x, lengths, _ = setup
    with torch.no_grad():
        corrected = model(x, lengths, path="padded")
        model.lead_gate.copy_(torch.tensor([1.0, 0.0, 1.0, 0.0, 0.0]))
        gated = model(x, lengths, path="padded")
        model.lead_gate.fill_(1.0)
    base = _base(model, x, lengths)
    valid = torch.arange(12)[None, :] < lengths[:, None]
    assert torch.equal(gated[:, :, [1, 3, 4]][valid], base[:, :, [1, 3, 4]][valid])
    assert torch.equal(gated[:, :, [0, 2]], corrected[:, :, [0, 2]])
    assert (corrected[valid] - base[valid]).abs().amax() > 1e-3


def test_an_absent_forecast_gives_the_base_at_that_lead(setup) -> None:
    model, layout, x, lengths, flags = setup
    absent = x.clone()
    first = flags.start
    for variable in range(2):  # lead 2 absent for both inputs, at every step
        absent[..., first + variable * 5 + 1] = 0.0
    with torch.no_grad():
        out = model(absent, lengths, path="padded")
    valid = torch.arange(12)[None, :] < lengths[:, None]
    assert torch.equal(out[:, :, 1][valid], _base(model, x, lengths)[:, :, 1][valid])


def test_a_fresh_correction_starts_from_the_base(setup) -> None:
    model, layout, x, lengths, _ = setup
    fresh = get_model(ModelConfig(hidden_size=8, observed_skip=True, forecast_rollout=True, forecast_hidden_size=6,
                                  quantiles=QUANTILES, base_correction={"base_leads": [1, 2], "base_members": 2}),
                      len(layout.names), len(LEADS), "per_step", data=per_step_forecast_data_config(
                          leads=LEADS, forecast_inputs=[{"variable": "p_fc", "source": "ingested"},
                                                        {"variable": "t", "source": "perfect"}])).double().eval()
    fresh.load_base([member.state_dict() for member in model.base.members], model.base_scale.float())
    with torch.no_grad():
        out = fresh(x, lengths, path="padded")
    valid = torch.arange(12)[None, :] < lengths[:, None]
    torch.testing.assert_close(out[valid], _base(model, x, lengths)[valid], rtol=0, atol=1e-12)


def test_the_future_never_moves_an_earlier_step(setup) -> None:
    model, layout, x, lengths, _ = setup
    changed = x.clone()
    t = 6
    changed[:, t:, :] += 3.0
    with torch.no_grad():
        before, after = model(x, lengths, path="padded"), model(changed, lengths, path="padded")
    assert torch.equal(before[:, :t], after[:, :t])
    assert (before[0, t:] - after[0, t:]).abs().amax() > 1e-6


def test_the_quantiles_stay_ordered_and_both_paths_and_the_last_step_agree(setup) -> None:
    model, _, x, lengths, _ = setup
    with torch.no_grad():
        padded, packed = model(x, lengths, path="padded"), model(x, lengths, path="packed")
        last = model(x, lengths, path="padded", last_only=True)
    valid = torch.arange(12)[None, :] < lengths[:, None]
    torch.testing.assert_close(padded[valid], packed[valid])
    assert (padded[valid].diff(dim=-1) >= 0).all()
    torch.testing.assert_close(last, padded[torch.arange(4), lengths - 1])


def test_training_moves_the_correction_only(setup) -> None:
    model, _, x, lengths, _ = setup
    before = {name: value.clone() for name, value in model.base.state_dict().items()}
    model.train()
    assert not model.base.training and all(not p.requires_grad for p in model.base.parameters())
    out = model(x, lengths, path="padded")
    out.sum().backward()
    assert model.correction.head.weight.grad is not None
    model.eval()
    assert all(torch.equal(before[name], value) for name, value in model.base.state_dict().items())


def test_a_base_without_quantiles_is_refused() -> None:
    data = per_step_forecast_data_config(forecast_inputs=[{"variable": "p_fc", "source": "ingested"}])
    layout = FeatureLayout.from_config(data)
    with pytest.raises(ValueError, match="predicts quantiles"):
        get_model(ModelConfig(hidden_size=4, forecast_rollout=True, base_correction={"base_leads": [1],
                                                                                      "base_members": 1}),
                  len(layout.names), 3, "per_step", data=data)
