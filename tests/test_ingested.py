"""An ingested file changed after its ingest is refused by every command that reads it, with one line naming
the file and how to ingest it again; appending keeps the file, its manifest and its ``dataset_checksum`` in step."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import netCDF4
import pytest

from hydroseq.cli import main
from hydroseq.config import dump_config
from hydroseq.errors import ExitCode, InputDataError
from hydroseq.fileio import copy_set, manifest_path, verify_set
from hydroseq.ingest import dataset_checksum
from hydroseq.ingested import open_ingested
from tests.conftest import TrainedRun, train_config
from tests.fixtures import caravan_ingest_config

STATIONS = ["01022500", "01052500"]


def _edit_in_place(path: Path, value: float = 1e6) -> None:
    """Q of the first station at the last step set to ``value`` in the file itself (its manifest left alone)."""
    with netCDF4.Dataset(path, "a") as dataset:
        dataset["streamflow"][0, -1] = value


def _refused(status: int, error: str, path: Path) -> None:
    lines = error.strip().splitlines()
    assert status == ExitCode.INPUT_DATA, error
    assert len(lines) == 1 and "Traceback" not in error, error
    assert str(path) in lines[0] and "changed since it was ingested" in lines[0]
    assert f"hydroseq ingest --config <its ingest config> --out {path}" in lines[0]


def test_forecast_train_and_evaluate_refuse_a_file_edited_after_ingest(ingested: Path, exported: Path,
                                                                       trained: TrainedRun, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "data" / ingested.name
    copy_set(manifest_path(ingested), copy.parent)  # the file with the manifest its ingest published
    forecast = ["forecast", "--model", str(exported), "--data", str(copy), "--issue-time", "2014-06-30"]
    assert main([*forecast, "--out", str(tmp_path / "before.nc")]) == ExitCode.OK, capsys.readouterr().err
    capsys.readouterr()

    _edit_in_place(copy)  # Q = 1e6 mm/d, the dataset_checksum attribute as it was
    status = main([*forecast, "--out", str(tmp_path / "after.nc")])
    _refused(status, capsys.readouterr().err, copy)
    assert not list(tmp_path.glob("after*"))
    config = tmp_path / "train.yaml"
    config.write_text(dump_config(train_config(copy, tmp_path / "work")))
    status = main(["train", "--config", str(config)])
    _refused(status, capsys.readouterr().err, copy)
    assert not list((tmp_path / "work").rglob("*.pt"))  # refused before any training
    status = main(["evaluate", "--run", trained.run_id, "--data", str(copy), "--tracking-uri", trained.tracking_uri])
    _refused(status, capsys.readouterr().err, copy)

    alone = tmp_path / "alone" / copy.name  # moved without its manifest: nothing to check it against
    alone.parent.mkdir()
    alone.write_bytes(copy.read_bytes())
    opened, _ = open_ingested(alone)
    opened.close()


def test_appending_keeps_the_manifest_and_checksum_and_refuses_an_edited_file(tmp_path: Path,
                                                                              capsys: pytest.CaptureFixture[str]
                                                                              ) -> None:
    daily = tmp_path / "daily.nc"
    first, window = tmp_path / "first.yaml", tmp_path / "window.yaml"
    first.write_text(dump_config(caravan_ingest_config(dt.date(2014, 6, 1), dt.date(2014, 6, 20), STATIONS)))
    window.write_text(dump_config(caravan_ingest_config(dt.date(2014, 6, 18), dt.date(2014, 6, 25), STATIONS)))
    assert main(["ingest", "--config", str(first), "--out", str(daily)]) == ExitCode.OK
    assert main(["ingest", "--config", str(window), "--out", str(daily), "--append"]) == ExitCode.OK
    capsys.readouterr()
    assert verify_set(manifest_path(daily)) is not None
    opened, _ = open_ingested(daily)  # verified against the manifest the append published
    with opened:
        assert opened.sizes["time"] == 25
        assert dataset_checksum(opened) == opened.attrs["dataset_checksum"]

    _edit_in_place(daily)
    before = daily.read_bytes()
    status = main(["ingest", "--config", str(window), "--out", str(daily), "--append"])
    _refused(status, capsys.readouterr().err, daily)
    assert daily.read_bytes() == before  # the edit is not given a fresh manifest and checksum
    with pytest.raises(InputDataError, match="changed since it was ingested"):
        open_ingested(daily)
