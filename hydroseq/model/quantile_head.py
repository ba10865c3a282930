"""Quantile outputs that never cross, and the pinball loss that trains them.

The head gives ``K`` raw numbers per lead. The one at the median's index is the median itself; the
others are distances to it, made positive with ``softplus`` and summed outwards, so every quantile
is at or above the one below it whatever the weights (no sorting, no crossing penalty), and a shift
of all of them (the gated skip) keeps the order.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.nn import functional

from hydroseq.model.losses import NSE_EPS, valid_mask


def ordered_quantiles(raw: Tensor, median_index: int) -> Tensor:
    """Non-decreasing quantiles ``[..., K]`` from raw head outputs ``[..., K]``.

    ``raw[..., median_index]`` is the median; ``raw[..., k]`` for ``k`` above it is the softplus
    distance from quantile ``k - 1`` to quantile ``k``, and below it from ``k + 1`` down to ``k``.
    """
    median = raw[..., median_index:median_index + 1]
    above = torch.cumsum(functional.softplus(raw[..., median_index + 1:]), dim=-1)
    below = torch.cumsum(functional.softplus(raw[..., :median_index]).flip(-1), dim=-1).flip(-1)
    return torch.cat([median - below, median, median + above], dim=-1)


def scale_spread(quantiles: Tensor, scale: Tensor, median_index: int) -> Tensor:
    """``median + scale * (quantile - median)`` for ``quantiles [..., n_outputs, K]`` and ``scale [n_outputs, K]``.

    A calibration fitted after training (:mod:`hydroseq.training.calibration`); with ``scale``
    non-decreasing outwards from the median the quantiles stay ordered.
    """
    median = quantiles[..., median_index:median_index + 1]
    return median + scale.to(quantiles.dtype) * (quantiles - median)


def pinball_loss(pred: Tensor, target: Tensor, mask: Tensor | None, levels: Tensor,
                 station_std: Tensor | None = None, eps: float = NSE_EPS) -> Tensor:
    """Mean quantile (pinball) loss of ``pred [..., K]`` for ``target [...]`` at ``levels [K]``.

    For level ``tau`` and error ``e = target - pred`` the loss is ``max(tau * e, (tau - 1) * e)``;
    its minimiser over a distribution is that distribution's ``tau`` quantile. With ``station_std``
    (``[B]``, the training-period std of each sample's station in scaled units) every sample is
    weighted by ``1 / (std + eps)``, the linear counterpart of the NSE* weights, so that stations
    with large flows do not dominate. The mean is over the valid (target, mask) entries and the levels.
    """
    valid = valid_mask(target, mask)
    error = torch.where(valid.unsqueeze(-1), target.nan_to_num(0.0).unsqueeze(-1) - pred, torch.zeros_like(pred))
    levels = levels.to(device=pred.device, dtype=torch.float32)
    loss = torch.maximum(levels * error.float(), (levels - 1.0) * error.float())
    if station_std is not None:
        weight = 1.0 / (station_std.float().to(pred.device) + eps)
        loss = loss * weight.view(-1, *([1] * (pred.dim() - 1)))
    return loss.sum() / (valid.sum().clamp_min(1) * pred.shape[-1])
