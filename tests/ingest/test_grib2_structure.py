"""A GRIB2 run whose message lengths are corrupted: every section length of a real example run's message set to
0, 3 or past the message's end is refused in one line naming the file, the message and the section, before
ecCodes reads it (ecCodes failed on a key it could not find, exit 70, decoded the run anyway after "assuming"
another length, or stopped the process on an assertion for a bitmap section of length 0)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hydroseq.errors import ExitCode, InputDataError
from hydroseq.ingest.readers.grib_structure import check_messages

from .grib_builders import ENS_RUNS, copy_runs, grib_ingest_config


def _sections(data: bytes, start: int = 0) -> dict[int, int]:
    """Section number -> its byte offset, in the GRIB2 message at ``start``."""
    position, found = start + 16, {}
    while data[position:position + 4] != b"7777":
        found[data[position + 4]] = position
        position += int.from_bytes(data[position:position + 4], "big")
    return found


def _corrupt(path: Path, section: int, length: int, message: int = 0) -> None:
    """Write ``length`` as the length of ``section`` of the message that starts at byte ``message``."""
    data = bytearray(path.read_bytes())
    at = _sections(bytes(data), message)[section]
    data[at:at + 4] = length.to_bytes(4, "big")
    path.write_bytes(bytes(data))


@pytest.fixture
def run(tmp_path: Path, data_dir: Path) -> Path:
    return copy_runs(data_dir, "ens", ENS_RUNS[:1], tmp_path / "runs")[0]


def test_the_example_runs_are_laid_out_as_their_lengths_say(data_dir: Path) -> None:
    for path in sorted((data_dir / "forecast_grib2").glob("*/*.grib2"))[:4]:
        assert check_messages(path) > 0


@pytest.mark.parametrize("section", [1, 3, 4, 5, 6, 7])
@pytest.mark.parametrize("length, problem", [(0, "shorter than its fixed part"), (3, "shorter than its fixed part"),
                                             (999_999, "past the message's end")])
def test_a_corrupted_section_length_is_named(run: Path, section: int, length: int, problem: str) -> None:
    second = int.from_bytes(run.read_bytes()[8:16], "big")  # the first message's length: where the second starts
    _corrupt(run, section, length, second)
    with pytest.raises(InputDataError) as refused:
        check_messages(run)
    assert str(refused.value) == (f"{run}: GRIB message 2 at byte {second} is corrupt: section {section} gives its "
                                  f"length as {length} bytes, " + str(refused.value).split(" bytes, ", 1)[1])
    assert problem in str(refused.value)


@pytest.mark.parametrize("section, length", [(1, 999_999), (6, 0), (7, 3)])
def test_hydroseq_ingest_refuses_it_in_one_line_exit_4(tmp_path: Path, data_dir: Path, section: int,
                                                       length: int) -> None:
    """Through the command, in a process of its own: ecCodes' assertion would have stopped this one."""
    files = copy_runs(data_dir, "ens", ENS_RUNS[:2], tmp_path / "runs")
    _corrupt(files[1], section, length)
    config = tmp_path / "ingest.yaml"
    config.write_text(yaml.safe_dump(grib_ingest_config(data_dir, str(tmp_path / "runs" / "*.grib2"), 10,
                                                        ["0/240/12"])))
    out = tmp_path / "out.nc"
    done = subprocess.run([sys.executable, "-m", "hydroseq", "ingest", "--config", str(config), "--out", str(out),
                           "-q"], capture_output=True, text=True, timeout=300)
    error = done.stderr.strip()
    assert done.returncode == ExitCode.INPUT_DATA, error[-2000:]
    assert error == (f"hydroseq ingest: error: {files[1]}: GRIB message 1 at byte 0 is corrupt: section {section} "
                     f"gives its length as {length} bytes, " + error.split(" bytes, ", 1)[1])
    assert not out.exists()
