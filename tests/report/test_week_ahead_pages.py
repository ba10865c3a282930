"""The pages of a week-ahead forecast (leads 1-7, :mod:`tests.week_ahead`) in headless Chromium: the hydrograph
draws seven forecast days, the table each station's peak and its lead, the map the highest probability over the
whole week; the verification page's lead selector offers leads 1-7, and lead 7 recolours the map, the PIT
histogram and the table, which shows that lead's columns; both pages fit a phone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks.browser import PageSession, file_url, page_session
from tests.report.conftest import opened
from tests.report.test_forecast_page import DRAWN_MARKERS, select_row, source
from tests.week_ahead import LEADS, STATIONS, WeekAhead

pytestmark = pytest.mark.slow

DAY_MS = 86_400_000
LEAD_TEXT = [f"lead {lead} d" for lead in LEADS]


@pytest.fixture(scope="module")
def forecast_session(browser, week_ahead: WeekAhead, screenshots: Path) -> Iterator[PageSession]:
    with opened(browser, week_ahead["forecast_page"], screenshots / "week_ahead_forecast_page.png") as session:
        yield session


@pytest.fixture(scope="module")
def verification_session(browser, week_ahead: WeekAhead, screenshots: Path) -> Iterator[PageSession]:
    with opened(browser, week_ahead["verification_page"], screenshots / "week_ahead_verification_page.png") as session:
        yield session


@pytest.fixture(scope="module")
def csv(week_ahead: WeekAhead) -> pd.DataFrame:
    return pd.read_csv(week_ahead["forecast"].with_suffix(".csv"), dtype={"station": str})


def _cell(session: PageSession, station: str, key: str) -> tuple[str, str | None]:
    """The shown text and the sort value of a cell of the station table."""
    page = session.page
    cell = page.locator("#stations tbody tr", has=page.locator(f"td[data-key=station]:text-is('{station}')"))\
        .locator(f"td[data-key={key}]")
    return cell.inner_text().strip(), cell.get_attribute("data-value")


def test_the_hydrograph_draws_seven_forecast_days_of_the_csv(forecast_session: PageSession,
                                                              csv: pd.DataFrame) -> None:
    page = forecast_session.page
    assert forecast_session.console_errors == [] and page.evaluate(DRAWN_MARKERS) == len(STATIONS)
    assert page.evaluate("hydroseq.data.leadText") == LEAD_TEXT
    issue = page.evaluate("hydroseq.data.issueMs")
    assert page.evaluate("hydroseq.data.forecastT") == [issue + (k + 0.5) * DAY_MS for k in range(7)]
    for station, rows in csv.groupby("station"):
        select_row(forecast_session, station)
        drawn, rows = source(forecast_session, "forecast_data"), rows.sort_values("lead")
        assert len(drawn["x"]) == 7 and drawn["median"] == rows["value_m3s"].tolist(), station
        assert drawn["high90"] == rows["value_q95_m3s"].tolist()
        assert page.evaluate("Bokeh.documents[0].get_model_by_name('hydrograph').x_range.end") > drawn["x"][-1]
        details = page.locator("#station-details table.skill tr").all_inner_texts()
        assert [row.split("\t")[0] for row in details[1:]] == LEAD_TEXT  # one row per lead, a week


def test_the_table_shows_each_station_s_peak_and_its_lead(forecast_session: PageSession, csv: pd.DataFrame) -> None:
    for station, rows in csv.groupby("station"):
        peak = rows.loc[rows["value_m3s"].idxmax()]
        text, value = _cell(forecast_session, station, "peak")
        assert value is not None and float(value) == pytest.approx(peak["value_m3s"], rel=1e-6)
        assert text.endswith(f", lead {int(peak['lead'])} d"), (station, text)


def test_the_map_and_table_give_the_highest_probability_over_the_whole_week(forecast_session: PageSession,
                                                                             csv: pd.DataFrame) -> None:
    page = forecast_session.page
    assert "leads 1 d to 7 d" in page.locator(".map-panel h2").inner_text()
    chances = csv[[column for column in csv.columns if column.startswith("p_exceed_")]].max(axis=1)
    highest = chances.groupby(csv["station"]).max()
    at_lead = csv.loc[chances.groupby(csv["station"]).idxmax(), ["station", "lead"]].set_index("station")["lead"]
    assert (at_lead > 3).any()  # the highest chance of some station lies beyond a 3-day forecast
    for station in STATIONS:
        _, value = _cell(forecast_session, station, "risk")
        assert value is not None and float(value) == pytest.approx(highest[station], abs=1e-6)
    summaries = page.evaluate("hydroseq.data.map.summary")
    assert all(text.endswith("highest probability") or "highest probability;" in text for text in summaries)


def test_the_lead_selector_offers_a_week_and_lead_7_changes_the_map_table_and_histogram(
        verification_session: PageSession, week_ahead: WeekAhead) -> None:
    page = verification_session.page
    assert verification_session.console_errors == []
    options = page.eval_on_selector_all("#lead option", "options => options.map(o => [o.value, o.textContent])")
    assert options == [[str(k), text] for k, text in enumerate(LEAD_TEXT)]
    assert page.input_value("#lead") == "0"  # lead 1 first
    shown = "() => Array.from(document.querySelectorAll('#stations thead th')).filter(th => th.offsetParent !== null)" \
            ".map(th => th.dataset.key)"
    assert page.evaluate(shown) == ["name", "station", "area", "nse_0", "persistence_0", "skill_0"]
    first = source(verification_session, "stations")["summary"]
    page.select_option("#lead", "6")
    assert source(verification_session, "stations")["colour"] == page.evaluate("hydroseq.data.skill[6].colour")
    assert source(verification_session, "stations")["summary"] != first
    assert source(verification_session, "pit")["count"] == page.evaluate("hydroseq.data.pit[6]")
    assert page.evaluate(shown) == ["name", "station", "area", "nse_6", "persistence_6", "skill_6"]
    assert page.locator("#stations thead th[data-key=skill_6]").get_attribute("aria-sort") == "descending"
    hindcast = week_ahead["hindcast"]
    scores = pd.read_csv(hindcast.with_name(f"{hindcast.stem}_scores.csv"), dtype={"station": str})
    week = scores.loc[(scores["lead"] == 7) & (scores["forecast"] == "model")].set_index("station")["nse"]
    for station in STATIONS:
        text, _ = _cell(verification_session, station, "nse_6")
        assert text == (f"{week[station]:.2f}" if np.isfinite(week[station]) else "-")
    select_row(verification_session, STATIONS[0])
    drawn = source(verification_session, "forecast_data")
    assert drawn["x"][0] == page.evaluate("hydroseq.data.issueT[0]") + 7 * DAY_MS  # at the valid time, a week on
    rows = page.eval_on_selector_all("#summary tbody tr", "rows => rows.map(r => r.cells[0].textContent)")
    assert rows == [f"{lead} d" for lead in LEADS]
    legend = page.evaluate(
        "Bokeh.documents[0].get_model_by_name('reliability_legend').items.map((item) => item.label.value)")
    assert legend == ["perfectly reliable", *[f"lead {lead} d" for lead in LEADS]]
    page.select_option("#lead", "0")


@pytest.mark.parametrize("name", ["forecast_page", "verification_page"])
def test_both_pages_fit_a_phone(browser, week_ahead: WeekAhead, screenshots: Path, name: str) -> None:
    with page_session(browser, 390, 844) as session:
        session.open(file_url(week_ahead[name]))
        assert session.page.evaluate("document.documentElement.scrollWidth") <= 390
        session.page.screenshot(path=str(screenshots / f"week_ahead_{name}_390px.png"), full_page=True)
        assert session.console_errors == []
