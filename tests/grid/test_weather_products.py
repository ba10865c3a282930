"""The catalogue of weather-forecast products and the one rule for the run due at an issue time."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hydroseq.grid.weather_products import (
    WEATHER_PRODUCTS,
    RunSchedule,
    WeatherProduct,
    due_references,
    weather_product,
)

HOUR = pd.Timedelta(hours=1)


def _due(issue: str, latency_hours: float, schedule: RunSchedule, count: int = 1) -> list[str]:
    return [f"{run:%Y-%m-%dT%H:%M}" for run in schedule.runs_due(pd.Timestamp(issue), latency_hours * HOUR, count)]


def test_the_run_due_is_the_newest_published_by_the_issue_time() -> None:
    twice_daily = RunSchedule(pd.Timedelta("12h"))
    assert _due("2026-11-02T08:00Z", 8, twice_daily) == ["2026-11-02T00:00"]  # published exactly at the issue
    assert _due("2026-11-02T07:59Z", 8, twice_daily) == ["2026-11-01T12:00"]
    assert _due("2026-11-02T20:00Z", 8, twice_daily, count=3) == ["2026-11-02T12:00", "2026-11-02T00:00",
                                                                   "2026-11-01T12:00"]


def test_daily_cycles_may_be_uneven_and_the_zone_of_the_issue_is_kept() -> None:
    schedule = RunSchedule.daily([0, 6, 12])
    assert _due("2026-11-02T05:00Z", 5, schedule, count=3) == ["2026-11-02T00:00", "2026-11-01T12:00",
                                                               "2026-11-01T06:00"]
    runs = schedule.runs_due(pd.Timestamp("2026-11-02T13:00+02:00"), 0 * HOUR)
    assert runs == [pd.Timestamp("2026-11-02T06:00Z")] and str(runs[0].tz) == "UTC+02:00"
    assert schedule.run_due(pd.Timestamp("2026-11-02T11:00"), 0 * HOUR) == pd.Timestamp("2026-11-02T06:00")  # naive


def test_runs_anchored_at_a_reference_time_of_their_own() -> None:
    """Ingest anchors the schedule at the run it read: the next one is due ``issue_frequency`` later."""
    read = pd.Timestamp("2001-01-02T02:00").value
    issues = pd.DatetimeIndex(["2001-01-03T07:59", "2001-01-03T08:00", "2001-01-05T08:00"]).as_unit("ns").asi8
    due = due_references(issues, 6 * HOUR, pd.Timedelta("1D"), anchors=read)
    assert list(pd.DatetimeIndex(due)) == [pd.Timestamp("2001-01-02T02:00"), pd.Timestamp("2001-01-03T02:00"),
                                           pd.Timestamp("2001-01-05T02:00")]
    per_issue = due_references(issues, 6 * HOUR, pd.Timedelta("1D"), anchors=np.array([read, read, issues[2]]))
    assert per_issue[2] == issues[2] - pd.Timedelta("1D").value  # an anchor at the issue itself: published a day ago


def test_a_products_schedule_keeps_the_cycles_that_reach_the_longest_step() -> None:
    hres = weather_product("ecmwf-hres")
    assert hres.schedule(90).cycles == tuple(pd.Timedelta(hours=hour) for hour in (0, 6, 12, 18))
    assert hres.schedule(240).cycles == (pd.Timedelta(0), pd.Timedelta(hours=12))
    assert hres.issue_frequency(240) == pd.Timedelta("12h") and hres.issue_frequency(90) == pd.Timedelta("6h")
    with pytest.raises(ValueError, match="publishes no run to step 241 h"):
        hres.schedule(241)
    uneven = WeatherProduct("toy", "toy runs", {0: 240, 6: 240, 12: 90}, 5 * HOUR)
    with pytest.raises(ValueError, match=r"not evenly spaced \(00, 06 UTC\)"):
        uneven.issue_frequency(120)


def test_the_catalogue_knows_each_products_latency_and_members() -> None:
    assert {name: (product.latency / HOUR, product.members) for name, product in WEATHER_PRODUCTS.items()} == {
        "ecmwf-hres": (8, None), "ecmwf-ens": (9, 51), "gfs": (5, None), "gefs": (6, 31)}
    assert weather_product("gefs").ensemble and not weather_product("gfs").ensemble
    with pytest.raises(ValueError, match="no weather-forecast product 'icon' .one of ecmwf-hres, ecmwf-ens, gfs, gefs"):
        weather_product("icon")
