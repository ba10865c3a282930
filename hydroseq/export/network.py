"""The fixed-length network that is exported: ``x[B, N, F], lengths[B] -> y[B, n_outputs]``."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from hydroseq.model import EnsembleModel, TrainedModel


class LastStepNetwork(nn.Module):
    """A trained model (an :class:`~hydroseq.model.LSTMModel` or an ensemble) read at each sequence's last valid step.

    ``x`` is right-padded to N steps; ``lengths`` says how many leading steps of each row are real.
    The LSTM runs over all N steps (the padded path) and the output at ``length - 1`` is returned.
    A one-direction LSTM is causal, so that output does not see the padding and equals the packed
    training model's ``hn[-1]``: short histories are predicted exactly as in training.

    In ``sequence`` mode the output is the model's ``[B, n_leads]``; in ``per_step`` mode it is the
    per-step head at the last valid step, ``[B, n_outputs]`` (quantile models: ``[B, n_outputs,
    n_levels]``). Lengths must lie in ``1..N``. An ensemble also returns every member's output,
    ``[B, member, ...]`` (the forecast publishes them as realizations); ``output_names`` says what
    the exported graph returns.
    """

    def __init__(self, model: TrainedModel) -> None:
        super().__init__()
        self.model = model
        self.output_names = ("y", "members") if isinstance(model, EnsembleModel) else ("y",)

    def forward(self, x: Tensor, lengths: Tensor) -> Tensor | tuple[Tensor, Tensor]:
        """Outputs at position ``lengths - 1`` of each row of the right-padded batch ``x``."""
        if isinstance(self.model, EnsembleModel):
            members = self.model.member_outputs(x, lengths, path="padded", last_only=True)
            return self.model.combine(members), members.transpose(0, 1)
        return self.model(x, lengths, path="padded", last_only=True)


def reference_prediction(model: TrainedModel, x: Tensor, lengths: Tensor) -> Tensor:
    """What training computes for the same rows: the packed path, rows in any order.

    Sorts by length (the packed path needs descending lengths), runs ``path="packed"`` and puts the
    rows back in their original order. Used to check the exported network against training.
    """
    order = torch.argsort(lengths, descending=True, stable=True)
    with torch.no_grad():
        output = model(x[order], lengths[order], path="packed", last_only=True)
    restored = torch.empty_like(output)
    restored[order] = output
    return restored
