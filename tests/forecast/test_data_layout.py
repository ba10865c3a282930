"""A data file whose layout is not the model's is refused with one line naming the difference (exit 4).

The model is the shared tiny chain's (per-step, no observed target as an input), exported from a run
on the ingested bundled Caravan data; every file here is that ingested file edited, or the same
basins ingested on another grid.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from pathlib import Path

import pytest
import xarray as xr

from hydroseq.cli import main
from hydroseq.errors import ExitCode, InputDataError
from hydroseq.export import METADATA_FILE
from hydroseq.forecast import run_forecast
from hydroseq.ingest import ingest
from tests.fixtures import caravan_ingest_config

ISSUE = "2014-06-30"


def _refused(model: Path, data: Path, out: Path, message: str, capsys: pytest.CaptureFixture) -> None:
    """``run_forecast`` raises ``message`` (the whole text), and the CLI prints it as its one line and exits 4."""
    with pytest.raises(InputDataError, match=f"^{re.escape(message)}$"):
        run_forecast(model, data, ISSUE, out=out)
    assert main(["-q", "forecast", "--model", str(model), "--data", str(data), "--issue-time", ISSUE,
                 "--out", str(out)]) == ExitCode.INPUT_DATA
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and message in error and "Traceback" not in error
    assert not out.exists()


@pytest.mark.parametrize("variable, role", [("temperature_2m_mean", "dynamic input"), ("aridity", "static attribute"),
                                            ("streamflow", "target")])
def test_a_file_lacking_a_variable_the_model_reads_is_refused_naming_it(exported: Path, ingested: Path, tmp_path: Path,
                                                                       edited_copy, capsys, variable: str,
                                                                       role: str) -> None:
    def remove(dataset: xr.Dataset) -> None:
        del dataset[variable]

    data = edited_copy(ingested, tmp_path / "lacking.nc", remove)
    message = f"{data}: the model reads variables the file lacks: {variable} ({role})"
    _refused(exported, data, tmp_path / "f.nc", message, capsys)


@pytest.mark.parametrize("variable, units, message", [
    ("streamflow", "m3 s-1", "variable streamflow is in m3 s-1; the model was trained on mm d-1"),
    ("temperature_2m_mean", "K", "variable temperature_2m_mean is in K; the model was trained on degC"),
    ("p_mean", None, "variable p_mean has no units attribute; the model was trained on mm d-1"),
])
def test_units_other_than_the_models_are_refused(exported: Path, ingested: Path, tmp_path: Path, edited_copy, capsys,
                                                 variable: str, units: str | None, message: str) -> None:
    def relabel(dataset: xr.Dataset) -> None:
        if units is None:
            del dataset[variable].attrs["units"]
        else:
            dataset[variable].attrs["units"] = units

    data = edited_copy(ingested, tmp_path / "units.nc", relabel)
    _refused(exported, data, tmp_path / "f.nc", f"{data}: {message}", capsys)


def test_a_model_that_records_no_units_does_not_compare_them(exported: Path, ingested: Path, tmp_path: Path,
                                                            edited_copy) -> None:
    """Model directories exported before the units were recorded still forecast (metadata.json has no checksum)."""
    old = shutil.copytree(exported, tmp_path / "old_model")
    metadata = json.loads((old / METADATA_FILE).read_text())
    assert metadata.pop("input_units")["streamflow"] == "mm d-1"
    (old / METADATA_FILE).write_text(json.dumps(metadata))
    data = edited_copy(ingested, tmp_path / "units.nc",
                       lambda dataset: dataset["streamflow"].attrs.update(units="m3 s-1"))
    assert run_forecast(old, data, ISSUE, out=tmp_path / "f.nc").stations_forecast == 31


@pytest.fixture(scope="module")
def two_day_grid(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two of the bundled basins ingested for 2014 on a 2-day grid (the model's grid is daily)."""
    config = caravan_ingest_config(dt.date(2014, 1, 1), dt.date(2014, 12, 31), stations=["01022500", "01547700"])
    config.grid.frequency = "2D"
    out = tmp_path_factory.mktemp("two_day") / "caravan_2d.nc"
    ingest(config, out, show_progress=False)
    return out


def test_a_grid_frequency_other_than_the_models_is_refused(exported: Path, two_day_grid: Path, tmp_path: Path,
                                                          capsys) -> None:
    with xr.open_dataset(two_day_grid) as dataset:
        assert dataset.attrs["grid_frequency"] == "2D"
    message = f"{two_day_grid}: grid frequency 2D differs from the model's 1D"
    _refused(exported, two_day_grid, tmp_path / "f.nc", message, capsys)
