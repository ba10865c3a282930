"""The forecast page dates a forecast by the local day the command line, the file names and the daily job use (not
by its UTC grid label), and names the weather-forecast run behind a week-ahead forecast: the shipped week-ahead model
on the example GRIB2 ensemble runs as configs/ingest_grib2_ensemble.yaml ingests them."""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from hydroseq.cli import main
from hydroseq.grid import GridSpec
from hydroseq.report.issue_text import forecast_title, issued_text
from hydroseq.report.timeaxis import TimeAxis
from tests.fixtures import REPO_ROOT

WEEK_AHEAD_MODEL = REPO_ROOT / "models" / "caravan-camels-us-daily-week-ahead"


@pytest.fixture(scope="module")
def week_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page of the week-ahead forecast of 2014-09-25 (the end of that local day: 2014-09-26 08:00 UTC), with the
    forecast of the day before beside it."""
    folder = tmp_path_factory.mktemp("week_page")
    config = yaml.safe_load((REPO_ROOT / "configs" / "ingest_grib2_ensemble.yaml").read_text())
    config["grid"].update(start="2012-09-01", end="2014-10-10")  # the climate indices need two years
    for section in (config["stations"], *config["sources"], *config["forecast_sources"]):
        if section.get("path"):
            section["path"] = str(REPO_ROOT / section["path"])
    config["stations"]["outlines"]["path"] = str(REPO_ROOT / config["stations"]["outlines"]["path"])
    (folder / "ingest.yaml").write_text(yaml.safe_dump(config))
    data = folder / "ensemble.nc"
    assert main(["-q", "ingest", "--config", str(folder / "ingest.yaml"), "--out", str(data)]) == 0
    for day in ("2014-09-24", "2014-09-25"):
        assert main(["-q", "forecast", "--model", str(WEEK_AHEAD_MODEL), "--data", str(data), "--issue-time", day,
                     "--out", str(folder / f"forecast_{day}.nc")]) == 0
    page = folder / "forecast_2014-09-25.html"
    assert main(["-q", "report", "--forecast", str(folder / "forecast_2014-09-25.nc"), "--data", str(data),
                 "--previous", str(folder / "forecast_2014-09-24.nc"), "--out", str(page)]) == 0
    return page


def header(page: Path) -> dict[str, str]:
    text = page.read_text(encoding="utf-8")
    return {html.unescape(label): html.unescape(value)
            for label, value in re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", text.split("</header>")[0])}


def test_the_title_carries_the_issue_date_the_command_line_uses(week_page: Path) -> None:
    text = week_page.read_text(encoding="utf-8")
    title = "Streamflow forecast of 2014-09-25 (local standard time, UTC-08:00)"  # --issue-time 2014-09-25
    assert f"<h1>{title}</h1>" in text and f"<title>{title}</title>" in text
    assert header(week_page)["issued"] == ("at the end of 2014-09-25 (local standard time, UTC-08:00; the grid's "
                                           "zone Etc/GMT+8), the grid label 2014-09-26 08:00 UTC")
    assert "The previous forecast (of 2014-09-24) is drawn dash-dotted." in text


def test_the_page_names_the_weather_run_that_drove_it(week_page: Path) -> None:
    """The ensemble's runs are published 8 h after their 00 UTC reference time (the config's latency): the forecast
    issued at 2014-09-26 08:00 UTC reads the run of 2014-09-26 00:00, 8 h old, all ten members."""
    assert header(week_page)["weather forecast"] == ("10-member ensemble run of 2014-09-26 00:00 UTC, 8 h old at the "
                                                     "issue time; read by 31 of 31 stations forecast")


@pytest.mark.parametrize(("frequency", "zone", "label", "title", "issued"), [
    ("1h", "Etc/GMT-1", "2005-06-20T05:00", "Streamflow forecast of 2005-06-20 06:00 (local standard time, UTC+01:00)",
     "2005-06-20 06:00 (local standard time, UTC+01:00; the grid's zone Etc/GMT-1), the grid label "
     "2005-06-20 05:00 UTC"),
    ("1h", "Europe/Vienna", "2014-07-01T08:00",
     "Streamflow forecast of 2014-07-01 10:00 (local daylight saving time, UTC+02:00)",
     "2014-07-01 10:00 (local daylight saving time, UTC+02:00; the grid's zone Europe/Vienna), the grid label "
     "2014-07-01 08:00 UTC"),
])
def test_a_sub_daily_forecast_is_dated_by_its_local_clock_time(frequency: str, zone: str, label: str, title: str,
                                                               issued: str) -> None:
    axis = TimeAxis(GridSpec(frequency, zone))
    assert forecast_title(axis, np.datetime64(label, "ns")) == title
    assert issued_text(axis, np.datetime64(label, "ns")) == issued
