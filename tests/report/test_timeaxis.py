"""Grid labels on a page: the local day of a daily value, the local end of a sub-daily one, charts at the middle
of each interval, and the zone's offset (with summer time where the zone has it)."""

from __future__ import annotations

import numpy as np

from hydroseq.grid import GridSpec
from hydroseq.report.timeaxis import TimeAxis, age_text, utc_text

MS_PER_HOUR = 3_600_000


def ms(local: str) -> float:
    return float((np.datetime64(local, "ms") - np.datetime64("1970-01-01", "ms")) / np.timedelta64(1, "ms"))


def test_a_daily_value_is_named_and_drawn_on_its_local_day() -> None:
    axis = TimeAxis(GridSpec("1D", "Etc/GMT+8"))
    label = np.datetime64("2014-10-01T08:00", "ns")  # the end of local day 2014-09-30 (UTC-8)
    assert axis.text(label) == "2014-09-30" and axis.daily
    assert axis.chart_ms(np.array([label])) == [ms("2014-09-30T12:00")]  # the middle of the day
    assert axis.boundary_ms(label) == ms("2014-10-01T00:00")
    assert axis.utc_offset(label) == "UTC-08:00" and utc_text(label) == "2014-10-01 08:00 UTC"


def test_an_hourly_value_is_named_by_its_local_end_and_follows_summer_time() -> None:
    axis = TimeAxis(GridSpec("1h", "Europe/Vienna"))
    winter, summer = np.datetime64("2014-01-15T10:00", "ns"), np.datetime64("2014-07-15T10:00", "ns")
    assert axis.text(winter) == "2014-01-15 11:00" and axis.text(summer) == "2014-07-15 12:00"
    assert axis.chart_ms(np.array([summer])) == [ms("2014-07-15T12:00") - MS_PER_HOUR / 2]
    assert axis.utc_offset(winter) == "UTC+01:00" and axis.utc_offset(summer) == "UTC+02:00"


def test_missing_times_and_ages() -> None:
    axis = TimeAxis(GridSpec("1D"))
    assert axis.text(np.datetime64("NaT")) == "-" and axis.chart_ms(np.array(["NaT"], dtype="datetime64[ns]")) == [None]
    assert [age_text(h) for h in (0.0, 30.0, 84.0, float("nan"))] == ["0 h", "30 h", "3.5 d", "-"]
