"""A release of an exported model: no path of the machine that trained it, SHA256SUMS, still forecast, idempotent."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hydroseq.cli import main
from hydroseq.errors import ExitCode, InputDataError
from hydroseq.export import METADATA_FILE, ONNX_FILE, PT2_FILE, ExportMetadata, write_release
from hydroseq.export.runtime import RELEASE_CHECKSUMS
from hydroseq.fileio import sha256_file
from hydroseq.training.checkpoint import WEIGHTS_FILE, Checkpoint

SEQ_LEN = 30
ISSUE_DAY = "2014-09-30"


@pytest.fixture(scope="module")
def released(trained, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``trained`` exported with ``--release --release-root`` the folder its run wrote everything under; the model
    directory and that root (read only)."""
    root = trained.output_dir.parent  # the chain's folder: the run's data, cache, store and checkpoints
    out = tmp_path_factory.mktemp("release") / "model"
    assert main(["export", "--run", str(trained.output_dir / "best.pt"), "--seq-len", str(SEQ_LEN), "--out", str(out),
                 "--release", "--release-root", str(root), "-q"]) == ExitCode.OK
    return out, root


def _contents(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_a_release_records_no_absolute_path_of_its_root(released: tuple[Path, Path], trained) -> None:
    out, root = released
    assert str(root) in json.dumps(trained.config.model_dump(mode="json"))  # the run recorded absolute paths
    assert str(root) not in (out / METADATA_FILE).read_text()
    config = Checkpoint.load(out / WEIGHTS_FILE).config
    assert str(root) not in json.dumps(config.model_dump(mode="json"))
    assert config.data.path == Path("caravan_daily.nc") and config.training.output_dir == Path("train")
    assert ExportMetadata.read(out).train_config == config  # the two records agree


def test_sha256sums_lists_every_file_with_its_sum(released: tuple[Path, Path]) -> None:
    """``sha256sum -c SHA256SUMS`` reads it: metadata.json first, then the files metadata.json lists, whose sums
    (the rewritten checkpoint's too) are recorded there as well."""
    out, _ = released
    lines = (out / RELEASE_CHECKSUMS).read_text().splitlines()
    listed = dict(reversed(line.split("  ", 1)) for line in lines)
    assert list(listed) == [METADATA_FILE, ONNX_FILE, PT2_FILE, WEIGHTS_FILE]
    assert listed == {name: sha256_file(out / name) for name in listed}
    assert ExportMetadata.read(out).files == {name: listed[name] for name in (ONNX_FILE, PT2_FILE, WEIGHTS_FILE)}


def test_the_forecast_accepts_a_release(released: tuple[Path, Path], ingested: Path, tmp_path: Path) -> None:
    """``hydroseq forecast`` checks every file against metadata.json and SHA256SUMS before it runs."""
    out, _ = released
    assert main(["forecast", "--model", str(out), "--data", str(ingested), "--issue-time", ISSUE_DAY,
                 "--out", str(tmp_path / "forecast.nc"), "-q"]) == ExitCode.OK
    assert (tmp_path / "forecast.csv").is_file()


def test_a_second_release_changes_nothing(released: tuple[Path, Path], tmp_path: Path) -> None:
    out, root = released
    copy = shutil.copytree(out, tmp_path / "model")
    before = _contents(copy)
    result = write_release(copy, root)
    assert result.rewritten == () and _contents(copy) == before
    assert result.sums == {name: sha256_file(copy / name) for name in result.sums}


def test_exporting_again_with_release_replaces_a_release(released: tuple[Path, Path], trained, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture) -> None:
    """A released directory (SHA256SUMS beside the model's files) may be exported to again; ``--json`` reports
    the release."""
    out, root = released
    copy = shutil.copytree(out, tmp_path / "model")
    capsys.readouterr()
    assert main(["--json", "export", "--run", str(trained.output_dir / "best.pt"), "--seq-len", str(SEQ_LEN),
                 "--out", str(copy), "--release", "--release-root", str(root)]) == ExitCode.OK
    summary = json.loads(capsys.readouterr().out)
    assert summary["release"]["root"] == str(root)
    assert summary["release"]["sha256sums"] == {name: sha256_file(copy / name) for name in
                                                (METADATA_FILE, ONNX_FILE, PT2_FILE, WEIGHTS_FILE)}
    assert str(root) not in (copy / METADATA_FILE).read_text()


def test_a_modified_export_is_not_released(exported: Path, tmp_path: Path) -> None:
    """A release vouches for the exported files: one that differs from metadata.json is refused, nothing written."""
    copy = shutil.copytree(exported, tmp_path / "model")
    with (copy / ONNX_FILE).open("ab") as handle:
        handle.write(b"\0")
    before = _contents(copy)
    with pytest.raises(InputDataError, match=f"{ONNX_FILE}: checksum differs from {METADATA_FILE}"):
        write_release(copy, tmp_path)
    assert _contents(copy) == before and not (copy / RELEASE_CHECKSUMS).exists()


def test_a_root_path_in_a_string_loses_its_prefix_wherever_it_stands(exported: Path, tmp_path: Path) -> None:
    """The store's URI (``sqlite:////root/mlruns.db``) becomes one relative to the root; a path that is the root
    itself becomes ``.``, and a path outside the root stays as it was."""
    copy = shutil.copytree(exported, tmp_path / "model")
    recorded = Checkpoint.load(copy / WEIGHTS_FILE).config
    root = recorded.training.output_dir.parent
    write_release(copy, root)
    assert Checkpoint.load(copy / WEIGHTS_FILE).config.tracking.tracking_uri == "sqlite:///mlruns.db"
    again = shutil.copytree(exported, tmp_path / "again")
    write_release(again, recorded.data.cache_dir)
    config = Checkpoint.load(again / WEIGHTS_FILE).config
    assert config.data.cache_dir == Path(".") and config.data.path == recorded.data.path


def test_release_root_without_release_is_a_usage_error(trained, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture) -> None:
    assert main(["export", "--run", str(trained.output_dir / "best.pt"), "--seq-len", str(SEQ_LEN), "--out",
                 str(tmp_path / "model"), "--release-root", str(tmp_path)]) == ExitCode.CONFIG
    assert "--release-root needs --release" in capsys.readouterr().err
    assert not (tmp_path / "model").exists()
