"""Derived thresholds on the forecaster's page: named in words ("2-year daily-mean flow"), with the 90 % interval
and the water years of each return-period flow in the station's details, and why a station has none."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hydroseq.forecast.result import ForecastResult
from hydroseq.forecast.writers.netcdf import write_forecast_netcdf
from hydroseq.grid import GridSpec
from hydroseq.report import write_report
from hydroseq.scoring.thresholds import StationThresholds
from tests.report.conftest import opened
from tests.report.test_forecast_page import select_row

STATIONS = ("01022500", "01547700")


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A forecast of two stations with derived thresholds (the first fitted to 19 water years, the second with
    too few), written as ``hydroseq forecast`` writes it, and its page without observations."""
    folder = tmp_path_factory.mktemp("threshold_fits")
    thresholds = StationThresholds(
        ("2-year", "q95"), STATIONS, np.array([[15.2, 6.7], [np.nan, 4.8]]),
        "training period 1989-10-01..2008-09-30, daily-mean flows; return periods: Gumbel fitted by L-moments",
        ("2-year daily-mean flow", "daily-mean flow exceeded 5 % of the time"),
        np.array([[13.3, np.nan], [np.nan, np.nan]]), np.array([[17.0, np.nan], [np.nan, np.nan]]),
        np.array([[19, 0], [3, 0]]),
        ("", "3 water years with enough days for an annual maximum, fewer than the 5 a fit needs"), 0.9)
    levels = (0.05, 0.5, 0.95)
    quantiles = np.array([[[[8.0, 12.0, 16.0]] * 2] * 2], dtype=np.float32)  # [issue, station, lead, level]
    result = ForecastResult(
        issue_times=np.array(["2014-10-01T08:00"], dtype="datetime64[ns]"), stations=STATIONS,
        leads=np.array([1, 2]), step=pd.Timedelta("1D"), values=quantiles[..., 1].copy(), variable="streamflow",
        units="mm d-1", long_name="forecast of streamflow",
        attributes={**GridSpec(frequency="1D", timezone="Etc/GMT+8").to_attrs(), "model_name": "demo"},
        station_names=("Narraguagus River", "Oswayo Creek"), lats=np.array([44.6, 41.9]),
        lons=np.array([-67.9, -78.0]), area_km2=np.array([86.4, 86.4]), quantiles=quantiles, quantile_levels=levels,
        thresholds=thresholds, exceedance=np.full((1, 2, 2, 2), 0.3, np.float32))
    forecast = write_forecast_netcdf(result, folder / "forecast.nc")
    return write_report(folder / "page.html", forecast=forecast).path


def test_the_page_names_derived_thresholds_in_words_and_carries_their_fit(page: Path) -> None:
    html = page.read_text(encoding="utf-8")
    assert "P &gt; 2-year daily-mean flow" in html and "P &gt; daily-mean flow exceeded 5 % of the time" in html
    assert "P &gt; 2-year<" not in html  # the level id is not what a person reads
    found = re.search(r'<script type="application/json" id="hydroseq-data">(.*?)</script>', html, re.S)
    assert found is not None
    data = json.loads(found[1])
    assert data["thresholdLabels"] == ["2-year daily-mean flow", "daily-mean flow exceeded 5 % of the time"]
    assert data["thresholdConfidence"] == 0.9
    first, second = data["stations"]
    assert first["thresholdIntervals"] == [[13.3, None], [17.0, None]] and first["thresholdYears"] == [19, 0]
    assert "thresholdIntervals" not in second and second["thresholdNote"].startswith("3 water years")


def test_a_station_shows_its_interval_and_water_years_or_why_it_has_none(browser, page: Path,
                                                                          screenshots: Path) -> None:
    with opened(browser, page, screenshots / "threshold_fits.png") as session:
        details = session.page.locator("#station-details")
        select_row(session, "01022500")
        assert "2-year daily-mean flow 15.2 m³/s (90 % interval 13.3 to 17.0, 19 water years)." in details.inner_text()
        select_row(session, "01547700")
        text = details.inner_text()
        assert ("No return-period flow: 3 water years with enough days for an annual maximum, fewer than the 5 a "
                "fit needs.") in text and "interval" not in text
        assert session.console_errors == []
