"""Export a :class:`LastStepNetwork` to ONNX (``torch.onnx.export(..., dynamo=True)``) and ``.pt2``.

The sequence length N and the feature count are static; the batch dimension is dynamic, so the
forecast may run any batch size. The ONNX graph is traced from a copy of the network whose LSTMs
call ``hydroseq::lstm`` (:mod:`hydroseq.export.lstm_op`: same numbers, traced in constant time);
``model.pt2`` is traced from the network as it is, so that loading it needs torch alone. The
weights are stored inside the ``.onnx`` file (no external data file) so the directory stays
self-contained.
"""

from __future__ import annotations

import contextlib
import io
import logging
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np
import onnx
import torch

from hydroseq.export.lstm_op import onnx_translations, with_traceable_lstms
from hydroseq.export.network import LastStepNetwork
from hydroseq.fileio import atomic_path, write_bytes_atomic

INPUT_NAMES = ("x", "lengths")
BATCH_DIM = "batch"


def trace_network(network: LastStepNetwork, example_x: torch.Tensor, example_lengths: torch.Tensor,
                  for_onnx: bool = False) -> torch.export.ExportedProgram:
    """``torch.export`` the network with a dynamic batch and the example's static N and F.

    The example must have at least two rows (``torch.export`` specialises a batch of 1). With
    ``for_onnx`` the LSTMs are traced as ``hydroseq::lstm`` (only :func:`save_onnx` reads that program).
    """
    if for_onnx:
        network = with_traceable_lstms(network)
    if example_x.shape[0] < 2:
        raise ValueError("the example batch needs at least 2 rows so that the batch stays dynamic")
    batch = torch.export.Dim(BATCH_DIM, min=1)
    with _quiet():
        return torch.export.export(network.eval(), (example_x, example_lengths),
                                   dynamic_shapes={"x": {0: batch}, "lengths": {0: batch}})


def save_pt2(program: torch.export.ExportedProgram, path: str | Path) -> Path:
    """Write the exported program (``torch.export.save``) atomically."""
    buffer = io.BytesIO()  # torch.export.save wants a name ending in .pt2 or a buffer
    torch.export.save(program, buffer)
    write_bytes_atomic(path, buffer.getvalue())
    return Path(path)


def save_onnx(program: torch.export.ExportedProgram, path: str | Path, output_names: tuple[str, ...] = ("y",),
              props: Mapping[str, str] | None = None) -> int:
    """Convert the exported program to one self-contained ONNX file with ``props`` as its ``metadata_props``
    (:mod:`hydroseq.export.onnx_props`); returns the opset used."""
    with _quiet():
        onnx_program = torch.onnx.export(program, dynamo=True, input_names=list(INPUT_NAMES),
                                         output_names=list(output_names), verbose=False,
                                         custom_translation_table=onnx_translations())
    model = onnx_program.model_proto  # type: ignore[union-attr]  # torch's Optional: None only with dynamo=False
    _name_batch_dimension(model)
    if props:
        onnx.helper.set_model_props(model, dict(props))
    with atomic_path(path) as tmp:
        onnx.save_model(model, str(tmp), save_as_external_data=False)
    return next(entry.version for entry in model.opset_import if entry.domain in ("", "ai.onnx"))


def _name_batch_dimension(model: onnx.ModelProto) -> None:
    """Give the dynamic first axis of every input and output the readable name ``batch``."""
    for value in list(model.graph.input) + list(model.graph.output):
        first = value.type.tensor_type.shape.dim[0]
        if not first.HasField("dim_value"):
            first.dim_param = BATCH_DIM


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence the exporter's progress lines and its warnings about optional packages."""
    logger = logging.getLogger("torch.onnx")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)


def as_numpy_inputs(x: torch.Tensor, lengths: torch.Tensor) -> dict[str, np.ndarray]:
    """The onnxruntime feed for a torch batch."""
    return {"x": x.detach().cpu().numpy().astype(np.float32),
            "lengths": lengths.detach().cpu().numpy().astype(np.int64)}
