"""An ensemble of trained LSTMs that predicts their mean: evaluated and exported like one model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import torch
from torch import Tensor, nn

from hydroseq.model.lstm import LSTMModel, LSTMPath, Mode
from hydroseq.model.quantile_head import scale_spread


class EnsembleModel(nn.Module):
    """Members of the same architecture (different seeds); ``forward`` returns the member mean.

    It has the interface of :class:`LSTMModel` (``forward(x, lengths, path)``, ``mode``), so the
    prediction, evaluation and export code treat it as one model; the exported graph holds every
    member's weights.
    """

    quantile_scale: Tensor

    def __init__(self, members: Sequence[nn.Module]) -> None:
        super().__init__()
        if not members:
            raise ValueError("an ensemble needs at least one member")
        if len({member.mode for member in members}) != 1:
            raise ValueError("ensemble members must share one mode")
        self.members = nn.ModuleList(members)
        # the spread calibration of the member mean (ones until fitted); the checkpoint holds it
        self.register_buffer("quantile_scale", torch.ones_like(self.first_member.quantile_scale), persistent=False)

    @property
    def first_member(self) -> LSTMModel:
        """The first member (its architecture is every member's)."""
        return cast(LSTMModel, self.members[0])  # nn.ModuleList types its items as Module

    @property
    def mode(self) -> Mode:
        """The members' mode (``per_step`` or ``sequence``)."""
        return self.first_member.mode

    @property
    def quantiles(self) -> tuple[float, ...] | None:
        """The members' quantile levels (None for point forecasts); the ensemble averages each level."""
        return self.first_member.quantiles

    @property
    def lstm(self) -> nn.LSTM:
        """The first member's LSTM (its sizes are every member's)."""
        return self.first_member.lstm

    def member_outputs(self, x: Tensor, lengths: Tensor, path: LSTMPath | None = None,
                       last_only: bool = False) -> Tensor:
        """Every member's output, stacked on a new first axis ``[member, ...]``."""
        return torch.stack([member(x, lengths, path=path, last_only=last_only) for member in self.members])

    def forward(self, x: Tensor, lengths: Tensor, path: LSTMPath | None = None, last_only: bool = False) -> Tensor:
        """The mean of the members' outputs (``last_only``: see :meth:`LSTMModel.forward`); quantile
        members: the mean of each level, its spread calibrated."""
        return self.combine(self.member_outputs(x, lengths, path, last_only))

    def combine(self, member_outputs: Tensor) -> Tensor:
        """The ensemble's output from :meth:`member_outputs`: their mean (quantiles: per level, calibrated)."""
        mean = member_outputs.mean(dim=0)
        if self.quantiles is None:
            return mean
        return scale_spread(mean, self.quantile_scale, self.quantiles.index(0.5))

    def set_quantile_scale(self, scale: Tensor) -> None:
        """Calibrate the member mean's spread (``[n_outputs, n_levels]``); the members stay as trained."""
        self.quantile_scale.copy_(scale)
