"""Losses: masking and normalisation as specified (sum(se*mask)/mask.sum()), NaN targets skipped."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hydroseq.model.losses import masked_mse, nse_loss, station_target_std


def test_masked_mse_divides_by_valid_count_not_batch_or_length() -> None:
    pred = torch.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 9.0]])
    target = torch.tensor([[0.0, 0.0, 0.0], [1.0, 9.0, 9.0]])
    mask = torch.tensor([[True, True, False], [True, False, False]])
    # valid squared errors: 1, 4 (row 0), 1 (row 1) -> 6 / 3
    assert masked_mse(pred, target, mask).item() == pytest.approx(2.0)


def test_nan_targets_are_masked_and_gradient_stays_finite() -> None:
    pred = torch.tensor([[1.0], [2.0], [5.0]], requires_grad=True)
    target = torch.tensor([[0.0], [float("nan")], [3.0]])
    loss = masked_mse(pred, target)
    assert loss.item() == pytest.approx((1 + 4) / 2)
    loss.backward()
    assert torch.equal(pred.grad, torch.tensor([[1.0], [0.0], [2.0]]))


def test_mask_broadcasts_over_output_axis() -> None:
    pred = torch.ones(2, 3, 2)
    target = torch.zeros(2, 3, 2)
    mask = torch.tensor([[1, 1, 0], [0, 0, 0]])
    assert masked_mse(pred, target, mask).item() == pytest.approx(1.0)


def test_empty_mask_gives_zero_not_nan() -> None:
    pred = torch.ones(2, 4, requires_grad=True)
    loss = masked_mse(pred, torch.zeros(2, 4), torch.zeros(2, 4, dtype=torch.bool))
    loss.backward()
    assert loss.item() == 0.0 and torch.all(pred.grad == 0)


def test_nse_loss_weights_each_sample_by_its_station_std() -> None:
    pred = torch.tensor([[2.0, 2.0], [2.0, 2.0]])
    target = torch.zeros(2, 2)
    std = torch.tensor([0.9, 1.9])
    # se = 4 everywhere; weights 1/(0.9+0.1)^2 = 1, 1/(1.9+0.1)^2 = 0.25 -> (4*2*1 + 4*2*0.25) / 4
    assert nse_loss(pred, target, None, std).item() == pytest.approx(2.5)


def test_station_target_std_ignores_nan_and_short_records() -> None:
    values = np.array([[1.0, 3.0, np.nan], [np.nan, np.nan, np.nan], [5.0, np.nan, np.nan]])
    np.testing.assert_allclose(station_target_std(values), [1.0, 0.0, 0.0])
