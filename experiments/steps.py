"""One hydroseq optimisation step, and the hydroseq objects the step benchmarks need.

The step is the training step reduced to what every trainer must do: forward, NSE* loss,
backward, gradient clipping, Adam. The padding and overhead benchmarks time it on fixed batches.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import torch

from hydroseq.config import TrainConfig
from hydroseq.dataset import Batch, SequenceDataset
from hydroseq.model import LSTMModel, get_model, nse_loss


@dataclass
class StepKit:
    """A fresh model and optimiser plus the per-station NSE* weights of the training period."""

    model: LSTMModel
    optimizer: torch.optim.Optimizer
    station_std: torch.Tensor
    grad_clip: float | None


def make_kit(config: TrainConfig, train_set: SequenceDataset, station_std: torch.Tensor,
             lstm_path: str = "padded") -> StepKit:
    """A model initialised from ``config.training.seed`` with Adam at the config's learning rate."""
    torch.manual_seed(config.training.seed)
    n_outputs = len(train_set.index.leads) if train_set.index.mode == "sequence" else 1
    model = get_model(config.model, train_set.n_features, n_outputs, train_set.index.mode, lstm_path=lstm_path)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.training.learning_rate)
    return StepKit(model, optimizer, station_std, config.training.grad_clip)


def train_step(kit: StepKit, batch: Batch) -> float:
    """One optimisation step on ``batch``; returns the loss."""
    prediction = kit.model(batch.x, batch.lengths)  # per-step [B, T, leads], sequence [B, leads]: like y
    loss = nse_loss(prediction, batch.y, batch.mask, kit.station_std[batch.station])
    kit.optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if kit.grad_clip is not None:
        torch.nn.utils.clip_grad_norm_(kit.model.parameters(), kit.grad_clip)
    kit.optimizer.step()
    return float(loss.detach())


def run_steps(kit: StepKit, batches: Iterable[Batch]) -> None:
    """Train on every batch of ``batches`` in order."""
    for batch in batches:
        train_step(kit, batch)
