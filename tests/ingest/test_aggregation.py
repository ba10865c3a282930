"""Hand-checked aggregation: the expected numbers below were worked out by hand from the inputs."""

from __future__ import annotations

import numpy as np
import pandas as pd


def _csv_source(path, frequency, timestamp, timezone="UTC", aggregation="sum", units="mm", **extra):
    return {"path": str(path), "format": "csv", "station": "0001", "time_column": "time",
            "time_format": "%Y-%m-%d %H:%M", "frequency": frequency, "timestamp": timestamp,
            "timezone": timezone, "variables": {"x": {"source": "value", "units": units, "aggregation": aggregation}},
            **extra}


def test_hourly_to_daily_sum_with_0900_local_day_boundary(tmp_path, build):
    # Hourly amounts stamped at the hour's end in UTC; value = hours since 2015-12-01 00:00 UTC.
    ends = pd.date_range("2015-12-01 01:00", periods=72, freq="1h")
    path = build.csv(tmp_path / "rain.csv", ends, np.arange(1, 73, dtype=float))
    grid = {"frequency": "1D", "timezone": "Etc/GMT+5", "day_boundary": "09:00",
            "start": "2015-12-01", "end": "2015-12-02"}
    labels, values = build.run(_csv_source(path, "1h", "interval_end"), grid, [path])
    # Day 12-01 = (12-01 09:00, 12-02 09:00] EST = (14:00 UTC, 14:00 UTC next day]: hours 15..38.
    assert list(labels) == [pd.Timestamp("2015-12-02 14:00"), pd.Timestamp("2015-12-03 14:00")]
    assert values["x"].tolist() == [sum(range(15, 39)), sum(range(39, 63))]  # 636, 1212


def test_hourly_to_daily_sum_from_interval_start_stamps_moves_one_hour(tmp_path, build):
    starts = pd.date_range("2015-12-01 00:00", periods=72, freq="1h")  # hour [h, h+1) -> end h+1
    path = build.csv(tmp_path / "rain.csv", starts, np.arange(1, 73, dtype=float))
    grid = {"frequency": "1D", "timezone": "Etc/GMT+5", "day_boundary": "09:00",
            "start": "2015-12-01", "end": "2015-12-01"}
    _, values = build.run(_csv_source(path, "1h", "interval_start"), grid, [path])
    # The value stamped 14:00 covers 14:00-15:00 UTC: the first hour of the rain day. Values 15..38.
    assert values["x"].tolist() == [sum(range(15, 39))]


def test_five_minute_to_hourly_mean_across_fall_back(tmp_path, build):
    # Readings every 5 min from 2015-11-01 04:00 to 08:00 UTC (00:00 EDT .. 03:00 EST), value =
    # minutes since 00:00 UTC, written in New York wall-clock time sorted by wall clock (so the
    # repeated 01:xx hour is interleaved, as in the real USGS export).
    utc = pd.date_range("2015-11-01 04:00", "2015-11-01 08:00", freq="5min")
    local = utc.tz_localize("UTC").tz_convert("America/New_York").tz_localize(None)
    minutes = ((utc - pd.Timestamp("2015-11-01")) / pd.Timedelta(minutes=1)).to_numpy()
    order = np.argsort(local.to_numpy(), kind="stable")
    path = build.csv(tmp_path / "q.csv", local[order], minutes[order])
    assert local[order].duplicated().sum() == 12
    grid = {"frequency": "1h", "timezone": "UTC", "start": "2015-11-01", "end": "2015-11-01"}
    labels, values = build.run(_csv_source(path, "5min", "instantaneous", "America/New_York", "mean", "m3/s"),
                               grid, [path])
    by_label = dict(zip(labels, values["x"], strict=True))
    # Hour ending 06:00 UTC = 01:05..01:55 EDT + 01:00 EST; mean of minutes 305..360 = 332.5.
    for hour in (5, 6, 7, 8):
        assert by_label[pd.Timestamp(f"2015-11-01 {hour:02d}:00")] == hour * 60 - 27.5
    assert np.isnan(by_label[pd.Timestamp("2015-11-01 04:00")])  # only 1 of 12 readings


def test_five_minute_to_hourly_mean_across_spring_forward(tmp_path, build):
    utc = pd.date_range("2015-03-08 05:00", "2015-03-08 09:00", freq="5min")  # 00:00 EST .. 05:00 EDT
    local = utc.tz_localize("UTC").tz_convert("America/New_York").tz_localize(None)
    assert not (local.hour == 2).any()  # 02:00-02:55 does not exist locally
    minutes = ((utc - pd.Timestamp("2015-03-08")) / pd.Timedelta(minutes=1)).to_numpy()
    path = build.csv(tmp_path / "q.csv", local, minutes)
    grid = {"frequency": "1h", "timezone": "UTC", "start": "2015-03-08", "end": "2015-03-08"}
    labels, values = build.run(_csv_source(path, "5min", "instantaneous", "America/New_York", "mean", "m3/s"),
                               grid, [path])
    by_label = dict(zip(labels, values["x"], strict=True))
    for hour in (6, 7, 8, 9):  # 07:00 UTC = 02:00 EST = 03:00 EDT: the jump leaves no hole in UTC
        assert by_label[pd.Timestamp(f"2015-03-08 {hour:02d}:00")] == hour * 60 - 27.5


def test_eight_day_to_daily_forward_fill_is_bounded_and_never_backwards(tmp_path, build):
    starts = pd.DatetimeIndex(["2001-01-01", "2001-01-09", "2001-01-17"])
    path = build.csv(tmp_path / "lai.csv", starts, np.array([10.0, 20.0, 30.0]))
    grid = {"frequency": "1D", "timezone": "UTC", "start": "2000-12-30", "end": "2001-01-27"}
    source = _csv_source(path, "8D", "interval_start", aggregation="mean", units="1")
    source["variables"]["x"]["convert"] = False  # a leaf-area index: no unit conversion
    labels, values = build.run(source, grid, [path])
    series = pd.Series(values["x"], index=labels)
    # (01-01, 01-09] is known at 01-09 00:00 = the label of grid day 01-08; held for 7 more days.
    assert series[:"2001-01-08 23:00"].isna().all()
    assert (series["2001-01-09":"2001-01-16"] == 10.0).all() and len(series["2001-01-09":"2001-01-16"]) == 8
    assert (series["2001-01-17":"2001-01-24"] == 20.0).all()
    assert (series["2001-01-25":"2001-02-01"] == 30.0).all()
    source["fill_limit"] = 2
    _, limited = build.run(source, grid, [path])
    limited = pd.Series(limited["x"], index=labels)
    assert (limited["2001-01-09":"2001-01-11"] == 10.0).all()
    assert limited["2001-01-12":"2001-01-16"].isna().all()


def test_coverage_threshold_gives_nan_never_zero(tmp_path, build):
    ends = pd.date_range("2015-06-01 01:00", periods=72, freq="1h")
    rain = np.ones(72)
    rain[5] = np.nan          # day 1: 23 of 24 hours
    rain[24:48] = np.nan      # day 2: nothing
    path = build.csv(tmp_path / "rain.csv", ends, rain)
    grid = {"frequency": "1D", "timezone": "UTC", "start": "2015-06-01", "end": "2015-06-03"}
    _, strict = build.run(_csv_source(path, "1h", "interval_end"), grid, [path])
    assert np.isnan(strict["x"][:2]).all() and strict["x"][2] == 24.0
    _, lenient = build.run(_csv_source(path, "1h", "interval_end", min_coverage=0.9), grid, [path])
    assert lenient["x"][0] == 23.0 and np.isnan(lenient["x"][1]) and lenient["x"][2] == 24.0


def test_rate_units_become_amounts_per_step(tmp_path, build):
    ends = pd.date_range("2015-06-01 01:00", periods=24, freq="1h")
    path = build.csv(tmp_path / "rate.csv", ends, np.full(24, 1e-7))  # m/s = 0.36 mm/h
    grid = {"frequency": "1D", "timezone": "UTC", "start": "2015-06-01", "end": "2015-06-01"}
    _, values = build.run(_csv_source(path, "1h", "interval_end", units="m/s"), grid, [path])
    assert np.isclose(values["x"][0], 24 * 0.36, rtol=1e-6)
