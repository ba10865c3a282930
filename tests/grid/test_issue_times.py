"""Issue times from the command line onto grid labels (UTC interval ends)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from hydroseq.errors import ConfigError
from hydroseq.grid import GridSpec
from hydroseq.grid.issue_times import locate_issue, parse_instant, parse_issue_times

CARAVAN_GRID = GridSpec("1D", "Etc/GMT+8")  # the bundled Caravan grid: local day D ends D+1 08:00 UTC


def test_a_date_means_the_end_of_that_local_day() -> None:
    assert parse_instant("2014-09-30", CARAVAN_GRID) == pd.Timestamp("2014-10-01T08:00Z")
    assert parse_instant("2014-09-30", GridSpec("1D", "UTC", dt.time(9, 0))) == pd.Timestamp("2014-10-01T09:00Z")


def test_instants_with_and_without_zone() -> None:
    assert parse_instant("2014-09-30T12:00Z", CARAVAN_GRID) == pd.Timestamp("2014-09-30T12:00Z")
    assert parse_instant("2014-09-30T12:00+02:00", CARAVAN_GRID) == pd.Timestamp("2014-09-30T10:00Z")
    assert parse_instant("2014-09-30T12:00", CARAVAN_GRID) == pd.Timestamp("2014-09-30T20:00Z")  # grid zone


def test_ranges() -> None:
    first, last, is_range = parse_issue_times("2014-09-01..2014-09-30", CARAVAN_GRID)
    assert is_range and first == pd.Timestamp("2014-09-02T08:00Z") and last == pd.Timestamp("2014-10-01T08:00Z")
    assert parse_issue_times("2014-09-30", CARAVAN_GRID)[2] is False
    with pytest.raises(ConfigError, match="ends before it starts"):
        parse_issue_times("2014-09-30..2014-09-01", CARAVAN_GRID)


@pytest.mark.parametrize("text", ["yesterday", "2014-13-45", ""])
def test_bad_text_is_a_clear_error(text: str) -> None:
    with pytest.raises(ConfigError, match="--issue-time"):
        parse_instant(text, CARAVAN_GRID)


def test_the_label_at_or_before_never_picks_a_later_step_and_past_the_data_is_said() -> None:
    times = np.array(["2014-09-29T08:00", "2014-09-30T08:00", "2014-10-01T08:00"], dtype="datetime64[ns]")
    located = {text: locate_issue(times, CARAVAN_GRID, pd.Timestamp(text)) for text in (
        "2014-09-30T08:00Z", "2014-09-30T07:59Z", "2014-09-01T00:00Z", "2014-10-02T07:59Z", "2014-10-02T08:00Z",
        "2015-01-01T00:00Z")}
    assert [step.index for step in located.values()] == [1, 0, -1, 2, 2, 2]
    assert located["2014-09-01T00:00Z"].before_the_data and not located["2014-09-30T08:00Z"].before_the_data
    assert not located["2014-10-02T07:59Z"].past_the_data  # before the next label: the newest whole step
    assert located["2014-10-02T08:00Z"].label_past_the_data == np.datetime64("2014-10-02T08:00", "ns")
    assert located["2015-01-01T00:00Z"].label_past_the_data == np.datetime64("2014-12-31T08:00", "ns")
