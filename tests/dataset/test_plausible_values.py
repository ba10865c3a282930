"""Values outside ingest's plausible ranges never reach a forecast (issue 53, item 10).

The week-ahead chain's data file (:mod:`tests.week_ahead`: six basins ingested with their 7-day weather forecasts,
a model reading the forcing, the observed discharge and both forecasts for leads 1-7) is copied with one value
edited, as a file written by other code or edited after its ingest would hold it (no manifest beside the copy):
``hydroseq forecast`` refuses it in one line naming the file, the station, the time and the variable (exit 4,
nothing written), as do its hindcasts and the Python API; the served model refuses the same rows.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from hydroseq.cli import main
from hydroseq.errors import ExitCode, InputDataError
from hydroseq.export import ExportedModel
from hydroseq.forecast import IngestedFile, run_forecast
from hydroseq.serving.input_bounds import input_bounds
from hydroseq.serving.pyfunc_model import ForecastModel, frame_from_station_data
from hydroseq.serving.served_input import forecast_columns
from tests.week_ahead import FORECAST_INPUTS, ISSUE, ISSUE_LABEL, STATIONS, WeekAhead

RAIN = FORECAST_INPUTS[0]
STATION = STATIONS[1]
AT = f"(station {STATION}, 2014-10-01T08:00:00Z)"

Edit = Callable[[xr.Dataset, int], None]


def _copy(week_ahead: WeekAhead, out: Path, edit: Edit) -> Path:
    """The chain's data file after ``edit(dataset, issue step)``."""
    with xr.open_dataset(week_ahead["data"]) as opened:
        dataset = opened.load()
    edit(dataset, int(np.flatnonzero(dataset["time"].values == ISSUE_LABEL)[0]))
    dataset.to_netcdf(out)
    return out


def _set(name: str, value: float, lead: int | None = None, steps_before: int = 0) -> Edit:
    """Set ``name`` of :data:`STATION` at the issue step (``steps_before`` earlier; a forecast: at ``lead``)."""
    def edit(dataset: xr.Dataset, issue: int) -> None:
        row = STATIONS.index(STATION)
        if lead is None:
            dataset[name].values[row, issue - steps_before] = value
        else:
            dataset[name].values[row, issue - steps_before, lead - 1] = value
    return edit


@pytest.mark.parametrize(("name", "value", "lead", "expected"), [
    ("total_precipitation_sum", 1e30, None, "total_precipitation_sum 1e+30 mm is outside 0 .. 50000 mm"),
    ("total_precipitation_sum", -50.0, None, "total_precipitation_sum -50 mm is outside 0 .. 50000 mm"),
    ("temperature_2m_mean", 1e30, None, "temperature_2m_mean 1e+30 degC is outside -90 .. 60 degC"),
    ("streamflow", 1e30, None, "streamflow 1e+30 mm d-1 is outside 0 .. 50000 mm d-1"),
    (RAIN, -5.0, 3, f"{RAIN} at lead 3 -5 mm is outside 0 .. 50000 mm"),
    (RAIN, 1e30, 3, f"{RAIN} at lead 3 1e+30 mm is outside 0 .. 50000 mm"),
    ("potential_evaporation_sum", np.inf, None, "potential_evaporation_sum inf mm is not finite"),
])
def test_an_implausible_value_at_the_issue_step_is_refused_in_one_line(
        week_ahead: WeekAhead, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, value: float,
        lead: int | None, expected: str) -> None:
    data = _copy(week_ahead, tmp_path / "edited.nc", _set(name, value, lead))
    out = tmp_path / "out" / "forecast.nc"
    capsys.readouterr()
    status = main(["forecast", "--model", str(week_ahead["model"]), "--data", str(data), "--issue-time", ISSUE,
                   "--out", str(out)])
    error = capsys.readouterr().err.strip()
    assert status == ExitCode.INPUT_DATA, error
    assert error == f"hydroseq forecast: error: {data} {AT}: {expected}" + (
        "" if "finite" in expected else f", the plausible range ingest applies to {name}")
    assert not out.parent.exists()


def test_hindcasts_and_the_python_api_refuse_what_the_forecast_reads_and_only_that(week_ahead: WeekAhead,
                                                                                   tmp_path: Path) -> None:
    """A hindcast reads every issue's window: 1e30 mm/d of discharge ten days before its last issue is refused
    (the Python API raises the error, nothing is written). A value the forecast does not read is not: one before
    the first issue's history, and negative evaporation within the ``valid_min`` of -20 mm/d the file's ingest
    config sets."""
    discharge = _copy(week_ahead, tmp_path / "discharge.nc", _set("streamflow", 1e30, steps_before=10))
    with pytest.raises(InputDataError, match=rf"\(station {STATION}, 2014-09-21T08:00:00Z\): streamflow 1e\+30 mm d-1 "
                                             "is outside 0 .. 50000 mm d-1"):
        run_forecast(week_ahead["model"], discharge, "2014-09-01..2014-09-30", out=tmp_path / "hindcast.nc",
                     show_progress=False)
    assert not list(tmp_path.glob("hindcast*"))
    early = _copy(week_ahead, tmp_path / "early.nc", _set("total_precipitation_sum", 1e30, steps_before=200))
    assert run_forecast(week_ahead["model"], early, ISSUE, out=tmp_path / "early_f.nc",
                        show_progress=False).published is not None
    evaporation = _copy(week_ahead, tmp_path / "dew.nc", _set("potential_evaporation_sum", -5.0))
    assert run_forecast(week_ahead["model"], evaporation, ISSUE, out=tmp_path / "dew_f.nc",
                        show_progress=False).published is not None


def _served(week_ahead: WeekAhead, bounds: bool) -> tuple[ForecastModel, pd.DataFrame]:
    """The chain's model as a pyfunc model (with the bounds its logging records, or none) and its rows."""
    model = ForecastModel()
    model.exported = ExportedModel(week_ahead["model"])
    metadata = model.exported.metadata
    model.bounds = input_bounds(week_ahead["data"], metadata) if bounds else None
    model.thresholds, model.stations = None, None
    with IngestedFile(week_ahead["data"], metadata) as source:
        end = int(np.flatnonzero(source.times == ISSUE_LABEL)[0])
        rows = frame_from_station_data(source.read(end - 40, end + 1), metadata)
    return model, rows


@pytest.mark.parametrize("bounds", [True, False])
def test_the_served_model_refuses_an_implausible_forecast_at_any_lead(week_ahead: WeekAhead, bounds: bool) -> None:
    """With the bounds its logging records (0 .. 50000 mm for the daily forecast amount) -5 mm and 1e30 mm at
    lead 3 are refused; without any recorded (a model logged before them) 1e30 still is (beyond ±1e30)."""
    model, rows = _served(week_ahead, bounds)
    column = forecast_columns(model.exported.metadata)[2]  # the rain forecast's lead 3
    at_issue = (rows["time"] == ISSUE_LABEL) & (rows["station"] == STATION)
    assert np.isfinite(model.predict(None, rows)["value"]).all()
    for value in (1e30, -5.0) if bounds else (1e30,):
        edited = rows.copy()
        edited.loc[at_issue, column] = value
        with pytest.raises(InputDataError) as error:
            model.predict(None, edited)
        assert str(error.value).startswith(f"model input {AT}: {column} {value:g} mm ")
