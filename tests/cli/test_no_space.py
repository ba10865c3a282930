"""An output that does not fit gives one line and exit 7 (``ExitCode.NO_SPACE``), and leaves nothing partial.

Each case runs ``hydroseq`` as a real process whose writes really fail. Everywhere: the process's file
size limit (``RLIMIT_FSIZE``, set before it starts) is below the size of its output, so the write
fails with ``EFBIG``; netCDF4 loses that errno ("NetCDF: HDF error"), zarr keeps it. Where this
machine lets a test mount a file system (a tmpfs in a private mount namespace, ``unshare``): a
16 KiB tmpfs as the output folder, a real full disk (``ENOSPC``).
"""

from __future__ import annotations

import datetime as dt
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hydroseq.cli import main
from hydroseq.config import dump_config
from hydroseq.errors import ExitCode
from tests.fixtures import caravan_ingest_config

STATIONS = ["01022500", "02064000", "03015500"]
ISSUE = "2014-06-30"
FILE_SIZE_LIMIT = 8000  # bytes: below every output written here (a forecast's NetCDF is about 19 kB)
TMPFS_SIZE = "16k"
LEFT_MARKER = "--- left in the output folder:"


def _ingest_config(folder: Path) -> Path:
    path = folder / "ingest.yaml"
    path.write_text(dump_config(caravan_ingest_config(dt.date(2012, 1, 1), dt.date(2013, 12, 31), STATIONS)))
    return path


def _commands(kind: str, out_folder: Path, work: Path, exported: Path, ingested: Path) -> list[str]:
    if kind == "forecast":
        return ["forecast", "--model", str(exported), "--data", str(ingested), "--issue-time", ISSUE,
                "--out", str(out_folder / "forecast.nc")]
    suffix = ".zarr" if kind == "ingest_zarr" else ".nc"
    return ["ingest", "--config", str(_ingest_config(work)), "--out", str(out_folder / f"caravan{suffix}")]


def _assert_no_space_line(finished: subprocess.CompletedProcess, args: list[str], problem: str) -> str:
    """The one line of stderr: the command, the output (the last argument) and what ran out."""
    assert finished.returncode == ExitCode.NO_SPACE == 7, finished.stderr[-3000:]
    assert "Traceback" not in finished.stderr
    lines = finished.stderr.strip().splitlines()
    assert len(lines) == 1, finished.stderr
    assert lines[0].startswith(f"hydroseq {args[0]}: error: {args[-1]}: cannot be written: {problem}"), lines[0]
    return lines[0]


def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))


@pytest.mark.parametrize("kind", ["forecast", "ingest_nc", "ingest_zarr"])
def test_an_output_over_the_file_size_limit(kind: str, exported: Path, ingested: Path, tmp_path: Path) -> None:
    out_folder = tmp_path / "out"
    out_folder.mkdir()
    args = _commands(kind, out_folder, tmp_path, exported, ingested)
    earlier = {}
    if kind == "forecast":  # an earlier forecast there stays as it was
        assert main(["-q", *args]) == ExitCode.OK
        earlier = {path.name: path.read_bytes() for path in out_folder.iterdir()}
    finished = subprocess.run([sys.executable, "-m", "hydroseq.cli", "-q", *args], capture_output=True, text=True,
                              timeout=300, preexec_fn=_limit_file_size)
    _assert_no_space_line(finished, args, f"file too large: this process may write files of at most "
                                          f"{FILE_SIZE_LIMIT} bytes (ulimit -f)")
    assert {path.name: path.read_bytes() for path in out_folder.iterdir()} == earlier  # no temporaries, no partial


def _private_mount_prefix(probe_folder: Path) -> list[str] | None:
    """``unshare`` with a private mount namespace in which a tmpfs can be mounted here, or None."""
    if shutil.which("unshare") is None:
        return None
    prefix = ["unshare", "--mount"] if os.geteuid() == 0 else ["unshare", "--map-root-user", "--mount"]
    probe = subprocess.run([*prefix, "mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE}", "tmpfs", str(probe_folder)],
                           capture_output=True, timeout=60)
    return prefix if probe.returncode == 0 else None


@pytest.mark.parametrize("kind", ["forecast", "ingest_nc", "ingest_zarr"])
def test_a_full_disk(kind: str, exported: Path, ingested: Path, tmp_path: Path) -> None:
    """The report's case: a tiny tmpfs as the output folder. The tmpfs lives only in the process's mount
    namespace, so what is left in it is listed from inside, after the command."""
    out_folder = tmp_path / "tmpfs"
    out_folder.mkdir()
    prefix = _private_mount_prefix(out_folder)
    if prefix is None:
        pytest.skip("cannot mount a tmpfs in a private mount namespace here (unshare)")
    args = _commands(kind, out_folder, tmp_path, exported, ingested)
    script = ('mount -t tmpfs -o size="$1" tmpfs "$2" || exit 99; folder=$2; shift 2; "$@"; status=$?; '
              f'echo "{LEFT_MARKER}"; ls -A "$folder"; exit $status')
    finished = subprocess.run([*prefix, "sh", "-c", script, "sh", TMPFS_SIZE, str(out_folder), sys.executable, "-m",
                               "hydroseq.cli", "-q", *args], capture_output=True, text=True, timeout=300)
    line = _assert_no_space_line(finished, args, "no space left on device")
    assert " needed; " in line and line.endswith(f" free in {out_folder} when the write failed)"), line
    assert finished.stdout.split(LEFT_MARKER, 1)[1].split() == []
