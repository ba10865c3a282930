"""The packed and padded paths are the same function: predictions, gradients, and no padding leak."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hydroseq.config import ModelConfig
from hydroseq.export.network import LastStepNetwork
from hydroseq.model import LSTMModel, get_model
from hydroseq.model.lstm import newest_observed_value

LENGTHS = [40, 33, 17, 5]
TOL = 1e-5


@pytest.fixture(scope="module")
def forcing_batch(data_dir: Path) -> tuple[torch.Tensor, torch.Tensor]:
    """Real forcing (P, T, PET) of four basins, z-scored, cut to mixed lengths and right-padded with junk."""
    columns = ["total_precipitation_sum", "temperature_2m_mean", "potential_evaporation_sum"]
    basins = ["01022500", "01547700", "02064000", "03015500"]
    frames = [pd.read_csv(data_dir / "daily_caravan_camels_us" / f"{b}.csv", usecols=columns).to_numpy()
              for b in basins]
    values = np.stack([f[3000:3000 + max(LENGTHS)] for f in frames]).astype(np.float32)
    values = (values - values.mean(axis=(0, 1))) / values.std(axis=(0, 1))
    x = torch.from_numpy(values)
    for row, length in enumerate(LENGTHS):
        x[row, length:] = 1e3  # padding must not influence anything valid
    return x, torch.tensor(LENGTHS, dtype=torch.int64)


def _model(mode: str, seed: int = 0) -> LSTMModel:
    torch.manual_seed(seed)
    config = ModelConfig(hidden_size=12, num_layers=2, embedding_size=6, dropout=0.0)
    return get_model(config, n_features=3, n_outputs=2, mode=mode).double()


def _valid(pred: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    mask = torch.arange(pred.shape[1])[None, :] < lengths[:, None]
    return pred[mask]


@pytest.mark.parametrize("mode", ["sequence", "per_step"])
def test_packed_and_padded_agree_on_predictions_and_gradients(forcing_batch, mode: str) -> None:
    x, lengths = forcing_batch
    model = _model(mode)
    results = {}
    for path in ("packed", "padded"):
        model.zero_grad()
        pred = model(x.double(), lengths, path=path)
        valid = pred if mode == "sequence" else _valid(pred, lengths)
        (valid ** 2).sum().backward()
        grads = [p.grad.clone() for p in model.parameters()]
        results[path] = (valid.detach(), grads)
    torch.testing.assert_close(results["packed"][0], results["padded"][0], atol=TOL, rtol=TOL)
    for grad_packed, grad_padded in zip(results["packed"][1], results["padded"][1], strict=True):
        torch.testing.assert_close(grad_packed, grad_padded, atol=TOL, rtol=TOL)


@pytest.mark.parametrize("path", ["packed", "padded"])
def test_each_sequence_equals_the_sequence_run_alone(forcing_batch, path: str) -> None:
    x, lengths = forcing_batch
    for mode in ("sequence", "per_step"):
        model = _model(mode, seed=1)
        batch_pred = model(x.double(), lengths, path=path)
        for row, length in enumerate(LENGTHS):
            alone = model(x[row:row + 1, :length].double(), torch.tensor([length]), path=path)
            got = batch_pred[row] if mode == "sequence" else batch_pred[row, :length]
            torch.testing.assert_close(got, alone[0], atol=TOL, rtol=TOL)


def test_hn_of_an_unpacked_padded_run_would_be_wrong(forcing_batch) -> None:
    """Guards the reason for the gather: the final state of a padded run has seen the padding."""
    x, lengths = forcing_batch
    model = _model("sequence")
    _, (hn, _) = model.lstm(model.embedding(x.double()))
    correct = model(x.double(), lengths, path="packed")
    assert (model.head(hn[-1]) - correct)[1:].abs().max() > 1e-3


def test_exported_network_matches_model_and_float32_paths_agree(forcing_batch) -> None:
    x, lengths = forcing_batch
    torch.manual_seed(2)
    model = get_model(ModelConfig(hidden_size=8), n_features=3, n_outputs=1, mode="sequence",
                      lstm_path="packed")
    wrapped = LastStepNetwork(model)
    torch.testing.assert_close(wrapped(x, lengths), model(x, lengths), atol=TOL, rtol=TOL)


@pytest.mark.parametrize("path", ["packed", "padded"])
@pytest.mark.parametrize("mode", ["sequence", "per_step"])
def test_bf16_autocast_runs_both_paths_close_to_float32(forcing_batch, path: str, mode: str) -> None:
    """``training.bf16`` wraps the forward in autocast: both paths run in bf16, padding still ignored."""
    x, lengths = forcing_batch
    torch.manual_seed(4)
    model = get_model(ModelConfig(hidden_size=12, embedding_size=6), n_features=3, n_outputs=1, mode=mode)
    reference = model(x, lengths, path=path)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        low = model(x, lengths, path=path)
    assert low.dtype == torch.bfloat16
    if mode == "per_step":
        reference, low = _valid(reference, lengths), _valid(low, lengths)
    torch.testing.assert_close(low.float(), reference, atol=2e-2, rtol=2e-2)


def test_forget_bias_and_output_shapes() -> None:
    model = get_model(ModelConfig(hidden_size=4, num_layers=2, initial_forget_bias=2.5), 3, 2, "per_step")
    assert torch.all(model.lstm.bias_hh_l1[4:8] == 2.5) and torch.all(model.lstm.bias_ih_l0[4:8] == 0)
    x = torch.randn(3, 7, 3)
    assert model(x, torch.tensor([7, 5, 2])).shape == (3, 7, 2)
    model.mode = "sequence"
    assert model(x, torch.tensor([7, 5, 2])).shape == (3, 2)


def _forward_fill_reference(value: np.ndarray, flag: np.ndarray) -> np.ndarray:
    filled = np.zeros_like(value)
    for row in range(value.shape[0]):
        newest = 0.0
        for step in range(value.shape[1]):
            if flag[row, step] > 0:
                newest = value[row, step]
            filled[row, step] = newest
    return filled


@settings(max_examples=60, deadline=None)
@given(steps=st.integers(1, 400), rows=st.integers(1, 3), share=st.floats(0.0, 1.0), seed=st.integers(0, 2**16))
def test_newest_observed_value_is_a_causal_forward_fill(steps: int, rows: int, share: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    value = rng.normal(size=(rows, steps)).astype(np.float32)
    flag = (rng.random((rows, steps)) < share).astype(np.float32)
    filled = newest_observed_value(torch.from_numpy(value), torch.from_numpy(flag)).numpy()
    np.testing.assert_array_equal(filled, _forward_fill_reference(value, flag))


def test_observed_skip_adds_the_newest_observed_value(forcing_batch) -> None:
    """Per-step output with the skip = the same network without it + gate * the newest observed value at
    or before each step (0 before the first), on both paths; the gate starts at sigmoid(3) everywhere."""
    from hydroseq.config import DataConfig

    x, lengths = forcing_batch
    flag = (torch.arange(x.shape[1]) % 3 != 0).float()[None, :, None].expand(x.shape[0], -1, 1)
    x = torch.cat([x[..., :1], x[..., 1:2], flag], dim=-1)  # columns: one forcing, the value, its flag
    data = DataConfig.model_validate({"dynamic_inputs": ["p"], "lagged_target": True, "leads": [1, 2],
                                      "splits": {name: {"start": f"{2000 + i}-01-01", "end": f"{2000 + i}-12-31"}
                                                 for i, name in enumerate(("train", "validation", "test"))}})
    torch.manual_seed(0)
    skipped = get_model(ModelConfig(hidden_size=6, observed_skip=True), 3, 2, "per_step", data=data)
    plain = get_model(ModelConfig(hidden_size=6), 3, 2, "per_step")
    plain.load_state_dict({k: v for k, v in skipped.state_dict().items() if not k.startswith("skip_gate.")})
    for path in ("packed", "padded"):
        with torch.no_grad():
            difference = skipped(x, lengths, path=path) - plain(x, lengths, path=path)
        newest = _forward_fill_reference(x[..., 1].numpy(), x[..., 2].numpy())
        expected = torch.sigmoid(torch.tensor(3.0)) * torch.from_numpy(newest).unsqueeze(-1).expand_as(difference)
        valid = torch.arange(x.shape[1])[None, :] < lengths[:, None]
        torch.testing.assert_close(difference[valid], expected[valid])
    with pytest.raises(ValueError, match="observed_skip needs"):
        get_model(ModelConfig(observed_skip=True), 3, 2, "per_step")
