"""GridSpec: the grid attributes round-trip, the local-day rule on daily and hourly grids, the file contract."""

from __future__ import annotations

import dataclasses
import datetime as dt
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from hydroseq.config import Period, validate_config
from hydroseq.config.ingest import GridConfig, SourceConfig
from hydroseq.errors import InputDataError
from hydroseq.grid import GRID_ATTRIBUTES, GridSpec, parse_day_boundary
from hydroseq.ingested import open_ingested

CARAVAN = GridSpec("1D", "Etc/GMT+8")  # local day D is labelled D+1 08:00 UTC


def _period(start: str, end: str) -> Period:
    return Period(start=dt.date.fromisoformat(start), end=dt.date.fromisoformat(end))


def test_attributes_round_trip_and_name_every_grid_attribute() -> None:
    grid = GridSpec("1h", "+05:30", dt.time(9, 0))
    attrs = grid.to_attrs()
    assert attrs == {"grid_frequency": "1h", "grid_timezone": "+05:30", "grid_day_boundary": "09:00",
                     "time_label_convention": "interval_end"}
    assert tuple(attrs) == GRID_ATTRIBUTES
    assert GridSpec.from_attrs(attrs) == grid
    assert GridSpec.from_attrs({**attrs, "title": "other attributes are ignored"}) == grid
    assert grid.step == pd.Timedelta(hours=1) and grid.zone.utcoffset(None) == dt.timedelta(hours=5, minutes=30)
    assert pickle.loads(pickle.dumps(grid)) == grid


def test_day_boundary_and_label_convention_default_when_absent() -> None:
    grid = GridSpec.from_attrs({"grid_frequency": "1D", "grid_timezone": "Etc/GMT+8"})
    assert grid == CARAVAN and grid.day_boundary == dt.time(0, 0) and grid.label_convention == "interval_end"


@pytest.mark.parametrize(("attrs", "message"), [
    ({"grid_timezone": "UTC"}, r"lacks the grid attributes \['grid_frequency'\]"),
    ({"grid_frequency": "1D"}, r"lacks the grid attributes \['grid_timezone'\]"),
    ({"grid_frequency": "1D", "grid_timezone": "Mars/Olympus"}, "unknown time zone 'Mars/Olympus'"),
    ({"grid_frequency": "monthly", "grid_timezone": "UTC"}, "not a fixed-length frequency"),
    ({"grid_frequency": "1D", "grid_timezone": "UTC", "grid_day_boundary": "25:00"}, "HH:MM"),
    ({"grid_frequency": "1D", "grid_timezone": "UTC", "time_label_convention": "interval_start"},
     "'interval_start' is not one hydroseq reads"),
])
def test_unreadable_attributes_are_rejected_naming_the_problem(attrs: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GridSpec.from_attrs(attrs)


def test_differences_name_the_attributes_that_differ() -> None:
    other = dataclasses.replace(CARAVAN, timezone="UTC", day_boundary=dt.time(9, 0))
    assert CARAVAN.differences(CARAVAN) == []
    assert CARAVAN.differences(other) == [("grid_timezone", "Etc/GMT+8", "UTC"),
                                          ("grid_day_boundary", "00:00", "09:00")]


def test_a_label_belongs_to_the_local_day_its_interval_ends_in() -> None:
    labels = np.array(["2001-02-01T08:00", "2001-02-01T08:01", "2001-02-02T07:59", "2005-01-01T08:00"],
                      dtype="datetime64[ns]")
    days = CARAVAN.local_days(labels)
    assert list(days.strftime("%Y-%m-%d")) == ["2001-01-31", "2001-02-01", "2001-02-01", "2004-12-31"]
    np.testing.assert_array_equal(CARAVAN.day_of_year(labels), [31, 32, 32, 366])


def test_with_a_9am_boundary_the_hour_ending_at_9_closes_the_day() -> None:
    grid = GridSpec("1h", "UTC", dt.time(9, 0))
    labels = pd.DatetimeIndex(["2015-06-02 09:00", "2015-06-02 10:00"], tz="UTC")
    assert list(grid.local_days(labels).strftime("%Y-%m-%d")) == ["2015-06-01", "2015-06-02"]


def test_a_step_starts_on_its_local_day_or_hour_as_a_regular_axis() -> None:
    days = pd.date_range("2013-10-01", "2014-09-30", freq="D")
    labels = (days + pd.Timedelta(hours=32)).to_numpy("datetime64[ns]")  # the end of local day D in Etc/GMT+8
    assert CARAVAN.step_starts(labels).equals(pd.DatetimeIndex(days))
    assert CARAVAN.step_starts(labels).equals(CARAVAN.local_days(labels))
    hours = pd.date_range("2015-06-02T01:00", periods=3, freq="h", tz="UTC")
    assert list(GridSpec("1h", "UTC").step_starts(hours)) == list(pd.date_range("2015-06-02", periods=3, freq="h"))
    nine = GridSpec("1h", "UTC", dt.time(9, 0))  # the hour ending at 09:00 is the last of the day before
    assert nine.step_starts(pd.DatetimeIndex(["2015-06-02 09:00"], tz="UTC"))[0] == pd.Timestamp("2015-06-01 23:00")


def test_day_end_is_the_label_of_the_days_last_step_and_inverts_the_day_rule() -> None:
    assert CARAVAN.day_end(dt.date(2014, 9, 30)) == pd.Timestamp("2014-10-01T08:00Z")
    assert GridSpec("1D", "UTC", dt.time(9, 0)).day_end(dt.date(2014, 9, 30)) == pd.Timestamp("2014-10-01T09:00Z")
    day = dt.date(2000, 2, 29)
    assert CARAVAN.local_days(pd.DatetimeIndex([CARAVAN.day_end(day)]))[0].date() == day


def test_daily_grid_in_gmt_minus_8_selects_exactly_the_local_days() -> None:
    days = pd.date_range("1999-12-25", "2000-01-10", freq="D")
    labels = (days + pd.Timedelta(days=1, hours=8)).values
    mask = CARAVAN.period_mask(labels, _period("2000-01-01", "2000-01-03"))
    assert list(days[mask].strftime("%Y-%m-%d")) == ["2000-01-01", "2000-01-02", "2000-01-03"]


def test_hourly_grid_takes_every_hour_of_the_days_with_a_9am_boundary() -> None:
    labels = pd.date_range("2015-06-01", "2015-06-05", freq="h", tz="UTC")
    mask = GridSpec("1h", "UTC", dt.time(9, 0)).period_mask(labels, _period("2015-06-02", "2015-06-02"))
    selected = labels[mask]
    assert len(selected) == 24
    assert selected[0] == pd.Timestamp("2015-06-02 10:00", tz="UTC")  # interval (09:00, 10:00]
    assert selected[-1] == pd.Timestamp("2015-06-03 09:00", tz="UTC")


def test_fixed_offset_zone_matches_the_equivalent_etc_zone() -> None:
    labels = pd.date_range("2001-03-01", periods=200, freq="6h").values
    period = _period("2001-03-10", "2001-03-20")
    assert np.array_equal(GridSpec("6h", "-05:00").period_mask(labels, period),
                          GridSpec("6h", "Etc/GMT+5").period_mask(labels, period))


@pytest.mark.parametrize("text", ["24:00", "9", "aa:bb", "12:60"])
def test_bad_day_boundary_is_rejected(text: str) -> None:
    with pytest.raises(ValueError, match="HH:MM"):
        parse_day_boundary(text)


def test_the_config_parses_its_time_strings_once_into_the_grid_and_the_source_step() -> None:
    grid = validate_config({"frequency": "1h", "timezone": "-05:00", "day_boundary": "09:00",
                            "start": "2001-01-01", "end": "2001-01-02"}, GridConfig)
    assert grid.spec == GridSpec("1h", "-05:00", dt.time(9, 0))
    source = {"path": "x.csv", "format": "csv", "variables": {"q": {"source": "q", "units": "m3/s"}}}
    assert SourceConfig.model_validate({**source, "frequency": "15min"}).step == pd.Timedelta(minutes=15)
    irregular = SourceConfig.model_validate({**source, "frequency": "irregular", "timestamp": "instantaneous"})
    assert irregular.step is None


def _ingested(path: Path, times: pd.DatetimeIndex, attrs: dict[str, str]) -> Path:
    xr.Dataset({"q": (("station", "time"), np.ones((1, len(times)), np.float32))},
               coords={"station": ["a"], "time": times.values}, attrs=attrs).to_netcdf(path)
    return path


def test_open_ingested_returns_the_grid_of_a_file_that_keeps_the_contract(tmp_path: Path) -> None:
    path = _ingested(tmp_path / "ok.nc", pd.date_range("2001-01-02 08:00", periods=5, freq="D"), CARAVAN.to_attrs())
    dataset, grid = open_ingested(path)
    with dataset:
        assert grid == CARAVAN and dataset.sizes == {"station": 1, "time": 5}


def test_open_ingested_names_what_breaks_the_contract(tmp_path: Path) -> None:
    daily = pd.date_range("2001-01-02 08:00", periods=5, freq="D")
    no_grid = _ingested(tmp_path / "no_grid.nc", daily, {"title": "not ingested"})
    with pytest.raises(InputDataError, match="lacks the grid attributes") as error:
        open_ingested(no_grid)
    assert error.value.path == str(no_grid)
    gap = _ingested(tmp_path / "gap.nc", daily.delete(2), CARAVAN.to_attrs())
    with pytest.raises(InputDataError, match="not regular") as error:
        open_ingested(gap)
    assert error.value.where == "time 2001-01-05T08:00:00.000000000"
    no_station = tmp_path / "no_station.nc"
    no_station_data = xr.Dataset({"q": ("time", np.ones(5))}, coords={"time": daily.values}, attrs=CARAVAN.to_attrs())
    no_station_data.to_netcdf(no_station)
    with pytest.raises(InputDataError, match="no 'station' coordinate"):
        open_ingested(no_station)
    broken = tmp_path / "broken.nc"
    broken.write_text("not netcdf")
    with pytest.raises(InputDataError, match="cannot open as NetCDF"):
        open_ingested(broken)
