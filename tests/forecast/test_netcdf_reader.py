"""Reading a forecast file back gives the result that was written (one issue time and a hindcast), and a file
that is not a forecast is refused in one line naming it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hydroseq.errors import InputDataError
from hydroseq.forecast.netcdf_reader import read_forecast_netcdf
from hydroseq.forecast.result import ForecastResult
from hydroseq.forecast.writers.netcdf import write_forecast_netcdf
from hydroseq.scoring.thresholds import StationThresholds

LEVELS = (0.05, 0.5, 0.95)


def probabilistic_result(n_issue: int) -> ForecastResult:
    rng = np.random.default_rng(1)
    stations = ("01022500", "01547700", "09999999")
    issues = np.array(["2014-10-01T08:00"], dtype="datetime64[ns]") + np.arange(n_issue) * np.timedelta64(1, "D")
    quantiles = np.sort(rng.gamma(2.0, 1.0, (n_issue, 3, 2, 3)).astype(np.float32), axis=-1)
    quantiles[:, 2] = np.nan  # not forecast
    exceedance = rng.uniform(0, 1, (n_issue, 3, 2, 2)).astype(np.float32)
    exceedance[:, 2] = np.nan
    ages = np.zeros((n_issue, 3), np.float32)
    ages[:, 1] = 48.0
    return ForecastResult(
        issue_times=issues, stations=stations, leads=np.array([1, 2]), step=pd.Timedelta("1D"),
        values=quantiles[..., 1].copy(), variable="streamflow", units="mm d-1", long_name="forecast of streamflow",
        attributes={"model_run_id": "abc", "model_name": "demo", "grid_frequency": "1D",
                    "grid_timezone": "Etc/GMT+8"},
        skipped={"09999999": "no valid input"}, station_names=("Narraguagus <River>", "B", "C"),
        lats=np.array([46.7, 41.5, np.nan]), lons=np.array([-68.1, -77.4, np.nan]),
        area_km2=np.array([619.1, np.nan, 10.0]), observation_age_hours=ages, ungauged=("01547700",),
        quantiles=quantiles, quantile_levels=LEVELS,
        thresholds=_thresholds(stations, derived=n_issue == 1),
        exceedance=exceedance, max_observation_age_hours=72.0 if n_issue == 1 else None,
        stale={"01547700": "newest observation 48 h before the issue time"} if n_issue == 1 else {})


def _thresholds(stations: tuple[str, ...], derived: bool) -> StationThresholds:
    """Derived thresholds (labels, a 90 % interval, water years, a note) or a table's (the level ids alone)."""
    values = np.array([[3.0, 5.0], [np.nan, np.nan], [1.0, 2.0]])
    if not derived:
        return StationThresholds(("2-year", "5-year"), stations, values, "table t.csv")
    return StationThresholds(("2-year", "5-year"), stations, values, "training period ..., L-moments",
                             ("2-year daily-mean flow", "5-year daily-mean flow"), values * 0.75, values * 1.25,
                             np.array([[27, 27], [3, 3], [12, 12]]),
                             ("", "3 water years with enough days for an annual maximum, fewer than the 5 a fit needs",
                              ""), 0.9)


@pytest.mark.parametrize("n_issue", [1, 4], ids=["forecast", "hindcast"])
def test_a_written_forecast_reads_back_as_it_was(tmp_path: Path, n_issue: int) -> None:
    written = probabilistic_result(n_issue)
    read = read_forecast_netcdf(write_forecast_netcdf(written, tmp_path / "f.nc"))
    np.testing.assert_array_equal(read.issue_times, written.issue_times)
    assert read.stations == written.stations and read.station_names == written.station_names
    assert read.step == written.step and read.leads.tolist() == [1, 2]
    assert (read.variable, read.units, read.long_name) == ("streamflow", "mm d-1", "forecast of streamflow")
    for name in ("values", "quantiles", "exceedance", "observation_age_hours", "lats", "lons", "area_km2"):
        np.testing.assert_array_equal(getattr(read, name), getattr(written, name), err_msg=name)
    assert read.quantile_levels == LEVELS
    assert read.thresholds is not None and written.thresholds is not None
    assert read.thresholds.levels == ("2-year", "5-year") and read.thresholds.labels == written.thresholds.labels
    for name in ("values", "lower", "upper", "years"):
        np.testing.assert_array_equal(getattr(read.thresholds, name), getattr(written.thresholds, name))
    assert read.thresholds.notes == written.thresholds.notes
    assert (read.thresholds.source, read.thresholds.confidence) == (written.thresholds.source,
                                                                    written.thresholds.confidence)
    assert read.skipped == written.skipped and read.ungauged == written.ungauged and read.stale == written.stale
    assert read.max_observation_age_hours == written.max_observation_age_hours
    assert read.attributes["model_name"] == "demo" and read.attributes["grid_timezone"] == "Etc/GMT+8"


def test_a_file_that_is_no_forecast_is_refused_naming_it(tmp_path: Path, ingested: Path) -> None:
    with pytest.raises(InputDataError, match=f"{ingested.name}: not a hydroseq forecast file"):
        read_forecast_netcdf(ingested)
    empty = tmp_path / "empty.nc"
    empty.write_bytes(b"")
    with pytest.raises(InputDataError, match="empty.nc: not a readable NetCDF file"):
        read_forecast_netcdf(empty)
