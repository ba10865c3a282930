"""period_mask: the local-day rule of docs/dataset-format.md on daily and hourly grids."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from hydroseq.config import Period
from hydroseq.dataset import period_mask
from hydroseq.dataset.periods import parse_day_boundary


def _period(start: str, end: str) -> Period:
    return Period(start=dt.date.fromisoformat(start), end=dt.date.fromisoformat(end))


def test_daily_grid_in_gmt_minus_8_selects_exactly_the_local_days() -> None:
    # local day D is labelled D+1 08:00 UTC
    days = pd.date_range("1999-12-25", "2000-01-10", freq="D")
    labels = (days + pd.Timedelta(days=1, hours=8)).values
    mask = period_mask(labels, _period("2000-01-01", "2000-01-03"), "Etc/GMT+8", "00:00")
    assert list(days[mask].strftime("%Y-%m-%d")) == ["2000-01-01", "2000-01-02", "2000-01-03"]


def test_hourly_grid_takes_every_hour_of_the_days_with_a_9am_boundary() -> None:
    labels = pd.date_range("2015-06-01", "2015-06-05", freq="h", tz="UTC")
    mask = period_mask(labels, _period("2015-06-02", "2015-06-02"), "UTC", "09:00")
    selected = labels[mask]
    assert len(selected) == 24
    assert selected[0] == pd.Timestamp("2015-06-02 10:00", tz="UTC")  # interval (09:00, 10:00]
    assert selected[-1] == pd.Timestamp("2015-06-03 09:00", tz="UTC")


def test_fixed_offset_zone_matches_the_equivalent_etc_zone() -> None:
    labels = pd.date_range("2001-03-01", periods=200, freq="6h").values
    period = _period("2001-03-10", "2001-03-20")
    assert np.array_equal(period_mask(labels, period, "-05:00"), period_mask(labels, period, "Etc/GMT+5"))


@pytest.mark.parametrize("text", ["24:00", "9", "aa:bb", "12:60"])
def test_bad_day_boundary_is_rejected(text: str) -> None:
    with pytest.raises(ValueError, match="HH:MM"):
        parse_day_boundary(text)
