"""What a GRIB2 run holds, refused through ``hydroseq ingest`` in one line naming the file, the run and where:
precipitation no point on Earth has had in the time (5 m from one step on, 5 m from step 0 on, 1.5 m in one 12 h
step), a run held by two files, and a parameter with hundreds of steps more than the other (the steps summarised,
not listed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from hydroseq.cli import main
from hydroseq.errors import ExitCode

from .grib_builders import ENS_RUNS, HRES_RUNS, Message, copy_runs, grib_ingest_config, rewrite


def _ingest(tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str], members: int | None = 10,
            steps: str = "0/240/12") -> str:
    """``hydroseq ingest`` of the runs in ``tmp_path/runs``: refused (exit 4, one line, nothing written)."""
    config = tmp_path / "ingest.yaml"
    config.write_text(yaml.safe_dump(grib_ingest_config(data_dir, str(tmp_path / "runs" / "*.grib2"), members,
                                                        [steps])))
    out = tmp_path / "out.nc"
    status = main(["ingest", "--config", str(config), "--out", str(out), "-q"])
    error = capsys.readouterr().err.strip()
    assert status == ExitCode.INPUT_DATA, error
    assert len(error.splitlines()) == 1 and "Traceback" not in error and not out.exists()
    return error


def _tp(from_step: float, metres: float, add: bool = False):
    """A change that sets tp to ``metres`` from ``from_step`` on (``add``: adds them to the run's totals from then
    on, so that one step's amount grows by ``metres`` and the others stay)."""
    def change(keys: Message, values: np.ndarray) -> np.ndarray:
        if keys["shortName"] != "tp" or float(str(keys["step"])) < from_step:
            return values
        return values + metres if add else np.full_like(values, metres)
    return change


@pytest.mark.parametrize("change, expected", [
    (_tp(36.0, 5.0), "5 m accumulated by step 36h (station 01022500, member 0) is above 2.32 m, more rain than "
                     "ever observed in 36 h"),
    (_tp(0.0, 5.0), "5 m accumulated by step 0h (station 01022500, member 0) is above 5e-05 m, where nothing has "
                    "accumulated yet"),
    (_tp(228.0, 1.5, add=True), "per-step value 1.5"),
], ids=["5 m from step 36 on", "5 m from step 0 on", "1.5 m in one 12 h step"])
def test_precipitation_no_point_ever_had_is_refused_naming_the_run_and_step(tmp_path, data_dir, capsys, change,
                                                                            expected):
    files = copy_runs(data_dir, "ens", ENS_RUNS[:3], tmp_path / "runs")
    rewrite(files[1], change=change)
    error = _ingest(tmp_path, data_dir, capsys)
    assert error.startswith(f"hydroseq ingest: error: {files[1]} (reference time 2014-09-22 00:00:00): variable "
                            "precipitation_forecast (tp): "), error
    assert expected in error and "(set valid_max of the variable)" in error, error
    if "per-step" in expected:
        assert "over step (216h, 228h] (station 01022500, member 0) is above 1.37 m, more rain than ever observed " \
               "in 12 h" in error


def test_a_run_in_two_files_is_refused_naming_both(tmp_path, data_dir, capsys):
    files = copy_runs(data_dir, "ens", ENS_RUNS[:3], tmp_path / "runs")
    again = tmp_path / "runs" / f"refetched-{files[1].name}"
    again.write_bytes(files[1].read_bytes())
    rewrite(again, change=lambda keys, values: values + 1.0 if keys["shortName"] == "2t" else values)
    error = _ingest(tmp_path, data_dir, capsys)
    assert error == (f"hydroseq ingest: error: {again} (reference time 2014-09-22 00:00:00): reference time "
                     f"2014-09-22 00:00:00 is also in {files[1]}")


def test_a_parameter_with_hundreds_more_steps_is_summarised_in_a_short_line(tmp_path, data_dir, capsys):
    import eccodes

    files = copy_runs(data_dir, "hres", HRES_RUNS[:3], tmp_path / "runs")
    with files[1].open("rb") as run:  # the last tp message (step 240 h), again at 300 steps after it
        while (message := eccodes.codes_grib_new_from_file(run)) is not None:
            if eccodes.codes_get(message, "shortName") == "tp" and eccodes.codes_get_long(message, "endStep") == 240:
                break
            eccodes.codes_release(message)
    with files[1].open("ab") as out:
        for hours in range(241, 541):
            eccodes.codes_set(message, "stepRange", f"0-{hours}")
            eccodes.codes_write(message, out)
    eccodes.codes_release(message)
    error = _ingest(tmp_path, data_dir, capsys, members=None, steps="0/240/6")
    assert error == (f"hydroseq ingest: error: {files[1]}: the parameters have different step values: tp has 0, 6, "
                     "12, ..., 538, 539, 540 (341 values); 2t has 0, 6, 12, ..., 228, 234, 240 (41 values)")
