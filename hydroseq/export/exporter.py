"""Write an exported model directory from a training checkpoint (needs torch; forecasting does not)."""

from __future__ import annotations

import shutil
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch

from hydroseq import __version__
from hydroseq.errors import HydroseqError, OutputPathError
from hydroseq.export.metadata import METADATA_FILE, ONNX_FILE, PT2_FILE, ExportMetadata
from hydroseq.export.network import LastStepNetwork, reference_prediction
from hydroseq.export.onnx_export import as_numpy_inputs, save_onnx, save_pt2, trace_network
from hydroseq.export.onnx_props import metadata_props
from hydroseq.export.runtime import RELEASE_CHECKSUMS
from hydroseq.fileio import atomic_folder, clean_stale_temporaries, make_output_dir, sha256_file
from hydroseq.grid import GridSpec
from hydroseq.model import TrainedModel
from hydroseq.training.checkpoint import WEIGHTS_FILE, Checkpoint

# onnxruntime may differ from torch by float32 rounding accumulated over the N steps, which grows with the size of
# the outputs: |diff| <= PARITY_ATOL + PARITY_RTOL * max|torch output| on the parity batch. Measured: 1.8e-7 to
# 3.0e-7 of max|output| on the three shipped models (max|output| 1.3-2.9) and 2.0e-7 on the week-ahead model after
# a one-epoch fine-tuning (1.14e-5 at max|output| 57): RTOL keeps a margin of 30x over them, and a weight perturbed by
# one part in 10^4 is still caught (tests/export/test_exporter.py).
PARITY_ATOL = 1e-5
PARITY_RTOL = 1e-5
PARITY_ROWS = 64
# what a model directory holds (a release's SHA256SUMS too: exporting there again replaces the release whole)
MODEL_CARD = "MODEL_CARD.md"  # a shipped model's card: kept when the model is exported again over it
MODEL_DIR_FILES = frozenset({METADATA_FILE, ONNX_FILE, PT2_FILE, WEIGHTS_FILE, RELEASE_CHECKSUMS, MODEL_CARD})


@dataclass(frozen=True)
class DataProvenance:
    """The grid, checksum and variable units (``{variable: units attribute}``) of the data a model was trained on."""

    grid: GridSpec
    dataset_checksum: str
    variable_units: dict[str, str] = field(default_factory=dict)


def export_trained_model(checkpoint: Checkpoint, seq_len: int, out_dir: str | Path, provenance: DataProvenance,
                         pt2: bool = True) -> ExportMetadata:
    """Export the model of ``checkpoint`` as a fixed-length model directory.

    Writes ``model.onnx`` (its ``metadata_props`` describing the inputs, scalers and outputs:
    :mod:`hydroseq.export.onnx_props`), ``model.pt2`` if ``pt2``, and the weights ``checkpoint.pt`` (the start
    of a fine-tuning run), checks onnxruntime against the packed torch model on random inputs of every length
    ``1..seq_len``, then writes ``metadata.json`` (with the SHA-256 of each file, the props included).
    All of it goes to a temporary folder beside ``out_dir`` that is renamed onto it at the end
    (:func:`hydroseq.fileio.atomic_folder`; an earlier model directory there is replaced whole): an
    export that fails or is interrupted leaves ``out_dir`` as it was (absent, or the earlier model),
    one killed (SIGKILL) a hidden temporary that the next export in that folder removes.

    Raises
    ------
    HydroseqError
        If ``seq_len`` is below 1, or ``out_dir`` cannot be written (:class:`OutputPathError`,
        :func:`check_model_dir`; :class:`~hydroseq.errors.NoSpaceError` when out of space).
    ValueError
        If onnxruntime and torch differ by more than :func:`parity_tolerance` (a broken export: exit 70).
    """
    if seq_len < 1:
        raise HydroseqError(f"seq_len (--seq-len) must be at least 1, got {seq_len}")
    config = checkpoint.config
    if seq_len != config.data.seq_len:
        warnings.warn(f"--seq-len {seq_len} differs from the training data.seq_len {config.data.seq_len}: forecasts "
                      f"will see histories of a length the model was not trained on", stacklevel=2)
    out_dir = check_model_dir(out_dir)
    clean_stale_temporaries(out_dir.parent)  # what an export killed earlier left beside it
    model = checkpoint.build_model()
    network = LastStepNetwork(model).eval()
    x, lengths = _parity_batch(seq_len, checkpoint.n_features)
    described = _metadata(checkpoint, seq_len, provenance)  # what model.onnx carries as its metadata_props
    with atomic_folder(out_dir) as staging:  # out_dir appears (or is replaced) whole at the end, or not at all
        if (out_dir / MODEL_CARD).is_file():
            shutil.copy2(out_dir / MODEL_CARD, staging / MODEL_CARD)
        opset = save_onnx(trace_network(network, x[:2], lengths[:2], for_onnx=True), staging / ONNX_FILE,
                          network.output_names, metadata_props(described))
        files = [ONNX_FILE]
        if pt2:
            save_pt2(trace_network(network, x[:2], lengths[:2]), staging / PT2_FILE)
            files.append(PT2_FILE)
        checkpoint.weights_only().save(staging / WEIGHTS_FILE)  # what `hydroseq train --init-from DIR` starts from
        files.append(WEIGHTS_FILE)
        max_diff = _onnx_parity(staging / ONNX_FILE, model, x, lengths)
        metadata = replace(described, opset=opset, parity_max_abs_diff=max_diff,
                           files={name: sha256_file(staging / name) for name in files})
        (staging / METADATA_FILE).write_text(metadata.to_json())
    return metadata


def check_model_dir(out_dir: str | Path) -> Path:
    """``out_dir`` if a model directory may be written there: absent, empty, or an exported model directory
    (replaced whole); its parent folder is created.

    Raises
    ------
    OutputPathError
        If ``out_dir`` is a file, lies under one, or is a folder holding other files than a model
        directory's (which replacing it would delete).
    """
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputPathError(out_dir, "exists and is not a folder")
    blocking = next((folder for folder in out_dir.parents if folder.exists() and not folder.is_dir()), None)
    if blocking is not None:
        raise OutputPathError(out_dir, f"cannot create the folder: {blocking} is a file")
    if out_dir.is_dir():
        others = sorted(item.name for item in out_dir.iterdir() if item.name not in MODEL_DIR_FILES)
        if others:
            raise OutputPathError(out_dir, f"holds other files than an exported model's ({', '.join(others[:3])}"
                                           f"{', ...' if len(others) > 3 else ''}): refusing to replace it")
    make_output_dir(out_dir.parent)
    return out_dir


def _parity_batch(seq_len: int, n_features: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Standard-normal inputs (the scaled range) with lengths covering 1..N, N first."""
    generator = torch.Generator().manual_seed(0)
    rows = max(PARITY_ROWS, 2)
    lengths = torch.linspace(seq_len, 1, rows).round().long().clamp(1, seq_len)
    x = torch.randn(rows, seq_len, n_features, generator=generator)
    padding = torch.arange(seq_len)[None, :] >= lengths[:, None]
    x[padding] = 0.0
    return x, lengths


def parity_tolerance(expected: np.ndarray) -> float:
    """The largest |onnxruntime - torch| difference accepted for the torch outputs ``expected``:
    ``PARITY_ATOL + PARITY_RTOL * max|expected|`` (the rounding of a long float32 roll-out grows with the outputs)."""
    scale = float(np.max(np.abs(expected))) if expected.size else 0.0
    return PARITY_ATOL + PARITY_RTOL * scale


def _onnx_parity(path: Path, model: TrainedModel, x: torch.Tensor, lengths: torch.Tensor) -> float:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    exported = session.run(None, as_numpy_inputs(x, lengths))[0]
    expected = reference_prediction(model, x, lengths).numpy()
    max_diff = float(np.max(np.abs(exported - expected)))
    tolerance = parity_tolerance(expected)
    if not max_diff <= tolerance:  # NaN fails too
        raise ValueError(f"exported ONNX model differs from torch by {max_diff:.3g} (tolerance {tolerance:.3g}: "
                         f"{PARITY_ATOL:g} + {PARITY_RTOL:g} x the largest output {np.max(np.abs(expected)):.3g})")
    return max_diff


def _metadata(checkpoint: Checkpoint, seq_len: int, provenance: DataProvenance) -> ExportMetadata:
    """The model's metadata before the files are written (no opset, parity or checksums yet)."""
    data = checkpoint.config.data
    leads = [int(lead) for lead in data.lead_steps]
    read = [*data.dynamic_inputs, *data.static_inputs, data.target, *(item.variable for item in data.forecast_inputs)]
    return ExportMetadata(
        seq_len=seq_len, feature_names=list(checkpoint.feature_names),
        dynamic_inputs=list(data.dynamic_inputs), static_inputs=list(data.static_inputs),
        target=data.target, lagged_target=bool(data.lagged_target),
        mode=checkpoint.mode, leads=leads, min_len=int(data.min_len), scalers=checkpoint.scalers.to_dict(),
        grid=provenance.grid, run_id=checkpoint.run_id,
        dataset_checksum=provenance.dataset_checksum, hydroseq_version=__version__, train_config=checkpoint.config,
        forecast_inputs=[item.model_dump(mode="json") for item in data.forecast_inputs],
        forecast_horizon=data.forecast_horizon, quantiles=list(checkpoint.config.model.quantiles or []),
        members=len(checkpoint.member_states),
        input_units={name: provenance.variable_units[name] for name in read if name in provenance.variable_units},
        day_convention=data.day_convention,
    )
