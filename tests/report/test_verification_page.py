"""The verification page of a hindcast in headless Chromium: offline, the CLI's per-lead table, a lead selector
that recolours the map and the PIT histogram, the reliability diagram, and each station's hindcast on click."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from benchmarks.browser import PageSession, file_url
from hydroseq.report.verification_page import skill_against_persistence
from tests.report.conftest import opened
from tests.report.test_forecast_page import DRAWN_MARKERS, select_row, source

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verification_session(browser, report_inputs: dict[str, Path], screenshots: Path) -> Iterator[PageSession]:
    with opened(browser, report_inputs["verification_page"], screenshots / "verification_page.png") as session:
        yield session


@pytest.fixture(scope="module")
def scores(report_inputs: dict[str, Path]) -> pd.DataFrame:
    hindcast = report_inputs["hindcast"]
    return pd.read_csv(hindcast.with_name(f"{hindcast.stem}_scores.csv"), dtype={"station": str})


def test_the_page_loads_without_errors_or_requests_and_draws_every_station(verification_session: PageSession,
                                                                           report_inputs: dict[str, Path]) -> None:
    assert verification_session.console_errors == []
    assert verification_session.requests == [file_url(report_inputs["verification_page"])]
    assert verification_session.page.evaluate(DRAWN_MARKERS) == 31


def test_the_per_lead_table_is_the_hindcast_table_of_the_cli(verification_session: PageSession,
                                                             scores: pd.DataFrame) -> None:
    rows = verification_session.page.eval_on_selector_all(
        "#summary tbody tr", "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent))")
    assert [row[0] for row in rows] == ["1 d", "2 d", "3 d"]
    for row, (_, at_lead) in zip(rows, scores.groupby("lead"), strict=True):
        model = at_lead.loc[at_lead["forecast"] == "model"].set_index("station")["nse"]
        persistence = at_lead.loc[at_lead["forecast"] == "persistence"].set_index("station")["nse"]
        assert row[1] == str(model.notna().sum())
        assert row[2] == f"{model.median():.3f} / {model.mean():.3f}"
        assert row[3] == f"{persistence.median():.3f} / {persistence.mean():.3f}"
        both = model.notna() & persistence.notna()
        assert row[-1] == f"{int((model[both] > persistence[both]).sum())} of {int(both.sum())}"


def test_the_lead_selector_recolours_the_map_and_the_pit_histogram(verification_session: PageSession,
                                                                   scores: pd.DataFrame) -> None:
    page = verification_session.page
    for k, lead in enumerate((1, 2, 3)):
        page.select_option("#lead", str(k))
        colours = source(verification_session, "stations")["colour"]
        assert colours == page.evaluate(f"hydroseq.data.skill[{k}].colour")
        assert source(verification_session, "pit")["count"] == page.evaluate(f"hydroseq.data.pit[{k}]")
        at_lead = scores.loc[scores["lead"] == lead]
        model = at_lead.loc[at_lead["forecast"] == "model"].set_index("station")["nse"]
        persistence = at_lead.loc[at_lead["forecast"] == "persistence"].set_index("station")["nse"]
        skill = skill_against_persistence(model.to_numpy(), persistence.reindex(model.index).to_numpy())
        stations = page.evaluate("hydroseq.data.map.station")
        best = model.index[int(np.nanargmax(skill))]
        assert colours[stations.index(best)] in ("#2166ac", "#67a9cf", "#d1e5f0", "#fddbc7", "#ef8a62", "#b2182b")
    page.select_option("#lead", "0")
    assert sum(page.evaluate("hydroseq.data.pit[0]")) > 1000  # 31 stations x 92 issue times, where observed


def test_the_reliability_diagram_has_a_line_per_lead(verification_session: PageSession) -> None:
    legend = verification_session.page.evaluate(
        "Bokeh.documents[0].get_model_by_name('reliability_legend').items.map((item) => item.label.value)")
    assert legend == ["perfectly reliable", "lead 1 d", "lead 2 d", "lead 3 d"]


def test_a_station_shows_its_hindcast_against_the_observations(verification_session: PageSession,
                                                                report_inputs: dict[str, Path]) -> None:
    station = "01022500"
    page = verification_session.page
    page.select_option("#lead", "1")  # lead 2 d
    select_row(verification_session, station)
    drawn = source(verification_session, "forecast_data")
    with xr.open_dataset(report_inputs["hindcast"]) as hindcast:
        expected = hindcast["streamflow_m3s"].sel(station=station).isel(lead=1).values
    assert len(drawn["median"]) == len(expected) == 92
    np.testing.assert_allclose(np.asarray(drawn["median"], dtype=float), expected, rtol=1e-3)  # 4 digits
    step_ms = 86_400_000
    assert drawn["x"][0] == page.evaluate("hydroseq.data.issueT[0]") + 2 * step_ms  # at the valid time
    assert len(source(verification_session, "observed_data")["y"]) == 92 + 3
    details = page.locator("#station-details").inner_text()
    assert "NSE model" in details and "NSE persistence" in details
