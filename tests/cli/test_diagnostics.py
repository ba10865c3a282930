"""``--diagnostics PATH``: every command's lines as a Delft-FEWS PI diagnostics file (``Diag``, PI 1.2), written
atomically when the command ends, whatever its status: a partial forecast, a setup error, a success."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from hydroseq.cli import main
from hydroseq.errors import ExitCode

PI = "{http://www.wldelft.nl/fews/PI}"
ISSUE = "2014-06-30"


def _lines(path: Path) -> list[tuple[int, str]]:
    """The ``(level, description)`` lines of a PI diagnostics file, its root and version checked."""
    root = ET.parse(path).getroot()
    assert (root.tag, root.get("version")) == (f"{PI}Diag", "1.2")
    assert root.get("{http://www.w3.org/2001/XMLSchema-instance}schemaLocation") == (
        "http://www.wldelft.nl/fews/PI http://fews.wldelft.nl/schemas/version1.0/pi-schemas/pi_diag.xsd")
    assert all(line.tag == f"{PI}line" and set(line.attrib) == {"level", "description"} for line in root)
    return [(int(line.attrib["level"]), line.attrib["description"]) for line in root]


def test_a_partial_forecast_writes_its_warnings_and_status(exported: Path, ingested: Path, tmp_path: Path,
                                                           edited_copy, grid_index) -> None:
    end = grid_index(ingested, "2014-07-01T08:00")

    def gaps(dataset: xr.Dataset) -> None:
        stations = list(dataset["station"].values)
        for station in ("01052500", "02011460"):
            dataset["temperature_2m_mean"].values[stations.index(station), end] = np.nan

    data = edited_copy(ingested, tmp_path / "gaps.nc", gaps)
    diagnostics = tmp_path / "fews" / "diagnostics.xml"
    status = main(["-q", "--diagnostics", str(diagnostics), "forecast", "--model", str(exported), "--data", str(data),
                   "--issue-time", ISSUE, "--out", str(tmp_path / "f.nc"), "--max-skipped-share", "0.05"])
    assert status == ExitCode.PARTIAL
    lines = _lines(diagnostics)
    assert any(level == 2 and "partial result: 2 of 31 stations not forecast (6%), more than --max-skipped-share "
               "0.05" in text for level, text in lines), lines
    assert any(level == 3 and text.startswith("summary: {\"command\": \"forecast\", \"exit_code\": 5")
               for level, text in lines)
    assert lines[-1] == (2, "hydroseq forecast: exit status 5 (PARTIAL)")
    assert not [path.name for path in diagnostics.parent.iterdir() if path.name != "diagnostics.xml"]  # no temporary


def test_a_failed_command_writes_its_error_line(tmp_path: Path) -> None:
    diagnostics = tmp_path / "diagnostics.xml"
    diagnostics.write_text("the previous command's")
    status = main(["forecast", "--model", str(tmp_path / "absent"), "--data", str(tmp_path / "x.nc"),
                   "--issue-time", ISSUE, "--diagnostics", str(diagnostics)])  # after the command, too
    assert status == ExitCode.CONFIG
    assert _lines(diagnostics) == [
        (1, f"hydroseq forecast: error: {tmp_path / 'absent'}: no such model directory (an exported model's folder, "
            "made by hydroseq export)"),
        (1, "hydroseq forecast: exit status 3 (CONFIG)")]


def test_a_success_and_an_unwritable_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    diagnostics = tmp_path / "diagnostics.xml"
    assert main(["--diagnostics", str(diagnostics), "config", "--template", "ingest"]) == ExitCode.OK
    assert _lines(diagnostics) == [(3, "hydroseq config: exit status 0 (OK)")]
    capsys.readouterr()
    assert main(["--diagnostics", str(tmp_path), "config", "--template", "ingest"]) == ExitCode.CONFIG
    assert capsys.readouterr().err.strip() == f"hydroseq config: error: --diagnostics {tmp_path}: is a folder, " \
                                              "expected a file path"
