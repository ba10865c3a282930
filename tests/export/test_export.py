"""The exported model directory: contents, metadata, checksums, loading without torch."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
import xarray as xr

from hydroseq.cli import main
from hydroseq.dataset import Scalers
from hydroseq.errors import ConfigError, HydroseqError, InputDataError
from hydroseq.export import METADATA_FILE, ONNX_FILE, PT2_FILE, ExportedModel, ExportMetadata, export_model
from hydroseq.fileio import sha256_file
from hydroseq.grid import GridSpec
from hydroseq.training.checkpoint import WEIGHTS_FILE, Checkpoint

SEQ_LEN = 30


def test_metadata_describes_the_run(exported: Path, trained, ingested: Path) -> None:
    metadata = ExportMetadata.read(exported)
    checkpoint = Checkpoint.load(trained.output_dir / "best.pt")
    assert metadata.seq_len == SEQ_LEN
    assert metadata.feature_names == checkpoint.feature_names
    assert metadata.run_id == trained.run_id
    assert Scalers.from_dict(metadata.scalers).to_dict() == checkpoint.scalers.to_dict()
    assert metadata.mode == "per_step" and metadata.leads == [0]
    with xr.open_dataset(ingested) as ds:
        assert metadata.dataset_checksum == ds.attrs["dataset_checksum"]
        assert metadata.grid == GridSpec.from_attrs(ds.attrs)
    assert metadata.files == {name: sha256_file(exported / name) for name in (ONNX_FILE, PT2_FILE, WEIGHTS_FILE)}
    assert metadata.parity_max_abs_diff is not None and metadata.parity_max_abs_diff < 1e-5


def test_metadata_records_the_units_of_what_the_model_reads(exported: Path, trained, ingested: Path) -> None:
    data = trained.config.data
    with xr.open_dataset(ingested) as ds:
        expected = {name: ds[name].attrs["units"] for name in (*data.dynamic_inputs, *data.static_inputs, data.target)}
    assert ExportMetadata.read(exported).input_units == expected
    assert expected["streamflow"] == "mm d-1" and expected["temperature_2m_mean"] == "degC"


def test_metadata_without_units_reads_as_recording_none(tmp_path: Path) -> None:
    """Model directories exported before the units were recorded still load."""
    metadata = ExportMetadata(seq_len=3, feature_names=["p"], dynamic_inputs=["p"], static_inputs=[], target="q",
                              lagged_target=False, mode="per_step", leads=[0], min_len=1, scalers={},
                              grid=GridSpec("1D", "UTC"), run_id="run", dataset_checksum="sum", hydroseq_version="0",
                              input_units={"p": "mm d-1", "q": "m3 s-1"})
    (tmp_path / METADATA_FILE).write_text(metadata.to_json())
    assert ExportMetadata.read(tmp_path).input_units == {"p": "mm d-1", "q": "m3 s-1"}
    written = json.loads(metadata.to_json())
    del written["input_units"]
    (tmp_path / METADATA_FILE).write_text(json.dumps(written))
    assert ExportMetadata.read(tmp_path).input_units == {}


def test_onnx_has_static_length_and_dynamic_batch(exported: Path) -> None:
    model = onnx.load(str(exported / ONNX_FILE))
    assert not any(init.data_location == onnx.TensorProto.EXTERNAL for init in model.graph.initializer)
    x, lengths = model.graph.input
    dims = [d.dim_param or d.dim_value for d in x.type.tensor_type.shape.dim]
    n_features = len(ExportMetadata.read(exported).feature_names)
    assert dims == ["batch", SEQ_LEN, n_features]
    assert [d.dim_param for d in lengths.type.tensor_type.shape.dim] == ["batch"]
    runtime = ExportedModel(exported)
    for batch in (1, 7):
        x_in = np.random.default_rng(batch).standard_normal((batch, SEQ_LEN, n_features)).astype(np.float32)
        assert runtime.predict(x_in, np.full(batch, SEQ_LEN)).shape == (batch, 1)


def test_pt2_matches_onnx(exported: Path) -> None:
    import torch

    program = torch.export.load(str(exported / PT2_FILE))
    runtime = ExportedModel(exported)
    x = np.random.default_rng(0).standard_normal((5, SEQ_LEN, runtime.n_features)).astype(np.float32)
    lengths = np.array([30, 1, 12, 29, 5])
    expected = runtime.predict(x, lengths)
    with torch.no_grad():
        got = program.module()(torch.from_numpy(x), torch.from_numpy(lengths)).numpy()
    np.testing.assert_allclose(got, expected, atol=1e-6)


def test_the_network_holds_one_lstm_node_and_the_pt2_only_torch_operators(exported: Path) -> None:
    """The ONNX graph is traced through ``hydroseq::lstm`` but holds ONNX's own ``LSTM`` node; ``model.pt2``
    is traced from the plain network, so that loading it needs torch alone (no hydroseq operator)."""
    import onnx
    import torch

    nodes = [node.op_type for node in onnx.load(str(exported / ONNX_FILE)).graph.node]
    assert nodes.count("LSTM") == 1 and not any("hydroseq" in node for node in nodes)
    program = torch.export.load(str(exported / PT2_FILE))
    targets = {str(node.target) for node in program.graph.nodes if node.op == "call_function"}
    assert "aten.lstm.input" in targets and not any("hydroseq" in target for target in targets)


def test_export_from_a_checkpoint_file_via_cli(trained, tmp_path: Path, capsys) -> None:
    out = tmp_path / "model"
    status = main(["export", "--run", str(trained.output_dir / "best.pt"), "--seq-len", "12", "--out", str(out)])
    assert status == 0
    # the CLI sends warnings through its log lines (stderr and --log-file)
    assert "--seq-len 12 differs from the training data.seq_len 30" in capsys.readouterr().err
    metadata = ExportMetadata.read(out)
    assert metadata.seq_len == 12 and metadata.run_id == trained.run_id
    assert ExportedModel(out).predict(np.zeros((3, 12, len(metadata.feature_names)), np.float32),
                                      np.array([12, 3, 1])).shape == (3, 1)


def test_unknown_run_is_a_clear_error(trained, tmp_path: Path) -> None:
    with pytest.raises(HydroseqError, match="run '0123456789abcdef' not found in the MLflow store"):
        export_model("0123456789abcdef", seq_len=10, out_dir=tmp_path / "m", tracking_uri=trained.tracking_uri)


def test_missing_checkpoint_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputDataError, match="best.pt: checkpoint file not found"):
        export_model(tmp_path / "best.pt", seq_len=10, out_dir=tmp_path / "m")


def test_metadata_stores_the_grid_as_flat_attributes_and_reads_exports_without_a_label_convention(tmp_path) -> None:
    grid = GridSpec("1D", "Etc/GMT+8")
    metadata = ExportMetadata(seq_len=3, feature_names=["p"], dynamic_inputs=["p"], static_inputs=[], target="q",
                              lagged_target=False, mode="per_step", leads=[0], min_len=1, scalers={}, grid=grid,
                              run_id="run", dataset_checksum="sum", hydroseq_version="0")
    written = json.loads(metadata.to_json())
    keys = list(written)
    assert keys[keys.index("scalers") + 1:keys.index("run_id")] == list(grid.to_attrs())
    (tmp_path / METADATA_FILE).write_text(metadata.to_json())
    assert ExportMetadata.read(tmp_path) == metadata
    del written["time_label_convention"]  # exports written before the grid had one owner
    (tmp_path / METADATA_FILE).write_text(json.dumps(written))
    assert ExportMetadata.read(tmp_path).grid == grid
    del written["grid_timezone"]
    (tmp_path / METADATA_FILE).write_text(json.dumps(written))
    with pytest.raises(InputDataError, match="malformed model metadata.*grid_timezone"):
        ExportMetadata.read(tmp_path)


def test_modified_model_file_is_refused(exported: Path, tmp_path: Path) -> None:
    copy = tmp_path / "model"
    shutil.copytree(exported, copy)
    with open(copy / ONNX_FILE, "ab") as handle:
        handle.write(b"\0")
    with pytest.raises(InputDataError, match="checksum differs"):
        ExportedModel(copy)
    (copy / METADATA_FILE).unlink()
    with pytest.raises(ConfigError, match="metadata.json missing"):  # a folder that holds no model: exit 3
        ExportedModel(copy)


def test_bad_lengths_and_shapes_are_refused(exported: Path) -> None:
    runtime = ExportedModel(exported)
    x = np.zeros((2, SEQ_LEN, runtime.n_features), np.float32)
    with pytest.raises(ValueError, match="lengths must lie in 1..30"):
        runtime.predict(x, np.array([0, 3]))
    with pytest.raises(ValueError, match="expected \\(batch, 30"):
        runtime.predict(np.zeros((2, 29, runtime.n_features), np.float32), np.array([1, 3]))


def test_loading_and_forecasting_need_no_torch(exported: Path, ingested: Path, tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from hydroseq.forecast import run_forecast\n"
        f"run = run_forecast({str(exported)!r}, {str(ingested)!r}, '2014-06-20..2014-06-30',"
        f" out={str(tmp_path / 'f.nc')!r})\n"
        "assert run.stations_forecast > 0, run.result.skipped\n"
        "loaded = sorted(m for m in sys.modules\n"
        "                if m.split('.')[0] in ('torch', 'mlflow') or m.startswith('hydroseq.training'))\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert (tmp_path / "f.csv").exists() and (tmp_path / "f_scores.csv").exists()  # a hindcast, baselines too


def _stop_at_the_parity_check(monkeypatch: pytest.MonkeyPatch, stop: BaseException) -> None:
    """Stop the export at its last step: the network, weights and ``model.pt2`` are written by then."""
    import hydroseq.export.exporter

    def parity(*args, **kwargs):
        raise stop
    monkeypatch.setattr(hydroseq.export.exporter, "_onnx_parity", parity)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_export_leaves_nothing_at_out(signum: int, trained, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from hydroseq.cli import Terminated
    from hydroseq.errors import ExitCode

    _stop_at_the_parity_check(monkeypatch, Terminated(signum) if signum == signal.SIGTERM else KeyboardInterrupt())
    out = tmp_path / "models" / "model"
    status = main(["export", "--run", str(trained.output_dir / "best.pt"), "--seq-len", str(SEQ_LEN),
                   "--out", str(out)])
    assert status == (ExitCode.TERMINATED if signum == signal.SIGTERM else ExitCode.INTERRUPTED)
    assert not out.exists()
    assert list(out.parent.iterdir()) == []  # no temporary left beside it either


def test_an_interrupted_export_keeps_the_earlier_model(trained, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from hydroseq.errors import ExitCode

    out = tmp_path / "model"
    export = ["export", "--run", str(trained.output_dir / "best.pt"), "--out", str(out), "--seq-len"]
    assert main([*export, str(SEQ_LEN)]) == ExitCode.OK
    earlier = {path.name: path.read_bytes() for path in out.iterdir()}
    _stop_at_the_parity_check(monkeypatch, KeyboardInterrupt())
    assert main([*export, "12"]) == ExitCode.INTERRUPTED
    assert {path.name: path.read_bytes() for path in out.iterdir()} == earlier
    assert sorted(path.name for path in tmp_path.iterdir()) == ["model"]


def test_a_killed_export_leaves_nothing_at_out(trained, tmp_path: Path) -> None:
    """SIGKILL cannot be handled: the model directory is written beside ``--out`` and renamed onto it at the end,
    so a kill leaves no ``--out`` but a hidden temporary, which the next export in that folder removes."""
    out = tmp_path / "model"
    args = ["export", "--run", str(trained.output_dir / "best.pt"), "--seq-len", str(SEQ_LEN), "--out", str(out)]
    killed_at_parity = ("import os, signal, sys\n"
                        "import hydroseq.export.exporter as exporter\n"
                        "exporter._onnx_parity = lambda *args: os.kill(os.getpid(), signal.SIGKILL)\n"
                        "from hydroseq.cli import main\n"
                        "sys.exit(main(sys.argv[1:]))\n")
    finished = subprocess.run([sys.executable, "-c", killed_at_parity, *args], capture_output=True, text=True,
                              timeout=600)
    assert finished.returncode == -signal.SIGKILL, finished.stderr[-3000:]
    assert not out.exists()
    (left,) = tmp_path.iterdir()
    assert left.name.startswith(".model.") and left.name.endswith(".tmp") and (left / ONNX_FILE).is_file()
    assert main(args) == 0
    assert sorted(path.name for path in tmp_path.iterdir()) == ["model"]
    assert ExportMetadata.read(out).seq_len == SEQ_LEN


def test_an_export_does_not_replace_a_folder_of_other_files(trained, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    status = main(["export", "--run", str(trained.output_dir / "best.pt"), "--seq-len", str(SEQ_LEN),
                   "--out", str(tmp_path)])
    assert status == 3
    assert "holds other files than an exported model's (notes.txt): refusing to replace it" in capsys.readouterr().err
    assert [path.name for path in tmp_path.iterdir()] == ["notes.txt"]


def test_an_export_over_a_shipped_model_keeps_its_card(trained, tmp_path: Path) -> None:
    """A shipped model directory holds its MODEL_CARD.md beside the exported files: exporting the re-trained model
    over it replaces the files and keeps the card (a card of the new figures is written by hand)."""
    args = ["export", "--run", str(trained.output_dir / "best.pt"), "--seq-len", str(SEQ_LEN), "--out", str(tmp_path)]
    assert main(args) == 0
    (tmp_path / "MODEL_CARD.md").write_text("# the card\n")
    assert main(args) == 0
    assert (tmp_path / "MODEL_CARD.md").read_text() == "# the card\n"
    assert ExportMetadata.read(tmp_path).seq_len == SEQ_LEN
