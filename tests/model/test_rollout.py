"""The forecast roll-out: causal in time and in lead, the same on both LSTM paths, exported as trained."""

from __future__ import annotations

import pytest
import torch

from hydroseq.config import DataConfig, ModelConfig
from hydroseq.dataset import FeatureLayout
from hydroseq.model import get_model
from tests.fixtures import per_step_forecast_data_config

N_DYNAMIC, N_FORECAST, HORIZON = 2, 2, 3


@pytest.fixture(scope="module")
def setup():
    """A per-step model with 2 forecast inputs over 3 leads, the gated skip and a roll-out; a batch."""
    data = per_step_forecast_data_config(
        forecast_inputs=[{"variable": "p_fc", "source": "ingested"}, {"variable": "t", "source": "perfect"}])
    layout = FeatureLayout.from_config(data)
    torch.manual_seed(0)
    model = get_model(ModelConfig(hidden_size=8, observed_skip=True, forecast_rollout=True, forecast_hidden_size=6),
                      len(layout.names), 3, "per_step", data=data).double().eval()
    x = torch.randn(4, 12, len(layout.names), dtype=torch.float64)
    x[..., layout.flag_column] = (x[..., layout.flag_column] > 0).double()
    lengths = torch.tensor([12, 10, 7, 3])
    return model, layout, x, lengths


def test_the_hindcast_lstm_never_reads_a_forecast_so_it_moves_only_its_own_issue_step(setup) -> None:
    model, layout, x, lengths = setup
    changed = x.clone()
    t = 4
    changed[:, t, layout.forecast_columns] += 5.0
    with torch.no_grad():
        before, after = model(x, lengths, path="padded"), model(changed, lengths, path="padded")
    moved = (before - after).abs().amax(dim=(0, 2))
    assert moved[t] > 1e-6 and torch.equal(moved[torch.arange(12) != t], torch.zeros(11, dtype=moved.dtype))


@pytest.mark.parametrize("lead", [1, 2, 3])
def test_a_lead_never_reads_the_forecast_of_a_later_lead(setup, lead: int) -> None:
    """The forecast of lead ``lead`` (values and flags of every input) changed: earlier leads' outputs
    are bit-identical, that lead's output moves."""
    model, layout, x, lengths = setup
    columns = [layout.names.index(f"{name}_forecast_lead{lead}{suffix}")
               for name in ("p_fc", "t") for suffix in ("", "_present")]
    changed = x.clone()
    changed[..., columns] += 3.0
    with torch.no_grad():
        before, after = model(x, lengths, path="padded"), model(changed, lengths, path="padded")
    assert torch.equal(before[..., : lead - 1], after[..., : lead - 1])
    assert (before[..., lead - 1] - after[..., lead - 1]).abs().max() > 1e-6


def test_packed_and_padded_paths_agree_at_valid_steps(setup) -> None:
    model, _, x, lengths = setup
    with torch.no_grad():
        packed, padded = model(x, lengths, path="packed"), model(x, lengths, path="padded")
    for row, length in enumerate(lengths.tolist()):
        torch.testing.assert_close(packed[row, :length], padded[row, :length], rtol=0, atol=1e-12)


def test_a_rollout_needs_forecast_inputs() -> None:
    data = DataConfig.model_validate({
        "dynamic_inputs": ["p"], "target": "q", "leads": [1], "lagged_target": True,
        "splits": {"train": {"start": "1990-01-01", "end": "1990-12-31"},
                   "validation": {"start": "1991-01-01", "end": "1991-12-31"},
                   "test": {"start": "1992-01-01", "end": "1992-12-31"}}})
    with pytest.raises(ValueError, match="forecast_rollout needs data.forecast_inputs"):
        get_model(ModelConfig(forecast_rollout=True), 3, 1, "per_step", data=data)


@pytest.mark.parametrize("path", ["packed", "padded"])
def test_last_only_equals_the_full_output_read_at_the_last_valid_step(setup, path: str) -> None:
    """What export and the late-gauge evaluation call: the heads at the last step alone."""
    model, _, x, lengths = setup
    with torch.no_grad():
        full, last = model(x, lengths, path=path), model(x, lengths, path=path, last_only=True)
    torch.testing.assert_close(last, full[torch.arange(len(lengths)), lengths - 1], rtol=0, atol=1e-12)
