"""An LSTM that ``torch.export`` traces in constant time, for the ONNX export.

``torch.export`` keeps ``aten.lstm`` as one node but infers its output shapes by running its Python
decomposition on fake tensors, one LSTM cell per time step: about 0.05 s per step, twice per export
(the trace and the ONNX exporter's own pass), so a 365-step model spent most of a minute there and
a 60-step test model 5 of its 11 export seconds (measured with ``cProfile``). The custom operator
``hydroseq::lstm`` computes exactly ``aten.lstm`` but declares its output shapes directly, and the
ONNX exporter translates it with onnxscript's own ``aten::lstm.input`` function (one ONNX ``LSTM``
node, as before). Only the exported copy of a model uses it (:func:`with_traceable_lstms`); the
export's parity check compares the result with the packed training model.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import TypeVar

import torch
from torch import Tensor, nn

ModuleT = TypeVar("ModuleT", bound=nn.Module)


@torch.library.custom_op("hydroseq::lstm", mutates_args=())
def lstm(x: Tensor, h0: Tensor, c0: Tensor, weights: Sequence[Tensor], has_biases: bool, num_layers: int,
         bidirectional: bool, batch_first: bool) -> tuple[Tensor, Tensor, Tensor]:
    """``aten.lstm`` in evaluation mode (no dropout): ``(output, h_n, c_n)``."""
    output, h_n, c_n = torch.ops.aten.lstm.input(x, [h0, c0], list(weights), has_biases, num_layers, 0.0, False,
                                                 bidirectional, batch_first)
    return output, h_n, c_n


@lstm.register_fake
def _lstm_shapes(x: Tensor, h0: Tensor, c0: Tensor, weights: Sequence[Tensor], has_biases: bool, num_layers: int,
                 bidirectional: bool, batch_first: bool) -> tuple[Tensor, Tensor, Tensor]:
    directions = 2 if bidirectional else 1
    batch, steps = (x.shape[0], x.shape[1]) if batch_first else (x.shape[1], x.shape[0])
    features = directions * h0.shape[-1]
    output = x.new_empty((batch, steps, features) if batch_first else (steps, batch, features))
    return output, h0.new_empty(h0.shape), c0.new_empty(c0.shape)


class TraceableLSTM(nn.Module):
    """An ``nn.LSTM`` in evaluation mode called through ``hydroseq::lstm``; same parameters, same results."""

    def __init__(self, module: nn.LSTM) -> None:
        super().__init__()
        if module.proj_size:
            raise ValueError("an LSTM with proj_size cannot be exported")
        self.module = module

    def forward(self, x: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """As ``nn.LSTM.forward`` for a padded (not packed) batch."""
        module = self.module
        if hx is None:
            batch = x.shape[0] if module.batch_first else x.shape[1]
            directions = 2 if module.bidirectional else 1
            zeros = x.new_zeros(module.num_layers * directions, batch, module.hidden_size)
            hx = (zeros, zeros)
        output, h_n, c_n = lstm(x, hx[0], hx[1], module._flat_weights, module.bias, module.num_layers,
                                module.bidirectional, module.batch_first)
        return output, (h_n, c_n)


def with_traceable_lstms(model: ModuleT) -> ModuleT:
    """A copy of ``model`` in evaluation mode whose every ``nn.LSTM`` is a :class:`TraceableLSTM`."""
    copied = copy.deepcopy(model).eval()
    for parent in list(copied.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, nn.LSTM):
                setattr(parent, name, TraceableLSTM(child))
    return copied


def onnx_translations() -> dict[Callable, Callable]:
    """The ONNX exporter's ``custom_translation_table`` entry for ``hydroseq::lstm``."""
    from onnxscript.function_libs.torch_lib.ops.core import aten_lstm

    def translate(x, h0, c0, weights, has_biases, num_layers, bidirectional, batch_first):  # type: ignore[no-untyped-def]
        return aten_lstm(x, [h0, c0], weights, has_biases, num_layers, 0.0, False, bidirectional, batch_first)

    return {torch.ops.hydroseq.lstm.default: translate}
