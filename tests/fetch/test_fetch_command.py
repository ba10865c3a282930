"""``hydroseq fetch``: its summary, one line and exit 6 for a source that is down, the extra it needs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from hydroseq.cli import main
from hydroseq.errors import ExitCode
from tests.fetch.sources import SourceServer, closed_port_url, write_noaa_run

GFS = ["fetch", "--source", "gfs", "--issue-time", "2026-11-02T06:00Z", "--steps", "6/12/6"]
BLOCKED = """
import sys
from importlib.machinery import PathFinder
_find = PathFinder.find_spec
PathFinder.find_spec = staticmethod(lambda name, path=None, target=None:
                                    None if name.partition(".")[0] == "herbie" else _find(name, path, target))
from hydroseq.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_the_summary_lists_what_was_written_then_what_was_complete(server: SourceServer, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    write_noaa_run(server.root, "gfs", pd.Timestamp("2026-11-02T00:00Z"), [6, 12])
    command = ["--json", *GFS, "--out", str(tmp_path), "--base-url", server.url]
    assert main(command) == ExitCode.OK
    summary = json.loads(capsys.readouterr().out)
    run_file = str(tmp_path / "gfs" / "gfs_2026110200.grib2")
    assert summary["written"] == [run_file] and summary["skipped"] == [] and summary["downloads"] == 2
    assert summary["runs"] == ["2026-11-02T00:00:00Z"] and summary["issue_time"] == "2026-11-02T06:00:00Z"
    assert main(command) == ExitCode.OK
    again = json.loads(capsys.readouterr().out)
    assert again["written"] == [] and again["skipped"] == [run_file] and again["downloads"] == 0


def test_a_source_that_is_down_is_one_line_and_exit_6(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    down = closed_port_url()
    status = main([*GFS, "--out", str(tmp_path), "--base-url", down, "--attempts", "2", "--retry-wait", "0"])
    assert status == ExitCode.UNAVAILABLE == 6
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert errors == [f"hydroseq fetch: error: NOAA GFS: cannot reach {down}/gfs.20261102/00/atmos/"
                      "gfs.t00z.pgrb2.0p25.f006 after 2 attempts (Connection refused)"]


def test_nwis_needs_its_stations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fetch", "--source", "nwis", "--issue-time", "2026-11-02", "--out", str(tmp_path)]) == ExitCode.CONFIG
    assert "--source nwis needs --stations" in capsys.readouterr().err


def test_without_the_fetch_extra_it_says_which_to_install(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", BLOCKED, *GFS, "--out", str(tmp_path / "raw")], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == ExitCode.CONFIG, done.stderr[-2000:]
    assert done.stderr.strip() == ("hydroseq fetch: error: herbie is not installed, and this command needs it: "
                                   "pip install '.[fetch]' in the hydroseq clone")
    assert not (tmp_path / "raw").exists()
