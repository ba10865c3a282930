"""The export's parity check: onnxruntime against the packed torch model, judged relative to the outputs' size."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import hydroseq.export.exporter as exporter
from hydroseq.cli import main
from hydroseq.errors import ExitCode

SEQ_LEN = 30


def test_the_tolerance_grows_with_the_largest_output() -> None:
    """A week-ahead model fine-tuned one epoch (max|output| 57 on the parity batch) differed by 1.14e-5, 2.0e-7
    of its largest output, as the shipped models do (1.8e-7 to 3.0e-7): accepted; outputs near 1 keep 2e-5."""
    assert exporter.parity_tolerance(np.array([[1.0, -0.5]], np.float32)) == pytest.approx(2e-5)
    assert exporter.parity_tolerance(np.array([[57.118675, -3.0]], np.float32)) > 1.1444092e-05 * 30
    assert exporter.parity_tolerance(np.zeros((0, 3), np.float32)) == exporter.PARITY_ATOL
    assert not exporter.parity_tolerance(np.array([np.nan], np.float32)) >= 0.0  # a NaN output fails the check


def _perturbing_save(monkeypatch: pytest.MonkeyPatch, relative: float) -> None:
    """Make the export write a model.onnx whose float weights are off by ``relative`` (a broken export)."""
    save = exporter.save_onnx

    def perturbed(program, path, *args, **kwargs):  # type: ignore[no-untyped-def]
        opset = save(program, path, *args, **kwargs)
        model = onnx.load(str(path))
        for initializer in model.graph.initializer:
            weights = numpy_helper.to_array(initializer)
            if weights.dtype == np.float32 and weights.size > 1:
                initializer.CopyFrom(numpy_helper.from_array(weights * np.float32(1 + relative), initializer.name))
        onnx.save_model(model, str(path))
        return opset
    monkeypatch.setattr(exporter, "save_onnx", perturbed)


def test_an_export_with_weights_off_by_one_part_in_ten_thousand_is_refused(trained, tmp_path: Path, capsys,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The relative tolerance still catches a wrong graph: every weight scaled by 1 + 1e-4 (on the shipped week-ahead
    model that moves the outputs by 8.3e-4, 21x its tolerance) fails the export with exit 70, nothing written."""
    out = tmp_path / "model"
    args = ["export", "--run", str(trained.output_dir / "best.pt"), "--seq-len", str(SEQ_LEN), "--out", str(out)]
    _perturbing_save(monkeypatch, 1e-4)
    capsys.readouterr()
    assert main(args) == ExitCode.INTERNAL
    assert "exported ONNX model differs from torch by" in capsys.readouterr().err
    assert not out.exists()
    monkeypatch.undo()
    assert main([*args, "-q"]) == ExitCode.OK  # the same export, unperturbed
