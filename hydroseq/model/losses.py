"""Training losses. Missing targets are masked out, never filled with a value that feeds the loss.

Every loss takes ``pred`` and ``target`` of the same shape and a ``mask`` (bool or 0/1) of that shape
or of a leading part of it (``[B, T]`` for ``[B, T, O]``); it is broadcast over the trailing axes.
Target entries that are NaN are masked as well. The mean is over valid entries only:
``sum(error * mask) / mask.sum()``, not over the batch size or the padded length. A batch without
any valid entry gives a loss of 0 (with a zero gradient), not NaN.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch
from numpy.typing import ArrayLike
from torch import Tensor

NSE_EPS = 0.1  # NeuralHydrology's default: keeps the weight of near-constant stations finite


def valid_mask(target: Tensor, mask: Tensor | None) -> Tensor:
    """Where ``target`` is finite and ``mask`` (broadcast over trailing axes) is set."""
    valid = ~torch.isnan(target)
    if mask is None:
        return valid
    mask = mask.to(dtype=torch.bool, device=target.device)
    while mask.dim() < target.dim():
        mask = mask.unsqueeze(-1)
    return valid & mask


def _weighted_mean_se(pred: Tensor, target: Tensor, mask: Tensor | None, weight: Tensor | None) -> Tensor:
    valid = valid_mask(target, mask)
    # zero the invalid differences before squaring: NaN * 0 would still poison the gradient
    diff = torch.where(valid, pred - target.nan_to_num(0.0), torch.zeros_like(pred))
    squared = diff.float() ** 2
    if weight is not None:
        squared = squared * weight
    return squared.sum() / valid.sum().clamp_min(1)


def masked_mse(pred: Tensor, target: Tensor, mask: Tensor | None = None) -> Tensor:
    """Per-step MSE: ``sum(squared error * mask) / mask.sum()`` over the valid entries."""
    return _weighted_mean_se(pred, target, mask, None)


def nse_loss(pred: Tensor, target: Tensor, mask: Tensor | None, station_std: Tensor,
             eps: float = NSE_EPS) -> Tensor:
    """NSE* loss (Kratzert et al. 2019, as in NeuralHydrology): squared errors weighted per sample.

    Each sample's squared errors are weighted by ``1 / (std + eps)^2``, where ``std`` is the standard
    deviation of its station's target over the training period, in the units the loss sees (the
    scaled target), so that stations with large flows do not dominate. ``station_std`` has shape
    ``[B]`` and is broadcast over the remaining axes.
    """
    weight = 1.0 / (station_std.float().to(pred.device) + eps) ** 2
    weight = weight.view(-1, *([1] * (pred.dim() - 1)))
    return _weighted_mean_se(pred, target, mask, weight)


STD_BLOCK_STATIONS = 256  # float64 copies of a block, not of every station's training period at once


def station_target_std(target: ArrayLike) -> np.ndarray:
    """Per-station standard deviation of ``target [station, time]`` ignoring NaN (0 if < 2 values).

    Pass only the training period's values: the weights of :func:`nse_loss` must not see the
    evaluation periods.
    """
    target = np.asarray(target)
    std = np.zeros(len(target), dtype=np.float32)
    for start in range(0, len(target), STD_BLOCK_STATIONS):
        values = np.asarray(target[start: start + STD_BLOCK_STATIONS], dtype=np.float64)
        counts = np.sum(np.isfinite(values), axis=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN stations: handled just below
            std[start: start + len(values)] = np.where(counts >= 2, np.nanstd(values, axis=1), 0.0)
    return std
