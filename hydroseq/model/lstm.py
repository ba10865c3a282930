"""The LSTM of hydroseq: optional linear embedding, ``nn.LSTM(batch_first=True)``, dropout, linear head.

Two exact ways to run a right-padded batch (``lengths`` sorted in descending order):

* ``packed``: ``pack_padded_sequence(..., enforce_sorted=True)`` with lengths on the CPU, so cuDNN
  skips the padding; the sequence head reads ``hn[-1]``.
* ``padded``: the whole padded batch goes through the LSTM and the sequence head reads the output at
  position ``length - 1`` of each sequence. A one-direction LSTM is causal, so that output equals
  packed ``hn[-1]``. (``hn[-1]`` of an unpacked padded run is the state after the padding: wrong.)
  torch 2.13's CPU backward through a PackedSequence grows with the square of the length
  (pytorch/pytorch#149194), so this is the CPU path; it is also the only one ``torch.onnx.export``
  traces (the exporter's ``LastStepNetwork``, which reads :func:`last_valid_step`).

Per-step mode applies the head to every position; outputs at padded positions are meaningless and
must be masked by the loss (the padded path computes them, the packed path returns zeros there).
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from hydroseq.config import ModelConfig
from hydroseq.model.heads import Head
from hydroseq.model.rollout import ForecastRollout, ForecastRolloutSpec

Mode = Literal["per_step", "sequence"]
SKIP_GATE_INITIAL_BIAS = 3.0  # sigmoid(3) = 0.95: training starts from (almost) the plain skip
LSTMPath = Literal["packed", "padded"]


class LSTMModel(nn.Module):
    """LSTM with a sequence-level or a per-step linear head.

    Parameters
    ----------
    n_features
        Inputs per time step (dynamic and static inputs together).
    n_outputs
        Outputs per sequence (sequence mode, e.g. one per lead time) or per step (per-step mode).
    hidden_size, num_layers, dropout
        As in ``nn.LSTM``; ``dropout`` is also applied to the last layer's output before the head.
    embedding_size
        If given, a linear layer maps the inputs to this size before the LSTM.
    initial_forget_bias
        Initial value of the forget-gate bias (the hidden-hidden bias of every layer; the
        input-hidden forget bias is set to 0). A large value lets the cell state remember from the
        start of training.
    mode
        ``"sequence"``: ``forward`` returns ``[B, n_outputs]``; ``"per_step"``: ``[B, T, n_outputs]``.
    lstm_path
        Default path of ``forward``: ``"packed"`` or ``"padded"`` (see the module docstring).
    skip_columns
        Per-step mode: ``(value, flag)`` input columns of the observed target; when given, every
        output at step t is ``head(h_t) + gate(h_t) * q_t``, where ``q_t`` is the newest observed
        value at or before t (see :func:`newest_observed_value`) and ``gate`` a sigmoid of a linear
        map of ``h_t``, one per output, starting near 1: the network predicts the change from the
        newest observation and learns to lean on it less as it ages (the LSTM sees the flags, so it
        knows how old it is); where the sequence has none, ``q_t`` is 0.
    rollout
        Per-step mode with weather-forecast inputs: the hindcast LSTM reads every input except
        them, and the outputs come from a roll-out over the lead window (:mod:`.rollout`) instead of
        the linear head (the gated skip, if any, is added as before).
    output_head
        What the last layer predicts per output and how it is shaped, shifted by the skip and
        calibrated (:mod:`.heads`; default a point forecast). A quantile head's outputs are
        ``[..., n_outputs, n_quantiles]`` that never cross; the gated skip shifts them all alike.
    """

    quantile_scale: Tensor

    def __init__(self, n_features: int, n_outputs: int, hidden_size: int = 64, num_layers: int = 1,
                 embedding_size: int | None = None, dropout: float = 0.0, initial_forget_bias: float = 3.0,
                 mode: Mode = "per_step", lstm_path: LSTMPath = "padded",
                 skip_columns: tuple[int, int] | None = None, rollout: ForecastRolloutSpec | None = None,
                 output_head: Head | None = None) -> None:
        super().__init__()
        self.output_head = output_head or Head(ModelConfig())
        self.quantiles = self.output_head.levels
        if (skip_columns is not None or rollout is not None or self.quantiles) and mode != "per_step":
            raise ValueError("skip_columns, rollout and quantiles apply to per-step models only")
        self.mode: Mode = mode
        self.n_outputs = n_outputs
        per_output = self.output_head.outputs_per_lead
        self.skip_columns = skip_columns
        self.lstm_path: LSTMPath = lstm_path
        self.hindcast_columns = None if rollout is None else [
            column for column in range(n_features) if not rollout.columns.start <= column < rollout.columns.stop]
        hindcast_features = n_features if self.hindcast_columns is None else len(self.hindcast_columns)
        self.embedding = nn.Linear(hindcast_features, embedding_size) if embedding_size else None
        lstm_inputs = embedding_size or hindcast_features
        self.lstm = nn.LSTM(lstm_inputs, hidden_size, num_layers=num_layers, batch_first=True,
                            dropout=dropout if num_layers > 1 else 0.0)
        self.dropout = nn.Dropout(dropout)
        self.rollout = None if rollout is None else ForecastRollout(rollout, hidden_size, per_output)
        if rollout is not None and len(rollout.leads) != n_outputs:
            raise ValueError(f"the roll-out predicts {len(rollout.leads)} leads, the model {n_outputs} outputs")
        self.head = nn.Linear(hidden_size, n_outputs * per_output) if rollout is None else None
        self.skip_gate = nn.Linear(hidden_size, n_outputs) if skip_columns is not None else None
        if self.skip_gate is not None:
            nn.init.zeros_(self.skip_gate.weight)
            nn.init.constant_(self.skip_gate.bias, SKIP_GATE_INITIAL_BIAS)
        self.set_forget_bias(initial_forget_bias)
        # the spread calibration (ones until fitted); not in the state dict, the checkpoint holds it
        levels = len(self.quantiles) if self.quantiles else 1
        self.register_buffer("quantile_scale", torch.ones(n_outputs, levels), persistent=False)

    def set_forget_bias(self, value: float) -> None:
        """Set the forget-gate bias of every layer to ``value`` (gate order in torch: i, f, g, o)."""
        hidden = self.lstm.hidden_size
        with torch.no_grad():
            for layer in range(self.lstm.num_layers):
                getattr(self.lstm, f"bias_ih_l{layer}")[hidden:2 * hidden].fill_(0.0)
                getattr(self.lstm, f"bias_hh_l{layer}")[hidden:2 * hidden].fill_(value)

    def forward(self, x: Tensor, lengths: Tensor, path: LSTMPath | None = None, last_only: bool = False) -> Tensor:
        """Predict from a right-padded batch ``x [B, T, F]`` with ``lengths [B]`` sorted descending.

        ``last_only`` (per-step mode): only each row's output at its last valid step, ``[B, n_outputs]``,
        with the heads (and the roll-out) applied at that step alone.
        """
        return self.outputs(self.hindcast(x, lengths, path), x, lengths, last_only)

    def hindcast(self, x: Tensor, lengths: Tensor, path: LSTMPath | None = None) -> Tensor:
        """The hindcast LSTM's output (after dropout): ``[B, T, hidden]``, or ``[B, hidden]`` in sequence mode."""
        if self.hindcast_columns is not None:
            x = x[..., self.hindcast_columns]
        if self.embedding is not None:
            x = self.embedding(x)
        features = self._packed(x, lengths) if (path or self.lstm_path) == "packed" else self._padded(x, lengths)
        return self.dropout(features)

    def outputs(self, features: Tensor, inputs: Tensor, lengths: Tensor, last_only: bool = False) -> Tensor:
        """:meth:`forward`'s result from the :meth:`hindcast` ``features`` of ``inputs``."""
        newest = None
        if self.skip_columns is not None:
            value, flag = self.skip_columns
            newest = newest_observed_value(inputs[..., value], inputs[..., flag]).unsqueeze(-1)
        if last_only and self.mode == "per_step":
            features = last_valid_step(features, lengths).unsqueeze(1)
            inputs = last_valid_step(inputs, lengths).unsqueeze(1)
            newest = None if newest is None else last_valid_step(newest, lengths).unsqueeze(1)
        raw = self.rollout(features, inputs) if self.rollout is not None else self._head(features)
        out = self.output_head.shape(raw, self.n_outputs)
        if newest is not None and self.skip_gate is not None:
            out = self.output_head.shift(out, torch.sigmoid(self.skip_gate(features)) * newest.to(out.dtype))
        out = self.output_head.calibrate(out, self.quantile_scale)
        return out.squeeze(1) if last_only and self.mode == "per_step" else out

    def set_quantile_scale(self, scale: Tensor) -> None:
        """Calibrate the spread of the quantiles (``[n_outputs, n_levels]``, :func:`.quantile_head.scale_spread`)."""
        self.quantile_scale.copy_(scale)

    def _head(self, features: Tensor) -> Tensor:
        assert self.head is not None  # built whenever there is no roll-out
        return self.head(features)

    def _packed(self, x: Tensor, lengths: Tensor) -> Tensor:
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=True)
        output, (hn, _) = self.lstm(packed)
        if self.mode == "sequence":
            return hn[-1]
        padded, _ = pad_packed_sequence(output, batch_first=True, total_length=x.shape[1])
        return padded

    def _padded(self, x: Tensor, lengths: Tensor) -> Tensor:
        output, _ = self.lstm(x)
        if self.mode == "sequence":
            return last_valid_step(output, lengths)
        return output


def last_valid_step(output: Tensor, lengths: Tensor) -> Tensor:
    """Each row's entry at position ``length - 1`` of a right-padded ``output [B, T, H]``: ``[B, H]``."""
    last = (lengths.to(output.device) - 1).view(-1, 1, 1).expand(-1, 1, output.shape[2])
    return output.gather(1, last).squeeze(1)


def newest_observed_value(value: Tensor, flag: Tensor) -> Tensor:
    """At every step of ``value [B, T]``, the value of the newest step at or before it whose ``flag`` is
    set (0 where no earlier step of the row has one): a causal forward fill.

    ``torch.cummax`` would say it in one line but has no ONNX translation; this doubles the look-back
    span ``ceil(log2 T)`` times with shifts and ``where``, which export traces as is.
    """
    carried = value * (flag > 0)
    seen = flag > 0
    span = 1
    while span < value.shape[1]:
        carried = torch.where(seen, carried, nn.functional.pad(carried, (span, 0))[:, :-span])
        seen = seen | nn.functional.pad(seen, (span, 0))[:, :-span]
        span *= 2
    return carried
