"""Run an exported model with onnxruntime and numpy only (no torch, no training code).

>>> model = ExportedModel("runs/demo/model")            # doctest: +SKIP
>>> y = model.predict(x, lengths)                       # x[B, N, F] float32, lengths[B] int
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort

from hydroseq.errors import InputDataError
from hydroseq.export.metadata import METADATA_FILE, ONNX_FILE, ExportMetadata
from hydroseq.fileio import sha256_file

DEFAULT_BATCH_SIZE = 1024
RELEASE_CHECKSUMS = "SHA256SUMS"  # a released model directory's `sha256sum` file, checked when present


class ExportedModel:
    """An exported model directory, loaded for inference.

    Parameters
    ----------
    model_dir
        Directory written by :func:`hydroseq.export.export_model`.
    verify
        Check every file against the SHA-256 recorded in the metadata first (a corrupted or
        partly copied directory fails loudly instead of forecasting nonsense).
    threads
        onnxruntime intra-op threads (default: onnxruntime's choice, all cores).

    Inputs and outputs are in scaled units: apply ``metadata.scalers`` before and after (the
    forecast does this with :class:`hydroseq.dataset.scalers.Scalers`; the ``preprocessing`` text in the
    ``metadata_props`` of ``model.onnx`` says how, for a reader without hydroseq).
    """

    def __init__(self, model_dir: str | Path, verify: bool = True, threads: int | None = None) -> None:
        self.model_dir = Path(model_dir)
        self.metadata = ExportMetadata.read(self.model_dir)
        if verify:
            self.verify_files()
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(self.model_dir / ONNX_FILE), options,
                                            providers=ort.get_available_providers())

    @property
    def seq_len(self) -> int:
        """The fixed input length N."""
        return self.metadata.seq_len

    @property
    def n_features(self) -> int:
        """Features per step F."""
        return len(self.metadata.feature_names)

    def verify_files(self) -> None:
        """Raise :class:`InputDataError` if a file is missing or differs from its recorded checksum: those
        ``metadata.json`` lists, and those a released model's ``SHA256SUMS`` lists (metadata.json among them)."""
        if ONNX_FILE not in self.metadata.files:
            raise InputDataError(self.model_dir, f"metadata lists no checksum for {ONNX_FILE}")
        listed = {name: (expected, METADATA_FILE) for name, expected in self.metadata.files.items()}
        sums = self.model_dir / RELEASE_CHECKSUMS
        if sums.is_file():
            for line in sums.read_text().splitlines():
                expected, _, name = line.strip().partition("  ")
                if name:
                    listed[name] = (expected, RELEASE_CHECKSUMS)
        for name, (expected, source) in sorted(listed.items()):
            path = self.model_dir / name
            if not path.is_file():
                raise InputDataError(path, "file of the exported model is missing")
            if sha256_file(path) != expected:
                raise InputDataError(path, f"checksum differs from {source}: the model directory "
                                           "was modified or copied incompletely")

    def predict(self, x: np.ndarray, lengths: np.ndarray, batch_size: int = DEFAULT_BATCH_SIZE) -> np.ndarray:
        """The network's output ``y`` (see :meth:`run`)."""
        return self.run(x, lengths, batch_size)[0]

    def run(self, x: np.ndarray, lengths: np.ndarray,
            batch_size: int = DEFAULT_BATCH_SIZE) -> tuple[np.ndarray, np.ndarray | None]:
        """Scaled outputs ``[B, n_outputs]`` (quantile models: ``[B, n_outputs, n_levels]``) for right-padded
        ``x [B, N, F]`` and ``lengths [B]``.

        Rows are run in batches of ``batch_size`` (the last one may be smaller). The second item is
        an ensemble's member outputs ``[B, member, ...]`` (None for one network).

        Raises
        ------
        ValueError
            If the shapes do not match the exported N and F, or a length is outside ``1..N``.
        """
        x = np.ascontiguousarray(x, dtype=np.float32)
        lengths = np.ascontiguousarray(lengths, dtype=np.int64)
        self._check_inputs(x, lengths)
        batches = [self.session.run(None, {"x": x[i:i + batch_size], "lengths": lengths[i:i + batch_size]})
                   for i in range(0, len(x), batch_size)]
        outputs = []
        for k, output in enumerate(self.session.get_outputs()):
            parts = [batch[k] for batch in batches]
            outputs.append(np.concatenate(parts) if parts else np.zeros((0, *output.shape[1:]), dtype=np.float32))
        return outputs[0], (outputs[1] if len(outputs) > 1 else None)

    def _check_inputs(self, x: np.ndarray, lengths: np.ndarray) -> None:
        if x.ndim != 3 or x.shape[1:] != (self.seq_len, self.n_features):
            raise ValueError(f"x has shape {x.shape}, expected (batch, {self.seq_len}, {self.n_features})")
        if lengths.shape != (x.shape[0],):
            raise ValueError(f"lengths has shape {lengths.shape}, expected ({x.shape[0]},)")
        if len(lengths) and (lengths.min() < 1 or lengths.max() > self.seq_len):
            raise ValueError(f"lengths must lie in 1..{self.seq_len}, got {lengths.min()}..{lengths.max()}")
