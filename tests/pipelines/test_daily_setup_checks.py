"""The daily job's checks before it ingests anything, and what it cleans up first: a date that is no calendar
day is a usage error (2), commands that do not start a setup error (3), and the ``latest.*`` links a run
stopped while it swapped them are removed by the next run. No model needed: each run stops before the forecast."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hydroseq.errors import ExitCode

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "pipelines" / "daily_forecast.sh"


@pytest.fixture
def deployment(tmp_path: Path) -> dict[str, str]:
    """An ingest config, a 'dataset' that is not NetCDF and a model folder with a metadata file: enough for the
    job's own checks; the window step then fails on the dataset (exit 4)."""
    (tmp_path / "ingest.yaml").write_text((REPO_ROOT / "configs" / "ingest_caravan_daily.yaml").read_text())
    (tmp_path / "ingested.nc").write_text("not NetCDF")
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "metadata.json").write_text("{}")
    bin_dir = Path(sys.executable).parent
    return {"HYDROSEQ_INGEST_CONFIG": str(tmp_path / "ingest.yaml"), "HYDROSEQ_DATA": str(tmp_path / "ingested.nc"),
            "HYDROSEQ_MODEL": str(tmp_path / "model"), "HYDROSEQ_PUBLISH_DIR": str(tmp_path / "forecasts"),
            "HYDROSEQ_WORK_DIR": str(tmp_path / "work"), "HYDROSEQ": str(bin_dir / "hydroseq"),
            "PYTHON": sys.executable}


def _run(issue: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), issue], env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=300, cwd=REPO_ROOT)


@pytest.mark.parametrize("issue", ["2018-13-01", "2018-02-30", "2018-1-3"])
def test_an_issue_date_that_is_no_calendar_day_is_a_usage_error(issue: str, tmp_path: Path) -> None:
    """Also with the defaults, whose dataset does not exist here (it was 3, 'dataset not found')."""
    done = _run(issue, {"HYDROSEQ_WORK_DIR": str(tmp_path / "work"), "HYDROSEQ_DATA": str(tmp_path / "absent.nc")})
    assert done.returncode == ExitCode.USAGE, done.stderr
    assert f"FAILED (2): issue date '{issue}' is not a calendar day YYYY-MM-DD" in done.stderr


def test_commands_that_do_not_start_are_a_setup_error(deployment: dict[str, str], tmp_path: Path) -> None:
    """A broken install exits 3 before anything is read, naming the command and its last line (it was 1, the
    status of late data, or 127)."""
    broken = tmp_path / "broken_hydroseq"
    broken.write_text("#!/bin/sh\necho 'Traceback (most recent call last):' >&2\n"
                      "echo \"ModuleNotFoundError: No module named 'numpy'\" >&2\nexit 1\n")
    broken.chmod(0o755)
    done = _run("2014-06-30", {**deployment, "HYDROSEQ": str(broken)})
    assert done.returncode == ExitCode.CONFIG, done.stderr
    assert (f"FAILED (3): the hydroseq command '{broken}' does not start (a broken install?): ModuleNotFoundError: "
            "No module named 'numpy'") in done.stderr
    absent = _run("2014-06-30", {**deployment, "HYDROSEQ": str(tmp_path / "no" / "hydroseq")})
    assert absent.returncode == ExitCode.CONFIG and "does not start" in absent.stderr, absent.stderr
    python = _run("2014-06-30", {**deployment, "PYTHON": str(broken)})
    assert python.returncode == ExitCode.CONFIG and f"'{broken}' cannot import hydroseq" in python.stderr
    flag = _run("2014-06-30", {**deployment, "HYDROSEQ_PI_XML": "yes"})
    assert flag.returncode == ExitCode.CONFIG and "HYDROSEQ_PI_XML is 'yes', not 1 or 0" in flag.stderr


def test_the_next_run_removes_a_latest_link_left_half_swapped(deployment: dict[str, str], tmp_path: Path) -> None:
    """A run killed between making ``.latest.nc.<pid>`` and renaming it onto ``latest.nc`` left the link; the next
    run removes it as soon as it holds the lock (here it then fails on the dataset, exit 4)."""
    published = tmp_path / "forecasts"
    published.mkdir()
    (published / "forecast_2014-06-29.nc").write_text("published")
    os.symlink("forecast_2014-06-29.nc", published / "latest.nc")
    for name in (".latest.nc.4242", ".latest.manifest.json.17"):
        os.symlink("forecast_2014-06-30.nc", published / name)
    (published / ".latest.notes").write_text("not the job's")  # not a link of the job's: kept
    done = _run("2014-06-30", deployment)
    assert done.returncode == ExitCode.INPUT_DATA, done.stderr
    assert sorted(path.name for path in published.iterdir()) == [".latest.notes", "forecast_2014-06-29.nc",
                                                                 "latest.nc"]
    assert os.readlink(published / "latest.nc") == "forecast_2014-06-29.nc"
    assert f"removed {published}/.latest.nc.4242, left by a run stopped while it swapped the latest.* links" in \
        done.stderr
