"""Training-time augmentation: inputs hidden as a late gauge or a missing weather forecast would hide them."""

from __future__ import annotations

from dataclasses import replace

import torch

from hydroseq.config.train import ForecastInputHiding, ObservedTargetHiding
from hydroseq.dataset.batch import Batch
from hydroseq.dataset.features import FeatureLayout


def hidden_steps(batch_size: int, steps: int, hiding: ObservedTargetHiding, device: torch.device) -> torch.Tensor:
    """Bool ``[B, T]``: single steps, one stretch of 1..``stretch_max_steps`` per chunk, or whole chunks.

    Drawn from torch's default generator on ``device`` (restored on resume, so a resumed run draws
    what an uninterrupted one would). No host sync.
    """
    position = torch.arange(steps, device=device)
    hidden = torch.rand(batch_size, steps, device=device) < hiding.step_rate
    has_stretch = torch.rand(batch_size, 1, device=device) < hiding.stretch_rate
    stretch_end = torch.randint(0, steps, (batch_size, 1), device=device)
    stretch_len = torch.randint(1, hiding.stretch_max_steps + 1, (batch_size, 1), device=device)
    in_stretch = (position <= stretch_end) & (position > stretch_end - stretch_len)
    whole = torch.rand(batch_size, 1, device=device) < hiding.chunk_rate
    return hidden | (has_stretch & in_stretch) | whole


def hide_observed_steps(x: torch.Tensor, layout: FeatureLayout, hidden: torch.Tensor) -> torch.Tensor:
    """A copy of ``x [B, T, F]`` whose observed target reads "not observed" where ``hidden [B, T]``."""
    if layout.lagged_column is None or layout.flag_column is None:
        raise ValueError("hiding the observed target needs a per-step model with a lagged target")
    keep = ~hidden
    x = x.clone()
    x[..., layout.lagged_column] *= keep
    x[..., layout.flag_column] *= keep
    return x


def hide_observed(batch: Batch, layout: FeatureLayout, hiding: ObservedTargetHiding) -> Batch:
    """``batch`` with its observed-target value and flag set to 0 at randomly drawn steps."""
    batch_size, steps = batch.x.shape[:2]
    hidden = hidden_steps(batch_size, steps, hiding, batch.x.device)
    return replace(batch, x=hide_observed_steps(batch.x, layout, hidden))


def hide_forecast(batch: Batch, layout: FeatureLayout, hiding: ForecastInputHiding) -> Batch:
    """``batch`` with every forecast input (values and flags) set to 0 at single issue steps or whole chunks.

    Drawn like :func:`hidden_steps` (torch's default generator on the batch's device, no host sync).
    """
    batch_size, steps = batch.x.shape[:2]
    device = batch.x.device
    hidden = ((torch.rand(batch_size, steps, device=device) < hiding.step_rate)
              | (torch.rand(batch_size, 1, device=device) < hiding.chunk_rate))
    x = batch.x.clone()
    x[..., layout.forecast_columns] *= (~hidden).unsqueeze(-1)
    return replace(batch, x=x)
