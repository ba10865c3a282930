"""``hydroseq forecast``'s output formats on the command line: ``--format`` (a comma list), ``--pi-xml`` (its
deprecated alias) and an unknown format."""

from __future__ import annotations

from pathlib import Path

import pytest

from hydroseq.cli import main
from hydroseq.errors import ExitCode

ISSUE = "2014-06-30"


def _forecast(exported: Path, ingested: Path, out: Path, *options: str) -> int:
    return main(["forecast", "--model", str(exported), "--data", str(ingested), "--issue-time", ISSUE,
                 "--out", str(out), *options])


def test_pi_xml_writes_what_format_pi_xml_writes_and_says_once_that_it_is_deprecated(
        exported: Path, ingested: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert _forecast(exported, ingested, tmp_path / "new" / "f.nc", "--format", "csv,pi-xml") == ExitCode.OK
    assert "deprecated" not in capsys.readouterr().err
    assert _forecast(exported, ingested, tmp_path / "old" / "f.nc", "--pi-xml") == ExitCode.OK
    said = [line for line in capsys.readouterr().err.splitlines() if "--pi-xml" in line]
    assert said == ["hydroseq forecast: --pi-xml is deprecated; use --format pi-xml"]
    for name in ("f.nc", "f.csv", "f.xml", "f.manifest.json"):
        assert (tmp_path / "old" / name).read_bytes() == (tmp_path / "new" / name).read_bytes(), name


def test_an_unknown_format_is_one_line_exit_3_and_nothing_is_written(exported: Path, ingested: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture) -> None:
    assert _forecast(exported, ingested, tmp_path / "out" / "f.nc", "--format", "pi-xml,xlsx") == ExitCode.CONFIG
    assert capsys.readouterr().err.splitlines() == [
        "hydroseq forecast: error: --format xlsx: not an output format; the formats are netcdf, csv, pi-xml"]
    assert not (tmp_path / "out").exists()
