"""Leads beyond a product's horizon (issue 47): a model reading weather forecasts for leads 1-7 never makes a
silently shorter forecast from a product that covers fewer.

* a data file whose forecast variables hold leads 1-3: one line naming the file and the leads, exit 4, nothing
  written (CLI and Python API; the served model names the columns it lacks);
* a run valid at the issue time without values for leads 4-7 (at some stations): one line naming the file, the
  issue time, the input and the leads, exit 4, nothing written; a hindcast over that issue time too; the served
  model refuses the same rows;
* as distinct from a whole run missing (every lead), which the model reads as "no forecast", as trained with
  ``forecast_hiding``, and which counts toward exit 5 (``PARTIAL``) as before;
* and from a late run read in place of the one due (``use_previous``), whose leads shift and end early: read,
  and flagged as late with the leads it covers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from hydroseq.cli import main
from hydroseq.errors import ExitCode, InputDataError
from hydroseq.forecast import IngestedFile, run_forecast
from hydroseq.serving.pyfunc_model import ForecastModel, frame_from_station_data
from hydroseq.serving.served_input import forecast_columns
from tests.week_ahead import FORECAST_INPUTS, ISSUE, ISSUE_LABEL, STATIONS, WeekAhead

RAIN = FORECAST_INPUTS[0]


def _copy(week_ahead: WeekAhead, out: Path, edit: Callable[[xr.Dataset, int], xr.Dataset | None]) -> Path:
    """The chain's data file after ``edit(dataset, issue step)`` (returning a new dataset, or editing in place)."""
    with xr.open_dataset(week_ahead["data"]) as opened:
        dataset = opened.load()
    issue = int(np.flatnonzero(dataset["time"].values == ISSUE_LABEL)[0])
    dataset = edit(dataset, issue) or dataset
    dataset.to_netcdf(out)
    return out


def _refused(week_ahead: WeekAhead, data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
             issue_time: str = ISSUE, *options: str) -> str:
    """``hydroseq forecast`` on ``data``: exit 4, one line naming the file, nothing written; the line."""
    out = tmp_path / "out" / "forecast.nc"
    status = main(["forecast", "--model", str(week_ahead["model"]), "--data", str(data), "--issue-time", issue_time,
                   "--out", str(out), *options])
    error = capsys.readouterr().err.strip()
    assert status == ExitCode.INPUT_DATA, error
    assert len(error.splitlines()) == 1 and "Traceback" not in error and str(data) in error, error
    assert not out.parent.exists() or not any(out.parent.iterdir())
    return error


def test_a_three_lead_data_file_is_refused_by_a_seven_lead_model(week_ahead: WeekAhead, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    data = _copy(week_ahead, tmp_path / "three_leads.nc", lambda dataset, _: dataset.isel(lead=slice(0, 3)))
    error = _refused(week_ahead, data, tmp_path, capsys)
    assert "reads weather-forecast leads 1-7" in error
    assert f"{RAIN} has leads 1-3" in error and f"{FORECAST_INPUTS[1]} has leads 1-3" in error
    with pytest.raises(InputDataError, match=r"has leads 1-3"):
        run_forecast(week_ahead["model"], data, ISSUE, out=tmp_path / "api.nc", show_progress=False)
    assert not (tmp_path / "api.nc").exists()


def _short_run(dataset: xr.Dataset, issue: int) -> None:
    """The run valid at the issue step ends after lead 3 at the first two stations (its precipitation only)."""
    dataset[RAIN].values[:2, issue, 3:] = np.nan


def test_a_run_without_the_last_leads_at_the_issue_time_is_refused(week_ahead: WeekAhead, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    data = _copy(week_ahead, tmp_path / "short_run.nc", _short_run)
    error = _refused(week_ahead, data, tmp_path, capsys)
    assert "(time 2014-10-01T08:00:00Z)" in error
    assert f"{RAIN} has no value at lead(s) 4-7 of the model's 1-7" in error
    assert f"2 of 6 stations (first {STATIONS[0]}, read from the run of 2014-10-01T02:00Z)" in error
    assert "refused rather than read as a shorter forecast" in error
    # the fallback option does not make it a forecast without the product: it is not a missing run
    _refused(week_ahead, data, tmp_path, capsys, ISSUE, "--missing-forecast-input", "fallback")
    # a hindcast over that issue time, from the API
    with pytest.raises(InputDataError, match=r"time 2014-10-01T08:00:00Z.*lead\(s\) 4-7"):
        run_forecast(week_ahead["model"], data, "2014-09-25..2014-10-05", out=tmp_path / "hindcast.nc",
                     show_progress=False)
    assert not list(tmp_path.glob("hindcast*"))
    # the issue time before it reads a whole run: forecast as usual
    assert run_forecast(week_ahead["model"], data, "2014-09-29", out=tmp_path / "day_before.nc",
                        show_progress=False).published is not None


def test_a_whole_run_missing_is_read_as_no_forecast_and_counts_toward_partial(
        week_ahead: WeekAhead, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def no_run(dataset: xr.Dataset, issue: int) -> None:
        for name in FORECAST_INPUTS:
            dataset[name].values[:, issue] = np.nan
            dataset[f"{name}_reference_time"].values[:, issue] = np.datetime64("NaT", "ns")

    data = _copy(week_ahead, tmp_path / "no_run.nc", no_run)
    out = tmp_path / "forecast.nc"
    status = main(["--json", "forecast", "--model", str(week_ahead["model"]), "--data", str(data), "--issue-time",
                   ISSUE, "--out", str(out), "--max-skipped-share", "0.2"])
    summary = json.loads(capsys.readouterr().out)
    assert status == ExitCode.PARTIAL and out.exists()
    assert sorted(summary["without_weather_forecast"]) == sorted(STATIONS)
    with xr.open_dataset(out) as forecast:
        assert forecast["lead"].values.tolist() == list(range(1, 8))
        assert np.isfinite(forecast["streamflow"].values).all() and not forecast["forecast_input_read"].values.any()


def test_a_late_run_whose_leads_end_early_is_read_and_flagged_with_the_leads_it_covers(
        week_ahead: WeekAhead, tmp_path: Path) -> None:
    """The run due at the issue time did not come; the day before's is read (``use_previous``), its leads
    shifted by a day, so lead 7 has no value: flagged as late, not refused."""
    def late(dataset: xr.Dataset, issue: int) -> None:
        for name in FORECAST_INPUTS:
            values = dataset[name].values
            values[:, issue, :6], values[:, issue, 6] = values[:, issue - 1, 1:], np.nan
            dataset[f"{name}_reference_time"].values[:, issue] = dataset[f"{name}_reference_time"].values[:, issue - 1]

    data = _copy(week_ahead, tmp_path / "late.nc", late)
    run = run_forecast(week_ahead["model"], data, ISSUE, out=tmp_path / "late_forecast.nc", show_progress=False)
    assert run.published is not None and sorted(run.result.late_weather_forecast) == sorted(STATIONS)
    assert ("read the run of 2014-09-30T02:00Z (30 h old), which covers lead(s) 1-6 of 1-7 only"
            in run.result.late_weather_forecast[STATIONS[0]])


def _column(model: ForecastModel, k: int, lead: int) -> str:
    """The served model's input column of forecast input ``k`` at ``lead`` (``<variable>_forecast_lead<lead>``)."""
    return forecast_columns(model.exported.metadata)[k * 7 + lead - 1]


def _served_frame(week_ahead: WeekAhead, model: ForecastModel) -> pd.DataFrame:
    metadata = model.exported.metadata
    with IngestedFile(week_ahead["data"], metadata) as source:
        end = int(np.flatnonzero(source.times == ISSUE_LABEL)[0])
        data = source.read(end - 40, end + 1)
    return frame_from_station_data(data, metadata)


def test_the_served_model_refuses_rows_without_the_last_leads(week_ahead: WeekAhead) -> None:
    from hydroseq.export import ExportedModel

    model = ForecastModel()  # what load_context gives a model logged without thresholds or a station table
    model.exported = ExportedModel(week_ahead["model"])
    model.bounds, model.thresholds, model.stations = None, None, None
    frame = _served_frame(week_ahead, model)
    forecast = model.predict(None, frame)
    assert forecast.groupby("station")["lead"].apply(list).to_dict() == {s: list(range(1, 8)) for s in STATIONS}
    at_issue = (frame["time"] == ISSUE_LABEL) & (frame["station"] == STATIONS[1])
    short = frame.copy()
    short.loc[at_issue, [_column(model, 0, lead) for lead in (5, 6, 7)]] = np.nan
    with pytest.raises(InputDataError) as error:
        model.predict(None, short)
    message = str(error.value)
    assert len(message.splitlines()) == 1 and message.startswith(f"model input (station {STATIONS[1]}, "
                                                                 "2014-10-01T08:00:00Z)")
    assert (f"{RAIN} has no value at lead(s) 5-7 of the model's 1-7 ({_column(model, 0, 5)}, "
            f"{_column(model, 0, 6)}, {_column(model, 0, 7)} missing)") in message
    # no forecast at all (every lead) is read as such, as the forecast reads a missing run
    none = frame.copy()
    none.loc[at_issue, [_column(model, 0, lead) for lead in range(1, 8)]] = np.nan
    assert np.isfinite(model.predict(None, none)["value"]).all()
    # a three-lead table: the columns of leads 4-7 are named
    lacking = rf"lacks the columns \['{_column(model, 0, 4)}', '{_column(model, 0, 5)}'"
    with pytest.raises(InputDataError, match=lacking):
        model.predict(None, frame.drop(columns=[_column(model, k, lead) for k in (0, 1) for lead in (4, 5, 6, 7)]))
