"""A week-ahead model that corrects a base model without weather forecasts, and is that base where it must be.

The base (an :class:`~hydroseq.model.ensemble.EnsembleModel` of per-step quantile LSTMs trained
without weather-forecast inputs) is held frozen inside the network. At every issue step its members
read the history (every input but the forecast columns); their mean hindcast state starts a
:class:`~hydroseq.model.rollout.ForecastRollout` over the lead window that reads the forecast values
and flags and returns, per lead, a shift of the base's median and a log-factor of its spread around
the median (so the quantiles stay ordered). Lead ``l`` is anchored on the base's lead ``min(l, last
base lead)``.

The correction of lead ``l`` is multiplied by that lead's forecast flag and by ``lead_gate[l]``: a
run that is absent, and every lead whose gate is 0, give the base's quantiles exactly. The gate is
chosen on validation with forecast errors held out from training (the experiments set it, it is
saved with the weights), so at the leads where the weather forecast did not help on validation the
model is the base by construction. The correction head starts at zero: training starts from the base.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import torch
from torch import Tensor, nn

from hydroseq.model.ensemble import EnsembleModel
from hydroseq.model.lstm import LSTMModel, LSTMPath, Mode, last_valid_step
from hydroseq.model.quantile_head import scale_spread
from hydroseq.model.rollout import ForecastRollout, ForecastRolloutSpec

MAX_LOG_SPREAD = 2.0  # the spread of a lead may shrink or grow by at most e^2


class BaseCorrectedModel(nn.Module):
    """``forward(x, lengths, path, last_only)`` as :class:`LSTMModel`: ``[B, T, n_leads, n_quantiles]``.

    Parameters
    ----------
    base_members
        The base's members (built for the hindcast columns of ``x``); frozen and kept in evaluation mode.
    rollout
        Where the forecast columns are and which leads to predict.
    base_leads
        The leads the base predicts (its outputs, in order).
    """

    quantile_scale: Tensor
    base_scale: Tensor
    lead_gate: Tensor

    def __init__(self, base_members: Sequence[LSTMModel], rollout: ForecastRolloutSpec,
                 base_leads: Sequence[int], n_features: int) -> None:
        super().__init__()
        quantiles = base_members[0].quantiles
        if quantiles is None:
            raise ValueError("the base of a correction predicts quantiles")
        self.base = EnsembleModel(list(base_members))
        self.base.requires_grad_(False)
        self.quantiles: tuple[float, ...] = quantiles
        self.median = quantiles.index(0.5)
        self.n_outputs = len(rollout.leads)
        self.spec = rollout
        self.hindcast_columns = [column for column in range(n_features)
                                 if not rollout.columns.start <= column < rollout.columns.stop]
        self.anchor = [list(base_leads).index(min(lead, max(base_leads))) for lead in rollout.leads]
        self.correction = ForecastRollout(rollout, base_members[0].lstm.hidden_size, outputs_per_lead=2)
        nn.init.zeros_(self.correction.head.weight)
        nn.init.zeros_(self.correction.head.bias)
        levels = len(quantiles)
        self.register_buffer("base_scale", torch.ones(len(base_leads), levels))  # the base's calibration
        self.register_buffer("lead_gate", torch.ones(self.n_outputs))
        self.register_buffer("quantile_scale", torch.ones(self.n_outputs, levels), persistent=False)

    @property
    def mode(self) -> Mode:
        """Always ``per_step``: an output per lead at every step."""
        return "per_step"

    @property
    def lstm(self) -> nn.LSTM:
        """The base's first member's LSTM (its sizes)."""
        return self.base.lstm

    def train(self, mode: bool = True) -> BaseCorrectedModel:
        """Train the correction; the frozen base stays in evaluation mode (no dropout)."""
        super().train(mode)
        self.base.eval()
        return self

    def forward(self, x: Tensor, lengths: Tensor, path: LSTMPath | None = None, last_only: bool = False) -> Tensor:
        """The corrected quantiles of every lead (``last_only``: at each row's last valid step, ``[B, leads, Q]``)."""
        history = x[..., self.hindcast_columns]
        with torch.no_grad():
            members = [cast(LSTMModel, member) for member in self.base.members]  # ModuleList types them Module
            states = [member.hindcast(history, lengths, path) for member in members]
            outputs = torch.stack([member.outputs(state, history, lengths, last_only)
                                   for member, state in zip(members, states, strict=True)])
            base = scale_spread(outputs.mean(dim=0), self.base_scale, self.median)
            state = torch.stack(states).mean(dim=0)
        inputs = x
        if last_only:
            state = last_valid_step(state, lengths).unsqueeze(1)
            inputs = last_valid_step(x, lengths).unsqueeze(1)
            base = base.unsqueeze(1)
        anchor = base[..., self.anchor, :]                                   # [B, T, leads, Q]
        correction = self.correction(state, inputs).unflatten(-1, (self.n_outputs, 2))
        gate = self.forecast_present(inputs) * self.lead_gate                # [B, T, leads]
        shift = correction[..., 0] * gate
        log_spread = torch.clamp(correction[..., 1], -MAX_LOG_SPREAD, MAX_LOG_SPREAD) * gate
        median = anchor[..., self.median:self.median + 1]
        out = median + shift.unsqueeze(-1) + (anchor - median) * torch.exp(log_spread).unsqueeze(-1)
        out = scale_spread(out, self.quantile_scale, self.median)
        return out.squeeze(1) if last_only else out

    def forecast_present(self, inputs: Tensor) -> Tensor:
        """1 where any forecast input of a lead is present (its flag), else 0: ``[..., leads]``."""
        spec = self.spec
        first_flag = spec.first_column + spec.n_inputs * spec.horizon
        flags = inputs[..., first_flag:first_flag + spec.n_inputs * spec.horizon]
        flags = flags.unflatten(-1, (spec.n_inputs, spec.horizon)).amax(dim=-2)
        return (flags[..., [lead - 1 for lead in spec.leads]] > 0).to(inputs.dtype)

    def set_quantile_scale(self, scale: Tensor) -> None:
        """Calibrate the corrected quantiles' spread (``[n_leads, n_levels]``)."""
        self.quantile_scale.copy_(scale)

    def load_base(self, member_states: Sequence[dict[str, Tensor]], base_scale: Tensor | None) -> None:
        """Copy a trained base's member weights and calibration into the frozen base."""
        if len(member_states) != len(self.base.members):
            raise ValueError(f"the base has {len(member_states)} members, the network {len(self.base.members)}")
        for member, state in zip(self.base.members, member_states, strict=True):
            member.load_state_dict(state)
        if base_scale is not None:
            self.base_scale.copy_(base_scale)
