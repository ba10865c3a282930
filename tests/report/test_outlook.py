"""The forecast page's outlook and map colour count flood thresholds only, and count a probability as the page shows
it: the shipped probabilistic model on the bundled basins, issued 2013-04-04 (a wet spring day: four stations likely
above the flow exceeded 5 % of the time, none near a 2-year flow)."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from hydroseq.forecast import run_forecast
from hydroseq.report import write_report
from hydroseq.report.content import percent
from hydroseq.report.forecast_page import forecast_page
from hydroseq.report.inputs import grid_of, read_issued_forecast
from hydroseq.report.stations import RISK_CLASSES
from hydroseq.report.timeaxis import TimeAxis
from tests.conftest import ingest_caravan
from tests.fixtures import REPO_ROOT

MODEL = REPO_ROOT / "models" / "caravan-camels-us-daily-probabilistic"
ISSUE = "2013-04-04"
COLOUR = {text: colour for _, text, colour in RISK_CLASSES}


@pytest.fixture(scope="module")
def spring(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled basins from 1981 (the model's training period, 1981-2001, gives the default thresholds) to the
    issue day's month."""
    return ingest_caravan(tmp_path_factory.mktemp("outlook") / "caravan.nc", dt.date(1981, 1, 1),
                          dt.date(2013, 4, 30))


def headline(page: Path) -> str:
    found = re.search(r'id="headline">([^<]*)<', page.read_text(encoding="utf-8"))
    assert found is not None
    return found.group(1).replace("&#39;", "'")


def page_of(forecast: Path):
    result = read_issued_forecast(forecast, "--forecast")
    return forecast_page(result, TimeAxis(grid_of(result, forecast)), None, None, None, None)


def test_a_forecast_above_q95_alone_says_no_flood_threshold_is_likely(spring: Path, tmp_path: Path) -> None:
    run = run_forecast(MODEL, spring, ISSUE, out=tmp_path / "forecast.nc", show_progress=False)
    thresholds = run.result.thresholds
    assert thresholds is not None and thresholds.levels == ("2-year", "5-year", "q95", "q99")
    assert run.result.exceedance is not None
    highest = run.result.exceedance[0].max(axis=1)  # [station, threshold] over the leads
    assert (highest[:, 2] >= 0.5).sum() == 4  # the premise: four stations likely above q95 ...
    assert (highest[:, :2] < 0.05).all()  # ... and every one unlikely (under 5 %) to reach a 2-year flow
    page = write_report(tmp_path / "page.html", forecast=tmp_path / "forecast.nc", data=spring).path
    assert headline(page) == ("Outlook: no flood threshold is likely: none of the 31 stations with one is at 5 % or "
                              "more in the lead window; high flows (not flood thresholds): 4 stations at 50 % or more")
    assert thresholds.flood == (True, True, False, False)
    content = page_of(tmp_path / "forecast.nc")
    assert content.map_title.startswith("Highest probability of exceeding a flood threshold")
    assert {row["colour"] for row in content.rows} == {COLOUR["under 5 %"]}  # the map is not coloured by q95
    headings = [column.heading for column in content.columns if column.key.startswith("p_")]
    assert headings == ["P > 2-year daily-mean flow", "P > 5-year daily-mean flow",
                        "high flow: P > daily-mean flow exceeded 5 % of the time",
                        "high flow: P > daily-mean flow exceeded 1 % of the time"]
    likely = [row for row in content.rows if float(row["cells"]["p_2"][1]) >= 0.5]
    assert len(likely) == 4 and all(row["cells"]["risk"][0] in ("under 1 %", "1 %", "2 %", "3 %", "4 %")
                                    for row in likely)


def test_the_headline_the_table_and_the_map_agree_at_the_rounding_edge(spring: Path, tmp_path: Path) -> None:
    """A flood level where the forecast gives 4.79 %: the table shows "5 %", so the headline names the station at
    5 % and the map colours it in "5 to 20 %" (the headline said "none at 5 % or more" beside a table's 5 %)."""
    first = run_forecast(MODEL, spring, ISSUE, out=tmp_path / "first.nc", show_progress=False).result
    assert first.quantiles is not None and first.area_km2 is not None
    s = first.stations.index("01022500")
    top = first.quantiles[0, s, :, -1].astype(np.float64)  # q95 per lead, mm/d
    below = first.quantiles[0, s, :, -2].astype(np.float64)
    scale = (top - below) * 0.05 / 0.05  # the tail's length
    level = float(np.max(top + scale * np.log(0.05 / 0.0479)))  # 4.79 % at the likeliest lead
    table = tmp_path / "levels.csv"
    pd.DataFrame({"station": ["01022500"], "level": ["alert"], "discharge [mm/d]": [level]}).to_csv(table,
                                                                                                    index=False)
    run_forecast(MODEL, spring, ISSUE, out=tmp_path / "forecast.nc", thresholds=table, show_progress=False)
    with xr.open_dataset(tmp_path / "forecast.nc") as forecast:
        probability = float(forecast["streamflow_exceedance_probability"].sel(station="01022500").max())
        name = str(forecast["station_name"].sel(station="01022500").values)
    assert probability == pytest.approx(0.0479, abs=2e-4) and percent(probability) == "5 %"
    page = write_report(tmp_path / "page.html", forecast=tmp_path / "forecast.nc").path
    assert headline(page) == f"Outlook: 0 of 31 stations at 50 % or more of exceeding a flood threshold in the lead " \
                             f"window; likeliest: {name} 5 %"
    row = next(row for row in page_of(tmp_path / "forecast.nc").rows if row["cells"]["station"][0] == "01022500")
    assert row["cells"]["risk"][0] == row["cells"]["p_0"][0] == "5 %"
    assert row["colour"] == COLOUR["5 to 20 %"]
