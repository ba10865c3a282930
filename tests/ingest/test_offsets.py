"""Stamps that carry a UTC offset are converted once, by their own offset; the source's zone applies to
naive stamps only and, where set, must agree with the offsets (else an error naming file and line).

The property: with random offsets, mixed within a file, perturbing every observation known after t*
leaves every grid value labelled <= t* bit-identical.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hydroseq.errors import InputDataError

OFFSETS = ["+00:00", "-05:00", "-04:00", "+05:30", "+09:45", "-03:30", "+14:00", "-11:00"]
SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def offset_text(utc: pd.DatetimeIndex, offsets: list[str], style: str = "colon") -> list[str]:
    """``utc`` written as wall clock plus offset (``2015-03-07 01:00-05:00``, or ``...-0500`` / ``Z``)."""
    texts = []
    for stamp, offset in zip(utc, offsets, strict=True):
        sign = 1 if offset[0] == "+" else -1
        wall = stamp + sign * pd.Timedelta(hours=int(offset[1:3]), minutes=int(offset[4:6]))
        suffix = offset.replace(":", "") if style == "compact" else offset
        texts.append(wall.strftime("%Y-%m-%d %H:%M") + ("Z" if style == "zulu" and offset == "+00:00" else suffix))
    return texts


def write(path: Path, stamps: list[str], values: np.ndarray) -> Path:
    text = ["" if np.isnan(v) else repr(float(v)) for v in values]
    pd.DataFrame({"time": stamps, "value": text}).to_csv(path, index=False)
    return path


def source(frequency: str, convention: str = "instantaneous", zone: str | None = None,
           aggregation: str = "mean") -> dict:
    return {"path": "unused", "format": "csv", "station": "0001", "time_column": "time", "frequency": frequency,
            "timestamp": convention, "timezone": zone, "min_coverage": 0.5,
            "variables": {"x": {"source": "value", "units": "1", "convert": False, "aggregation": aggregation}}}


@st.composite
def offset_cases(draw):
    frequency = draw(st.sampled_from(["5min", "15min", "1h", "3h", "1D"]))
    step = pd.Timedelta(frequency)
    convention = draw(st.sampled_from(["interval_start", "interval_end", "instantaneous"]))
    start_day = draw(st.sampled_from(["2015-03-06", "2015-10-30", "2001-01-01"]))
    count = int(pd.Timedelta("4D") / step) + 2
    first = pd.Timestamp(start_day) + pd.Timedelta(minutes=draw(st.integers(0, 59)))
    utc = pd.date_range(first, periods=count, freq=step)
    mixed = draw(st.booleans())
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    offsets = list(rng.choice(OFFSETS, count)) if mixed else [draw(st.sampled_from(OFFSETS))] * count
    # a fixed zone equal to the offset agrees
    zone = None if mixed else draw(st.sampled_from([None, offsets[0], offsets[0]]))
    values = rng.gamma(0.5, 2.0, count).round(3)
    values[rng.random(count) < 0.1] = np.nan
    ends = utc + step if convention == "interval_start" else utc
    cutoff = draw(st.one_of(st.sampled_from(list(ends[1:-1])),
                            st.integers(0, 4 * 24 * 60).map(
                                lambda m: pd.Timestamp(start_day) + pd.Timedelta(minutes=m))))
    grid = {"frequency": draw(st.sampled_from(["1h", "3h", "1D"])),
            "timezone": draw(st.sampled_from(["UTC", "+05:30"])),
            "start": start_day, "end": str((pd.Timestamp(start_day) + pd.Timedelta("3D")).date())}
    return {"frequency": frequency, "convention": convention, "zone": zone, "utc": utc, "ends": ends,
            "offsets": offsets, "style": draw(st.sampled_from(["colon", "compact", "zulu"])), "values": values,
            "cutoff": cutoff,
            "grid": grid, "aggregation": draw(st.sampled_from(["sum", "mean", "min", "max"])), "seed": seed}


@SETTINGS
@given(case=offset_cases())
def test_offset_stamps_are_causal(case, build):
    later = np.asarray(case["ends"] > case["cutoff"])
    rng = np.random.default_rng(case["seed"] + 7)
    perturbed = case["values"].copy()
    perturbed[later] = np.where(rng.random(later.sum()) < 0.3, np.nan, rng.normal(50, 20, later.sum()))
    stamps = offset_text(case["utc"], case["offsets"], case["style"])
    config = source(case["frequency"], case["convention"], case["zone"], case["aggregation"])
    with tempfile.TemporaryDirectory() as folder:
        runs = [build.run(config, case["grid"], [write(Path(folder) / f"{name}.csv", stamps, values)])
                for name, values in (("a", case["values"]), ("b", perturbed))]
    (labels, before), (_, after) = runs
    past = labels <= case["cutoff"]
    np.testing.assert_array_equal(before["x"][past].view(np.int32), after["x"][past].view(np.int32))


@SETTINGS
@given(case=offset_cases())
def test_offset_stamps_land_on_the_label_of_their_utc_instant(case, build):
    """Each observation is binned by its true UTC end, whatever offset it was written with."""
    stamps = offset_text(case["utc"], case["offsets"], case["style"])
    config = source(case["frequency"], case["convention"], case["zone"], case["aggregation"])
    as_utc = [stamp.strftime("%Y-%m-%d %H:%M") + "+00:00" for stamp in case["utc"]]
    with tempfile.TemporaryDirectory() as folder:
        _, written = build.run(config, case["grid"], [write(Path(folder) / "a.csv", stamps, case["values"])])
        _, in_utc = build.run(dict(config, timezone="UTC"), case["grid"],
                              [write(Path(folder) / "b.csv", as_utc, case["values"])])
    np.testing.assert_array_equal(written["x"].view(np.int32), in_utc["x"].view(np.int32))


def test_the_probe_case_lands_at_0600z_not_0100z(build, tmp_path):
    path = write(tmp_path / "q.csv", ["2015-03-07 05:00+00:00", "2015-03-07 06:00+00:00", "2015-03-07 07:00+00:00"],
                 np.array([1.0, 2.0, 3.0]))
    grid = {"frequency": "1h", "start": "2015-03-07", "end": "2015-03-07"}
    labels, values = build.run(source("1h", zone="UTC"), grid, [path])
    assert values["x"][labels.get_loc(pd.Timestamp("2015-03-07 06:00"))] == 2.0
    assert np.isnan(values["x"][labels.get_loc(pd.Timestamp("2015-03-07 01:00"))])


@pytest.mark.parametrize("zone", ["+05:30", "Etc/GMT-5", "America/New_York"])
def test_a_configured_zone_that_contradicts_the_offsets_names_file_and_line(build, tmp_path, zone):
    path = write(tmp_path / "q.csv", ["2015-03-07 06:00+00:00", "2015-03-07 07:00+00:00"], np.array([1.0, 2.0]))
    with pytest.raises(InputDataError) as caught:
        build.run(source("1h", zone=zone), {"frequency": "1h", "start": "2015-03-07", "end": "2015-03-07"}, [path])
    message = str(caught.value)
    assert str(path) in message and "line 2" in message and "+00:00" in message and zone in message
    assert "contradicts" in message and "\n" not in message


def test_est_all_year_contradicts_new_york_in_summer(build, tmp_path):
    """A file in EST all year (-05:00) read with America/New_York: the first daylight-time stamp is
    named, not a 'nonexistent time' that is not in the file."""
    utc = pd.date_range("2015-03-08 05:00", periods=6, freq="1h")  # DST starts at 07:00Z
    path = write(tmp_path / "q.csv", offset_text(utc, ["-05:00"] * 6), np.arange(6.0))
    with pytest.raises(InputDataError, match=r"line 4, 2015-03-08 02:00:00-05:00\).*offset -05:00 contradicts.*"
                                             r"America/New_York \(offset -04:00"):
        build.run(source("1h", zone="America/New_York"),
                  {"frequency": "1h", "start": "2015-03-08", "end": "2015-03-08"}, [path])


def test_est_edt_offsets_equal_the_same_wall_clock_read_in_new_york(build, tmp_path):
    """EST/EDT written as -05:00/-04:00 (mixed in one column, through both DST changes, the repeated
    fall-back hour told apart by its offset) gives the grid of the naive wall clock read with the
    zone, with the zone set (it agrees) or unset."""
    utc = pd.concat([pd.Series(pd.date_range(day, periods=24 * 12, freq="5min"))
                     for day in ("2015-03-08", "2015-11-01")])
    utc = pd.DatetimeIndex(utc)
    local = utc.tz_localize("UTC").tz_convert("America/New_York")
    offsets = [stamp.strftime("%z")[:3] + ":" + stamp.strftime("%z")[3:] for stamp in local]
    values = np.random.default_rng(3).gamma(1.0, 2.0, len(utc)).round(2)
    grid = {"frequency": "1h", "start": "2015-03-08", "end": "2015-11-01"}
    naive = write(tmp_path / "naive.csv", list(local.tz_localize(None).strftime("%Y-%m-%d %H:%M")), values)
    aware = write(tmp_path / "aware.csv", offset_text(utc, offsets), values)
    _, expected = build.run(source("5min", zone="America/New_York"), grid, [naive])
    for zone in ("America/New_York", None):
        _, got = build.run(source("5min", zone=zone), grid, [aware])
        np.testing.assert_array_equal(got["x"].view(np.int32), expected["x"].view(np.int32))
    assert np.isfinite(expected["x"]).sum() == 48


def test_daily_interval_start_with_offsets_ends_at_the_next_local_midnight(build, tmp_path):
    """Day stamps with an offset in a DST zone: the day of 2015-03-08 lasts 23 hours."""
    path = write(tmp_path / "d.csv", ["2015-03-07 00:00-05:00", "2015-03-08 00:00-05:00", "2015-03-09 00:00-04:00"],
                 np.array([1.0, 2.0, 3.0]))
    grid = {"frequency": "1h", "start": "2015-03-07", "end": "2015-03-10"}
    labels, values = build.run(dict(source("1D", "interval_start", "America/New_York"), fill_limit=0), grid, [path])
    known = labels[np.isfinite(values["x"])]
    assert list(known) == [pd.Timestamp("2015-03-08 05:00"), pd.Timestamp("2015-03-09 04:00"),
                           pd.Timestamp("2015-03-10 04:00")]


@pytest.mark.parametrize("rows, line", [(["2015-03-07 06:00+00:00", "2015-03-07 07:00"], 3),
                                        (["2015-03-07 06:00", "2015-03-07 07:00-05:00"], 3)])
def test_a_column_mixing_stamps_with_and_without_offset_names_the_line(build, tmp_path, rows, line):
    path = write(tmp_path / "q.csv", rows, np.array([1.0, 2.0]))
    with pytest.raises(InputDataError, match=rf"line {line}\).*on every row or on none"):
        build.run(source("1h"), {"frequency": "1h", "start": "2015-03-07", "end": "2015-03-07"}, [path])


def _netcdf_with_offset_units(path: Path, units: str, hours: np.ndarray, values: np.ndarray) -> Path:
    import netCDF4

    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("time", len(hours))
        time = ds.createVariable("time", "f8", ("time",))
        time.units = units
        time[:] = hours
        ds.createVariable("value", "f8", ("time",))[:] = values
    return path


@pytest.mark.parametrize("zone", [None, "+05:30", "Asia/Kolkata"])
def test_a_cf_time_unit_with_an_offset_is_applied_once(build, tmp_path, zone):
    """``hours since 2015-03-07 00:00 +05:30``: the first value was observed at 2015-03-06 18:30Z, so
    it belongs to the hour ending 19:00Z (applied twice, it would land on 13:00Z)."""
    path = _netcdf_with_offset_units(tmp_path / "a.nc", "hours since 2015-03-07 00:00:00 +05:30",
                                     np.arange(12.0), np.arange(1.0, 13.0))
    config = dict(source("1h", zone=zone), format="netcdf_station", station="0001")
    labels, values = build.run(config, {"frequency": "1h", "start": "2015-03-06", "end": "2015-03-07"}, [path])
    known = labels[np.isfinite(values["x"])]
    assert known[0] == pd.Timestamp("2015-03-06 19:00") and values["x"][np.isfinite(values["x"])][0] == 1.0
    assert len(known) == 12


def test_a_cf_time_unit_offset_that_contradicts_the_zone_is_named(build, tmp_path):
    path = _netcdf_with_offset_units(tmp_path / "a.nc", "hours since 2015-03-07 00:00:00 -05:00",
                                     np.arange(3.0), np.ones(3))
    config = dict(source("1h", zone="UTC"), format="netcdf_station", station="0001")
    with pytest.raises(InputDataError, match=r"a\.nc \(2015-03-07 00:00:00-05:00\): the stamp's UTC offset -05:00 "
                                             r"contradicts the source's timezone UTC"):
        build.run(config, {"frequency": "1h", "start": "2015-03-07", "end": "2015-03-07"}, [path])
