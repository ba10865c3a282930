"""Hindcast figures say what a person needs: the basin's name, the issue times, the lead in days, discharge in
m³/s (the target's mm/d on a second axis) and, for a model with quantiles, the band on every hydrograph.

The hindcast is the real Caravan series of water year 2014 (01022500, 08189500, 02064000), forecast by
persistence (the value at the issue step for every lead) with a spread around it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PolyCollection

from hydroseq.forecast.discharge import M3S_LABEL
from hydroseq.forecast.hindcast import score_hindcast
from hydroseq.forecast.plots import hindcast_figure, issue_text, plume_figure
from hydroseq.forecast.result import ForecastResult, lead_text

DATA = Path(__file__).resolve().parents[2] / "data"
STATIONS = ("01022500", "08189500", "02064000")
LEVELS = (0.05, 0.25, 0.5, 0.75, 0.95)


def _hindcast(areas: bool = True) -> tuple[ForecastResult, np.ndarray]:
    table = pd.read_csv(DATA / "stations" / "caravan_camels_us.csv", dtype={"station_id": str}).set_index("station_id")
    days = pd.date_range("2013-10-01", "2014-09-30", freq="D")
    flow = np.stack([pd.read_csv(DATA / "daily_caravan_camels_us" / f"{station}.csv", index_col="date",
                                 parse_dates=True)["streamflow"].reindex(days.union(days + pd.Timedelta(days=3)))
                     .to_numpy(np.float32) for station in STATIONS])  # [station, day]
    leads = np.array([1, 2, 3])
    values = np.repeat(flow[:, :len(days), None], 3, axis=2).transpose(1, 0, 2)  # persistence
    observed = np.stack([flow[:, k:k + len(days)] for k in leads], axis=-1).transpose(1, 0, 2)
    result = ForecastResult(
        issue_times=(days + pd.Timedelta(hours=32)).to_numpy("datetime64[ns]"),  # end of local day D in Etc/GMT+8
        stations=STATIONS, leads=leads, step=pd.Timedelta("1D"), values=values, variable="streamflow",
        units="mm d-1", station_names=tuple(table.loc[list(STATIONS), "name"]),
        area_km2=table.loc[list(STATIONS), "area_km2"].to_numpy(np.float64) if areas else None,
        quantiles=values[..., None] * np.array([0.6, 0.8, 1.0, 1.25, 1.6], np.float32), quantile_levels=LEVELS)
    return result, observed


def _bands(axis) -> int:
    return sum(isinstance(child, PolyCollection) for child in axis.get_children())


def test_hydrographs_name_the_basin_issue_and_lead_in_days_in_m3s_with_the_band() -> None:
    result, observed = _hindcast()
    scores = score_hindcast(result, observed, None)
    figure = hindcast_figure(result, observed, scores)
    title = figure.get_suptitle()
    assert "issued 2013-10-02 08:00..2014-10-01 08:00 UTC" in title and "lead 1 d" in title
    skill, *hydrographs = figure.axes[:4]
    assert skill.get_xlabel() == "lead (days)" and [t.get_text() for t in skill.get_xticklabels()] == ["1", "2", "3"]
    titles = " ".join(axis.get_title() for axis in hydrographs)
    assert "Narraguagus River at Cherryfield, Maine (01022500)" in titles and "Mission Rv at Refugio, TX" in titles
    for axis in hydrographs:
        assert axis.get_ylabel() == M3S_LABEL and _bands(axis) == 2  # the 90 and 50 % intervals
    maine = next(axis for axis in hydrographs if "01022500" in axis.get_title())
    observed_line = next(line for line in maine.get_lines() if line.get_label() == "observed")
    np.testing.assert_allclose(observed_line.get_ydata(), observed[:, 0, 0] * 619.1 * 1000 / 86400, rtol=1e-6)
    assert any(child.get_ylabel() == "mm/d" for child in maine.child_axes)  # the target's units beside


def test_plume_names_the_basin_and_the_lead_of_each_panel() -> None:
    result, observed = _hindcast()
    figure = plume_figure(result, observed, score_hindcast(result, observed, None))
    assert "issued 2013-10-02 08:00..2014-10-01 08:00 UTC" in figure.get_suptitle()
    assert any(f"{name} (" in figure.get_suptitle() for name in result.station_names or ())
    panels = figure.axes[:3]
    assert [axis.get_title() for axis in panels] == ["lead 1 d", "lead 2 d", "lead 3 d"]
    assert all(_bands(axis) == 2 for axis in panels) and panels[0].get_ylabel() == M3S_LABEL


def test_without_an_area_the_target_units_are_drawn() -> None:
    result, observed = _hindcast(areas=False)
    figure = hindcast_figure(result, observed, score_hindcast(result, observed, None))
    assert all(axis.get_ylabel() == "streamflow (mm d-1)" for axis in figure.axes[1:4])


@pytest.mark.parametrize(("lead", "step", "text"), [(1, "1D", "lead 1 d"), (6, "1h", "lead 0.25 d (6 h)"),
                                                    (0, "1h", "lead 0 d"), (2, "12h", "lead 1 d (24 h)")])
def test_lead_in_days(lead: int, step: str, text: str) -> None:
    assert lead_text(lead, pd.Timedelta(step)) == text


def test_one_issue_time() -> None:
    result, _ = _hindcast()
    single = ForecastResult(result.issue_times[:1], result.stations, result.leads, result.step, result.values[:1],
                            result.variable, result.units)
    assert issue_text(single) == "issued 2013-10-02 08:00 UTC"


def test_a_baseline_without_any_score_is_named_not_drawn() -> None:
    """Climatology of a training period the data file does not hold: no NSE anywhere, and still a figure."""
    result, observed = _hindcast()
    scores = score_hindcast(result, observed, {"climatology": np.full_like(result.values, np.nan)})
    skill = hindcast_figure(result, observed, scores).axes[0]
    assert "climatology (no scores)" in [text.get_text() for text in skill.get_legend().get_texts()]
