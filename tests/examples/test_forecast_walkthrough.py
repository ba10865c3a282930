"""``examples/forecast_walkthrough.ipynb`` is committed without outputs and runs from top to bottom, in a Jupyter
kernel, on a quantile forecast and hindcast of the test chain (the report tests' files: user thresholds, an
ungauged, a skipped and an HTML-named station); what it shows agrees with the files read without it."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "forecast_walkthrough.ipynb"
PARAMETERS = ("HYDROSEQ_FORECAST", "HYDROSEQ_HINDCAST", "HYDROSEQ_DATA")
FIGURES = ("forecast-hydrograph", "skill-per-lead", "hindcast-hydrograph")  # tags of the cells that draw one
# The kernel's matplotlib backend: each figure becomes a PNG output of its cell; no display, whatever the
# environment's own MPLBACKEND says.
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"
# Run after the notebook's own cells, in its kernel: what it computed, as one JSON line.
REPORT_CELL = """
import json
print(json.dumps({"stations": list(chances.index), "columns": list(chances.columns),
                  "highest": [None if pd.isna(p) else float(p) for p in chances["highest"]], "plotted": station,
                  "leads": list(skill.index), "model": list(skill["median NSE, model"]),
                  "persistence": list(skill["median NSE, persistence"])}))
"""


def test_the_committed_notebook_has_no_outputs_and_takes_its_files_from_the_environment() -> None:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(not cell.outputs and cell.execution_count is None for cell in code)
    assert code[0].metadata.get("tags") == ["parameters"]
    assert all(f'os.environ.get("{name}"' in code[0].source for name in PARAMETERS)
    tagged = {tag for cell in code for tag in cell.metadata.get("tags", [])}
    assert set(FIGURES) <= tagged


@pytest.mark.slow
def test_the_notebook_runs_on_a_quantile_forecast_and_its_hindcast(report_inputs: dict[str, Path],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    for name, key in zip(PARAMETERS, ("forecast", "hindcast", "data"), strict=True):
        monkeypatch.setenv(name, str(report_inputs[key]))
    monkeypatch.setenv("MPLBACKEND", INLINE_BACKEND)
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(REPORT_CELL))
    # A cell that raises stops the run with CellExecutionError (allow_errors is off).
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    shown = json.loads(notebook.cells[-1].outputs[-1]["text"])
    text = "".join(output.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                   for output in cell.outputs)

    assert "issued at the end of local day 2014-09-30 (Etc/GMT+8), UTC label 2014-10-01 08:00 UTC" in text
    difference = text.split("streamflow_m3s by at most ")[1].split(" m³/s")[0]
    assert float(difference) < 1e-3
    for tag in FIGURES:
        cell = next(cell for cell in notebook.cells if tag in cell.metadata.get("tags", []))
        assert any("image/png" in output.get("data", {}) for output in cell.outputs), tag

    with xr.open_dataset(report_inputs["forecast"]) as forecast:
        stations = [str(station) for station in forecast["station"].values]
        labels = [str(label) for label in forecast["threshold_label"].values]
        highest = forecast["streamflow_exceedance_probability"].max(["lead", "threshold"]).to_series()
    assert sorted(shown["stations"]) == sorted(stations)
    assert set(labels) <= set(shown["columns"])
    expected = highest.reindex(shown["stations"]).to_numpy(np.float64)
    np.testing.assert_allclose(np.asarray(shown["highest"], dtype=np.float64), expected, rtol=1e-6)
    known = expected[np.isfinite(expected)]
    assert known.size > 1 and np.all(np.diff(known) <= 0) and np.isfinite(expected[:known.size]).all()
    assert shown["plotted"] == shown["stations"][0]

    scores = pd.read_csv(report_inputs["hindcast"].with_name("hindcast_scores.csv"), dtype={"station": str})
    median = scores.groupby(["forecast", "lead"])["nse"].median()
    assert shown["leads"] == ["lead 1 d", "lead 2 d", "lead 3 d"]
    for forecast_name in ("model", "persistence"):
        np.testing.assert_allclose(shown[forecast_name], median[forecast_name].loc[[1, 2, 3]].to_numpy(), atol=1e-9)
