"""Stage ``export``: a self-contained fixed-length model directory for batch forecasting.

``export_model`` (needs torch) writes ``model.onnx`` (+ ``model.pt2``) and ``metadata.json``;
``write_release`` (needs torch) makes such a directory a release (:mod:`hydroseq.export.release`);
:class:`ExportedModel` loads it with onnxruntime and numpy only. Importing this
package does not import torch, so the forecast stays light.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from hydroseq.export.metadata import METADATA_FILE, ONNX_FILE, PT2_FILE, ExportMetadata
from hydroseq.export.runtime import ExportedModel

if TYPE_CHECKING:
    from hydroseq.export.release import ReleaseResult, write_release

__all__ = ["METADATA_FILE", "ONNX_FILE", "PT2_FILE", "ExportMetadata", "ExportedModel", "ReleaseResult", "export_model",
           "write_release"]


def __getattr__(name: str) -> Any:
    if name in ("ReleaseResult", "write_release"):
        from hydroseq.export import release
        return getattr(release, name)
    raise AttributeError(f"module 'hydroseq.export' has no attribute {name!r}")


def export_model(run_or_checkpoint: str | Path, seq_len: int, out_dir: str | Path,
                 tracking_uri: str | None = None, data_path: str | Path | None = None) -> ExportMetadata:
    """Export a trained model as a fixed-length model directory (see :mod:`hydroseq.export.exporter`).

    Parameters
    ----------
    run_or_checkpoint
        An MLflow run id, or the path of a training checkpoint file.
    seq_len
        The fixed input length N of the exported network.
    out_dir
        The model directory to write. It appears whole at the end or not at all (an interrupted export
        leaves nothing there); an earlier model directory there is replaced, a folder holding other
        files is refused.
    tracking_uri
        MLflow tracking URI used to find a run (default: ``MLFLOW_TRACKING_URI`` or the run
        config's).
    """
    from hydroseq.export.source import export_from_source

    return export_from_source(run_or_checkpoint, seq_len, out_dir, tracking_uri, data_path)
