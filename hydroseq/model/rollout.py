"""The forecast roll-out: a short LSTM over the lead window, started from the hindcast LSTM's state.

As in NeuralHydrology's handoff forecast LSTM: the hindcast LSTM reads the history up to the issue
step t (it never sees a weather forecast); a linear *handoff* turns its output ``h_t`` into the
initial state of a second LSTM, which then steps through leads 1..H reading that lead's forecast
values and "present" flags. The output of lead l is a head applied to the roll-out's state after
step l, so the response to the rain forecast for day t + l is computed by recurrent weights that
step through the days, as the hindcast LSTM does for observed rain.

In per-step training every step t is an issue time: all ``B x T`` roll-outs of one batch run as one
``nn.LSTM`` call over ``H`` steps.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn


@dataclass(frozen=True)
class ForecastRolloutSpec:
    """Where the forecast inputs sit in a feature vector and what the roll-out predicts.

    Attributes
    ----------
    first_column
        Column of the first forecast value (:attr:`hydroseq.dataset.FeatureLayout.forecast_columns`):
        ``n_inputs x horizon`` values (input by input, lead by lead), then as many flags.
    n_inputs, horizon
        Forecast inputs and lead steps 1..horizon.
    leads
        The model's output leads (each in 1..horizon).
    hidden_size
        Size of the roll-out LSTM.
    """

    first_column: int
    n_inputs: int
    horizon: int
    leads: tuple[int, ...]
    hidden_size: int

    @property
    def columns(self) -> slice:
        """The forecast values and flags."""
        return slice(self.first_column, self.first_column + 2 * self.n_inputs * self.horizon)


class ForecastRollout(nn.Module):
    """Handoff + roll-out LSTM + head: ``(h [B, T, Hd], x [B, T, F]) -> [B, T, n_leads * outputs_per_lead]``."""

    def __init__(self, spec: ForecastRolloutSpec, hindcast_size: int, outputs_per_lead: int = 1) -> None:
        super().__init__()
        if not spec.leads or min(spec.leads) < 1 or max(spec.leads) > spec.horizon:
            raise ValueError(f"roll-out leads {spec.leads} must lie in 1..{spec.horizon}")
        self.spec = spec
        self.handoff = nn.Linear(hindcast_size, 2 * spec.hidden_size)
        self.lstm = nn.LSTM(2 * spec.n_inputs, spec.hidden_size, batch_first=True)
        self.head = nn.Linear(spec.hidden_size, outputs_per_lead)

    def forward(self, hindcast: Tensor, x: Tensor) -> Tensor:
        """Outputs ``[B, T, n_leads * outputs_per_lead]`` (lead-major) for every step of ``hindcast [B, T, Hd]``,
        from the forecast columns of ``x``."""
        spec = self.spec
        batch, steps = hindcast.shape[:2]
        # [B, T, 2 (value, flag), input, lead] -> one roll-out sequence per (b, t): [B*T, lead, 2 * input]
        forecast = x[..., spec.columns].reshape(batch, steps, 2, spec.n_inputs, spec.horizon)
        sequence = forecast.permute(0, 1, 4, 2, 3).reshape(batch * steps, spec.horizon, 2 * spec.n_inputs)
        start = self.handoff(hindcast).reshape(batch * steps, 2, spec.hidden_size)
        h0 = torch.tanh(start[:, 0]).unsqueeze(0).contiguous()
        c0 = start[:, 1].unsqueeze(0).contiguous()
        states, _ = self.lstm(sequence, (h0, c0))
        picked = states[:, [lead - 1 for lead in spec.leads]]
        return self.head(picked).reshape(batch, steps, -1)
