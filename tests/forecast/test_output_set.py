"""A real ``hydroseq forecast`` process killed while it publishes: the old set or the new one, never a mix.

The fault-injection hook ``HYDROSEQ_TEST_SIGNAL_AT`` (``hydroseq.fileio``) makes the process send
itself a signal at a chosen moment: ``written:k`` once k files of the set are written to their
temporaries, ``published:k`` once k of them are renamed into place.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from hydroseq.errors import ExitCode
from hydroseq.fileio import FAULT_ENV, verify_set
from hydroseq.forecast import run_forecast

OLD_RANGE = "2014-06-01..2014-06-05"
NEW_RANGE = "2014-07-01..2014-07-05"
SET = ["h.csv", "h.manifest.json", "h.nc", "h_scores.csv", "h_scores.png", "h_signatures.csv"]


def _forecast(exported: Path, ingested: Path, out: Path, fault: str | None = None) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != FAULT_ENV}
    if fault:
        env[FAULT_ENV] = fault
    command = [str(Path(sys.executable).parent / "hydroseq"), "forecast", "--model", str(exported),
               "--data", str(ingested), "--issue-time", NEW_RANGE, "--out", str(out)]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


def _hidden(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.startswith("."))


@pytest.fixture(scope="module")
def sets(exported: Path, ingested: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    """The manifests' checksums of the old hindcast set and of the new one (made without interruption)."""
    hashes = {}
    for label, issue in (("old", OLD_RANGE), ("new", NEW_RANGE)):
        folder = tmp_path_factory.mktemp(label)
        assert run_forecast(exported, ingested, issue, out=folder / "h.nc").stations_forecast > 0
        assert sorted(path.name for path in folder.iterdir()) == SET
        hashes[label] = verify_set(folder / "h.manifest.json")
    assert hashes["old"]["h.nc"] != hashes["new"]["h.nc"]
    return hashes


@pytest.fixture
def old_set(exported: Path, ingested: Path, tmp_path: Path) -> Path:
    assert run_forecast(exported, ingested, OLD_RANGE, out=tmp_path / "h.nc").stations_forecast > 0
    return tmp_path / "h.nc"


def test_sigkill_while_writing_keeps_the_old_set_and_the_next_run_cleans_up(exported, ingested, old_set, sets):
    killed = _forecast(exported, ingested, old_set, fault="written:3:KILL")  # .nc, .csv, scores .csv written
    assert killed.returncode == -signal.SIGKILL
    folder = old_set.parent
    assert verify_set(folder / "h.manifest.json") == sets["old"]
    left = _hidden(folder)
    assert len(left) == 3 and all(name.endswith(".tmp") for name in left)
    again = _forecast(exported, ingested, old_set)
    assert again.returncode == 0, again.stderr[-2000:]
    assert _hidden(folder) == [] and sorted(path.name for path in folder.iterdir()) == SET
    assert verify_set(folder / "h.manifest.json") == sets["new"]


def test_sigkill_while_renaming_is_finished_by_the_next_run(exported, ingested, old_set, sets):
    killed = _forecast(exported, ingested, old_set, fault="published:2:KILL")  # 2 of 4 files renamed
    assert killed.returncode == -signal.SIGKILL
    folder = old_set.parent
    assert verify_set(folder / "h.manifest.json") is None  # mixed files, no manifest: not to be trusted
    assert any(name.endswith(".journal") for name in _hidden(folder))
    nothing = subprocess.run([str(Path(sys.executable).parent / "hydroseq"), "forecast", "--model", str(exported),
                              "--data", str(ingested), "--issue-time", "2099-01-01", "--out", str(old_set)],
                             capture_output=True, text=True, timeout=300)
    # a failing run does not publish, but finds nothing to roll forward either
    assert nothing.returncode == ExitCode.NOTHING_PRODUCED  # an issue time after the data: nothing to forecast
    assert verify_set(folder / "h.manifest.json") is None
    again = _forecast(exported, ingested, old_set)
    assert again.returncode == 0, again.stderr[-2000:]
    assert _hidden(folder) == [] and verify_set(folder / "h.manifest.json") == sets["new"]


@pytest.mark.parametrize("moment, expected", [("written:2", "old"), ("published:1", "new")])
def test_sigterm_is_an_interrupt_that_leaves_no_temporaries(exported, ingested, old_set, sets, moment, expected):
    """SIGTERM while writing aborts (old set); during the commit it waits for the renames (new set)."""
    stopped = _forecast(exported, ingested, old_set, fault=f"{moment}:TERM")
    assert stopped.returncode == 128 + signal.SIGTERM, stopped.stderr[-2000:]
    assert "hydroseq forecast: interrupted (SIGTERM)" in stopped.stderr and "Traceback" not in stopped.stderr
    folder = old_set.parent
    assert _hidden(folder) == [] and sorted(path.name for path in folder.iterdir()) == SET
    assert verify_set(folder / "h.manifest.json") == sets[expected]
