"""The forecast page in headless Chromium: offline, one marker per station, sorted by danger, and the hydrograph
a click shows is the forecast CSV's; the deterministic, ungauged and no-threshold cases say so; text is text."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from benchmarks.browser import PageSession, file_url, page_session
from hydroseq.report.content import at_least, percent
from tests.report.conftest import HTML_NAME, HTML_NAMED, NO_THRESHOLDS, SKIPPED, UNGAUGED, opened

pytestmark = pytest.mark.slow

DRAWN_MARKERS = """() => {
  const renderer = Bokeh.documents[0].get_model_by_name('markers');
  const view = [...Bokeh.index.all_views()].find((v) => v.model === renderer);
  const {sx, sy} = view.glyph;
  let drawn = 0;
  for (let i = 0; i < sx.length; i++) if (Number.isFinite(sx[i]) && Number.isFinite(sy[i])) drawn++;
  return drawn;
}"""
MARKER_POSITION = """(index) => {
  const renderer = Bokeh.documents[0].get_model_by_name('markers');
  const view = [...Bokeh.index.all_views()].find((v) => v.model === renderer);
  return [view.glyph.sx[index], view.glyph.sy[index]];
}"""


def source(session: PageSession, name: str) -> dict[str, list]:
    """The columns of a bokeh data source of the page, as the charts draw them (NaN as None)."""
    return session.page.evaluate(
        """(name) => { const data = Bokeh.documents[0].get_model_by_name(name).data, out = {};
                       for (const key of Object.keys(data)) out[key] = Array.from(data[key]).map(
                         (v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v));
                       return out; }""", name)


def select_row(session: PageSession, station: str) -> None:
    """Click the table row of ``station``."""
    session.page.locator("#stations tbody tr", has=session.page.locator(f"td[data-key=station]:text-is('{station}')"))\
        .click()


@pytest.fixture(scope="module")
def forecast_session(browser, report_inputs: dict[str, Path], screenshots: Path) -> Iterator[PageSession]:
    with opened(browser, report_inputs["forecast_page"], screenshots / "forecast_page.png") as session:
        yield session


@pytest.fixture(scope="module")
def forecast_csv(report_inputs: dict[str, Path]) -> pd.DataFrame:
    return pd.read_csv(report_inputs["forecast"].with_suffix(".csv"), dtype={"station": str})


def test_the_page_loads_from_a_file_without_errors_or_any_request(forecast_session: PageSession,
                                                                  report_inputs: dict[str, Path]) -> None:
    assert forecast_session.console_errors == []
    assert forecast_session.requests == [file_url(report_inputs["forecast_page"])]  # the page itself, nothing else
    assert forecast_session.page.evaluate("window.injected") is None


class RecordingHandler(http.server.SimpleHTTPRequestHandler):
    """A static file server that records every path asked for (the browser's own asks too, e.g. a favicon)."""

    asked: list[str] = []

    def log_message(self, format: str, *args: object) -> None:
        self.asked.append(self.path)


def test_the_page_loads_from_a_static_web_server_without_any_other_request(browser,
                                                                           report_inputs: dict[str, Path]) -> None:
    folder = report_inputs["forecast_page"].parent
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(RecordingHandler,
                                                                                 directory=str(folder)))
    RecordingHandler.asked = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{report_inputs['forecast_page'].name}"
        with page_session(browser) as session:
            session.open(url)
            session.page.wait_for_timeout(300)  # time for anything the browser would ask for after the load
            assert session.requests == [url] and session.console_errors == []
            assert session.page.evaluate(DRAWN_MARKERS) == 31
    finally:
        server.shutdown()
        server.server_close()
    assert RecordingHandler.asked == [f"/{report_inputs['forecast_page'].name}"]  # no favicon, no font, no tile


def test_the_map_draws_one_marker_per_station_of_the_forecast(forecast_session: PageSession,
                                                              report_inputs: dict[str, Path]) -> None:
    with xr.open_dataset(report_inputs["forecast"]) as forecast:
        stations = forecast.sizes["station"]
    assert stations == 31
    assert forecast_session.page.evaluate(DRAWN_MARKERS) == stations
    assert forecast_session.page.locator("#stations tbody tr").count() == stations


def test_the_headline_says_how_many_stations_may_flood_and_which_are_likeliest(forecast_session: PageSession,
                                                                             forecast_csv: pd.DataFrame) -> None:
    highest = forecast_csv[[c for c in forecast_csv.columns if c.startswith("p_exceed_")]].max(axis=1)
    by_station = highest.groupby(forecast_csv["station"]).max().sort_values(ascending=False, kind="stable")
    names = forecast_csv.drop_duplicates("station").set_index("station")["station_name"]
    headline = forecast_session.page.locator("#headline").inner_text()
    likely = sum(at_least(probability, 0.5) for probability in by_station)  # as the table shows them
    assert headline.startswith(f"Outlook: {likely} of 31 stations at 50 % or more of exceeding a flood threshold")
    assert f"likeliest: {names[by_station.index[0]]} {percent(by_station.iloc[0])}" in headline


def test_the_table_starts_with_the_highest_probability_and_sorts_on_a_click(forecast_session: PageSession,
                                                                            forecast_csv: pd.DataFrame) -> None:
    page = forecast_session.page
    highest = forecast_csv[[c for c in forecast_csv.columns if c.startswith("p_exceed_")]].max(axis=1)
    by_station = highest.groupby(forecast_csv["station"]).max()
    assert by_station.nunique() > 3  # the thresholds make the stations differ
    first = page.locator("#stations tbody tr").first
    assert first.locator("td[data-key=station]").inner_text() == by_station.idxmax() or \
        float(first.locator("td[data-key=risk]").get_attribute("data-value")) == pytest.approx(by_station.max())
    values = [float(v) if v else -1.0 for v in page.eval_on_selector_all(
        "#stations tbody td[data-key=risk]", "cells => cells.map(c => c.dataset.value)")]
    assert values == sorted(values, reverse=True) and values[0] == pytest.approx(by_station.max(), abs=1e-6)
    page.locator("#stations thead th[data-key=area]").click()  # largest first, then smallest first
    page.locator("#stations thead th[data-key=area]").click()
    areas = [float(v) for v in page.eval_on_selector_all("#stations tbody td[data-key=area]",
                                                         "cells => cells.map(c => c.dataset.value)")]
    assert areas == sorted(areas)
    page.locator("#stations thead th[data-key=risk]").click()  # back to the highest probability first


def test_selecting_a_station_shows_the_forecast_of_the_csv(forecast_session: PageSession, forecast_csv: pd.DataFrame,
                                                           report_inputs: dict[str, Path]) -> None:
    previous = pd.read_csv(report_inputs["previous"].with_suffix(".csv"), dtype={"station": str})
    for station, rows in forecast_csv.groupby("station"):
        select_row(forecast_session, station)
        drawn = source(forecast_session, "forecast_data")
        rows = rows.sort_values("lead")
        assert drawn["median"] == rows["value_m3s"].tolist(), station  # the CSV's numbers, not rounded
        assert drawn["low90"] == rows["value_q05_m3s"].tolist() and drawn["high90"] == rows["value_q95_m3s"].tolist()
        assert drawn["low50"] == rows["value_q25_m3s"].tolist() and drawn["high50"] == rows["value_q75_m3s"].tolist()
        assert source(forecast_session, "previous_data")["y"] == previous.loc[
            previous["station"] == station].sort_values("lead")["value_m3s"].tolist()
        assert forecast_session.page.locator("#station-title").inner_text().endswith(f"({station})")


def test_the_hydrograph_shows_sixty_days_observed_up_to_the_issue_time(forecast_session: PageSession,
                                                                       report_inputs: dict[str, Path],
                                                                       forecast_csv: pd.DataFrame) -> None:
    station = "01022500"
    select_row(forecast_session, station)
    observed = source(forecast_session, "observed_data")
    area = forecast_csv.loc[forecast_csv["station"] == station, "area_km2"].iloc[0]
    with xr.open_dataset(report_inputs["data"]) as data:
        expected = data["streamflow"].sel(station=station, time=slice("2014-08-02", "2014-10-01T08:00")).values
    assert len(observed["y"]) == 61
    np.testing.assert_allclose(observed["y"], expected * area * 1000 / 86400, rtol=1e-6)
    assert max(observed["x"]) < forecast_session.page.evaluate("hydroseq.data.issueMs")  # nothing after the issue


def test_clicking_a_marker_on_the_map_selects_its_station(forecast_session: PageSession) -> None:
    page = forecast_session.page
    index = page.evaluate("hydroseq.data.stations.findIndex((s) => s.station === '03015500')")
    page.locator(".map-panel").scroll_into_view_if_needed()
    x, y = page.evaluate(MARKER_POSITION, index)
    canvas = page.locator(".map-panel canvas").first.bounding_box()  # the map's canvas; x, y are on it
    page.mouse.click(canvas["x"] + x, canvas["y"] + y)
    assert page.evaluate("hydroseq.state.selected") == index
    assert page.locator("#stations tbody tr.picked td[data-key=station]").inner_text() == "03015500"
    assert "(03015500)" in page.locator("#station-title").inner_text()


def test_ungauged_and_threshold_free_stations_say_so(forecast_session: PageSession) -> None:
    select_row(forecast_session, UNGAUGED)
    details = forecast_session.page.locator("#station-details").inner_text()
    assert "Ungauged" in details and source(forecast_session, "observed_data")["y"] == []
    assert "triangle" == forecast_session.page.evaluate(
        f"hydroseq.data.map.marker[hydroseq.data.map.station.indexOf('{UNGAUGED}')]")
    select_row(forecast_session, NO_THRESHOLDS)
    assert "no thresholds" in forecast_session.page.locator("#station-details").inner_text()
    assert source(forecast_session, "thresholds_data")["y"] == []


def test_a_station_not_forecast_is_marked_and_says_why(forecast_session: PageSession) -> None:
    page = forecast_session.page
    assert page.evaluate(f"hydroseq.data.map.marker[hydroseq.data.map.station.indexOf('{SKIPPED}')]") == "x"
    select_row(forecast_session, SKIPPED)
    assert "not forecast: no valid input at the issue step" in page.locator("#station-details").inner_text()
    assert all(value is None for value in source(forecast_session, "forecast_data")["median"])
    assert len(source(forecast_session, "observed_data")["y"]) == 61  # its gauge is still drawn
    assert "1 not forecast" in page.locator("header").inner_text()


def test_a_station_name_made_of_html_is_shown_as_text(forecast_session: PageSession) -> None:
    page = forecast_session.page
    cell = page.locator("#stations tbody tr", has=page.locator(f"td[data-key=station]:text-is('{HTML_NAMED}')"))\
        .locator("td[data-key=name]")
    assert cell.inner_text().strip() == HTML_NAME
    select_row(forecast_session, HTML_NAMED)
    assert HTML_NAME in page.locator("#station-title").inner_text()
    assert page.locator("img").count() == 0 and page.evaluate("window.injected") is None
    assert forecast_session.console_errors == []


def test_the_hover_text_of_the_map_shows_the_html_name_as_text(forecast_session: PageSession) -> None:
    page = forecast_session.page
    index = page.evaluate(f"hydroseq.data.map.station.indexOf('{HTML_NAMED}')")
    page.locator(".map-panel").scroll_into_view_if_needed()
    x, y = page.evaluate(MARKER_POSITION, index)
    canvas = page.locator(".map-panel canvas").first.bounding_box()
    page.mouse.move(canvas["x"] + x - 3, canvas["y"] + y - 3)
    page.mouse.move(canvas["x"] + x, canvas["y"] + y)
    tooltip = page.locator(".bk-tooltip-content").first
    tooltip.wait_for(state="visible", timeout=5000)
    assert HTML_NAME in tooltip.inner_text()  # the characters, as text
    assert page.locator("img").count() == 0 and page.evaluate("window.injected") is None
    page.mouse.move(0, 0)


def test_the_filter_keeps_the_stations_whose_name_or_id_matches(forecast_session: PageSession) -> None:
    page = forecast_session.page
    page.locator("#filter").fill("creek")
    shown = page.eval_on_selector_all("#stations tbody tr:not([hidden]) td[data-key=name]",
                                      "cells => cells.map(c => c.textContent.toLowerCase())")
    assert shown and all("creek" in name for name in shown)
    assert page.locator("#shown").inner_text() == f"{len(shown)} of 31 stations"
    page.locator("#filter").fill("0102")
    assert page.locator("#stations tbody tr:not([hidden])").count() == 1
    page.locator("#filter").fill("")
    assert page.locator("#stations tbody tr:not([hidden])").count() == 31


@pytest.mark.parametrize("width, height", [(1366, 768), (390, 844)], ids=["laptop", "phone"])
def test_the_page_fits_a_laptop_and_a_phone_screen(browser, report_inputs: dict[str, Path], screenshots: Path,
                                                   width: int, height: int) -> None:
    with page_session(browser, width, height) as session:
        session.open(file_url(report_inputs["forecast_page"]))
        assert session.page.evaluate("document.documentElement.scrollWidth") <= width
        session.page.screenshot(path=str(screenshots / f"forecast_page_{width}px.png"))
        assert session.console_errors == []


def test_a_deterministic_model_shows_its_line_without_bands_and_says_so(browser, report_inputs: dict[str, Path],
                                                                        screenshots: Path) -> None:
    with page_session(browser) as session:
        session.open(file_url(report_inputs["deterministic_page"]))
        session.page.screenshot(path=str(screenshots / "deterministic_page.png"), full_page=True)
        page = session.page
        assert "This model is deterministic" in page.locator("header").inner_text()
        assert "no threshold probabilities (deterministic model); highest forecast peaks:" in page.locator(
            "#headline").inner_text()
        assert "Deterministic model" in page.locator("#station-details").inner_text()
        drawn = source(session, "forecast_data")
        assert all(value is None for value in drawn["low90"] + drawn["high90"])
        assert all(value is not None for value in drawn["median"])
        assert page.evaluate(DRAWN_MARKERS) == 31 and session.console_errors == []
        assert page.locator("#stations thead th[data-key=risk]").count() == 0  # no probabilities to show
