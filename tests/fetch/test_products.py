"""Which runs an issue time needs, steps and issue times as written (no network)."""

from __future__ import annotations

import pandas as pd
import pytest

from hydroseq.errors import ConfigError
from hydroseq.fetch import PRODUCTS, runs_needed
from hydroseq.fetch.products import parse_issue_time, parse_steps, product_named

UTC = "UTC"


def _runs(source: str, issue: str, steps: tuple[int, ...] = (0, 6, 12), latency: float | None = None) -> list[str]:
    delay = None if latency is None else pd.Timedelta(hours=latency)
    return [f"{run:%Y-%m-%dT%HZ}" for run in runs_needed(PRODUCTS[source], pd.Timestamp(issue), steps, delay)]


def test_the_newest_run_published_by_the_issue_time_then_the_one_before() -> None:
    # HRES is published 8 h after its reference time: at 12:00 the 00 UTC run is, the 06 UTC run is not yet
    assert _runs("ecmwf-hres", "2026-11-02T12:00Z") == ["2026-11-02T00Z", "2026-11-01T18Z"]
    assert _runs("ecmwf-hres", "2026-11-02T14:00Z") == ["2026-11-02T06Z", "2026-11-02T00Z"]
    assert _runs("gfs", "2026-11-02T05:00Z") == ["2026-11-02T00Z", "2026-11-01T18Z"]
    assert _runs("gfs", "2026-11-02T04:59Z") == ["2026-11-01T18Z", "2026-11-01T12Z"]


def test_a_run_whose_cycle_stops_before_the_longest_step_is_passed_over() -> None:
    # HRES 06 and 18 UTC runs reach 90 h only: steps to 120 h need the 00 or 12 UTC run
    assert _runs("ecmwf-hres", "2026-11-02T23:00Z", steps=(0, 120)) == ["2026-11-02T12Z", "2026-11-02T00Z"]
    assert _runs("ecmwf-ens", "2026-11-02T23:00Z", steps=(0, 120)) == ["2026-11-02T12Z", "2026-11-02T06Z"]
    with pytest.raises(ConfigError, match="no run to step 400 h"):
        runs_needed(PRODUCTS["gfs"], pd.Timestamp("2026-11-02T12:00Z"), (0, 400))


def test_the_latency_can_be_given() -> None:
    assert _runs("ecmwf-hres", "2026-11-02T12:00Z", latency=0) == ["2026-11-02T12Z", "2026-11-02T06Z"]


def test_issue_times_are_read_as_the_other_commands_read_them() -> None:
    assert parse_issue_time("2026-11-02T06:00Z") == pd.Timestamp("2026-11-02T06:00Z")
    assert parse_issue_time("2026-11-02") == pd.Timestamp("2026-11-03T00:00Z")  # the end of that day
    assert parse_issue_time("2026-11-02", "Etc/GMT+8") == pd.Timestamp("2026-11-03T08:00Z")
    assert parse_issue_time("2026-11-02T06:00", "Etc/GMT+8") == pd.Timestamp("2026-11-02T14:00Z")
    with pytest.raises(ConfigError, match="ambiguous day/month order"):
        parse_issue_time("03/04/2026")
    with pytest.raises(ConfigError, match="--timezone"):
        parse_issue_time("2026-11-02", "Mars/Olympus")


def test_steps_are_hours_and_ranges() -> None:
    assert parse_steps(["0/12/6", "18", 24]) == (0, 6, 12, 18, 24)
    for wrong in ("6/0/1", "0/12/0", "1.5", "a/b/c", "-6"):
        with pytest.raises(ConfigError, match="--steps"):
            parse_steps([wrong])


def test_an_unknown_source_names_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="ecmwf-hres, ecmwf-ens, gfs, gefs, or nwis"):
        product_named("icon")
