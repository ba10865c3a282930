"""Causality properties, one per source type: perturbing every observation known after a cutoff t*
(its interval end, or its instant, is later than t*) leaves every grid value labelled <= t*
bit-identical. Frequencies, phase offsets, timestamp conventions, time zones, grids, aggregations
and the cutoff are drawn at random; coarse-to-fine cases (2-day or daily sources on an hourly grid)
are included.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
GRIDS = st.fixed_dictionaries({
    "frequency": st.sampled_from(["1h", "3h", "1D"]),
    "timezone": st.sampled_from(["UTC", "Etc/GMT+5", "+05:30"]),
    "day_boundary": st.sampled_from(["00:00", "09:00"]),
})
FIXED_ZONES = ["UTC", "-05:00", "Etc/GMT+8", "+09:30"]


@st.composite
def series_cases(draw, frequencies=("5min", "15min", "1h", "3h", "1D", "2D"), zones=(*FIXED_ZONES, "America/New_York")):
    """A regular series: UTC stamps, its convention, zone, values, and the cutoff t*."""
    frequency = draw(st.sampled_from(frequencies))
    step = pd.Timedelta(frequency)
    zone = draw(st.sampled_from(zones if step < pd.Timedelta("1D") else FIXED_ZONES))
    convention = draw(st.sampled_from(["interval_start", "interval_end", "instantaneous"]))
    start_day = draw(st.sampled_from(["2001-01-01", "2015-10-30", "2015-03-06"]))  # plain, fall-back, spring-forward
    phase = pd.Timedelta(minutes=draw(st.integers(0, 59)))
    count = int(pd.Timedelta("4D") / step) + 2
    utc_stamps = pd.date_range(pd.Timestamp(start_day) + phase, periods=count, freq=step)
    seed = draw(st.integers(0, 2**31 - 1))
    values = np.random.default_rng(seed).gamma(0.5, 2.0, count).round(3)
    values[np.random.default_rng(seed + 1).random(count) < 0.1] = np.nan
    ends = utc_stamps + step if convention == "interval_start" else utc_stamps
    cutoff = draw(st.one_of(st.sampled_from(list(ends[1:-1])),  # exactly on an observation's end
                            st.integers(0, 4 * 24 * 60).map(
                                lambda m: pd.Timestamp(start_day) + pd.Timedelta(minutes=m))))
    grid = dict(draw(GRIDS), start=start_day, end=str((pd.Timestamp(start_day) + pd.Timedelta("3D")).date()))
    return {"frequency": frequency, "zone": zone, "convention": convention, "utc": utc_stamps, "ends": ends,
            "values": values, "cutoff": cutoff, "grid": grid,
            "aggregation": draw(st.sampled_from(["sum", "mean", "min", "max"])), "seed": seed}


def _local(utc: pd.DatetimeIndex, zone: str) -> pd.DatetimeIndex:
    if zone == "UTC":
        return utc
    if zone[0] in "+-":
        sign = 1 if zone[0] == "+" else -1
        return utc + sign * pd.Timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    return utc.tz_localize("UTC").tz_convert(zone).tz_localize(None)


def _perturbed(case: dict) -> np.ndarray:
    later = np.asarray(case["ends"] > case["cutoff"])
    rng = np.random.default_rng(case["seed"] + 7)
    changed = case["values"].copy()
    changed[later] = np.where(rng.random(later.sum()) < 0.3, np.nan, rng.normal(50, 20, later.sum()))
    return changed


def _assert_past_unchanged(labels: pd.DatetimeIndex, before: np.ndarray, after: np.ndarray,
                           cutoff: pd.Timestamp) -> None:
    past = (labels <= cutoff)
    assert before.dtype == np.float32
    np.testing.assert_array_equal(before[past].view(np.int32), after[past].view(np.int32))


def _variable(case: dict) -> dict:
    return {"x": {"source": "value", "units": "1", "convert": False, "aggregation": case["aggregation"]}}


@SETTINGS
@given(case=series_cases())
def test_csv_source_is_causal(case, build):
    with tempfile.TemporaryDirectory() as folder:
        source = {"path": "unused", "format": "csv", "station": "0001", "time_column": "time",
                  "time_format": "%Y-%m-%d %H:%M", "frequency": case["frequency"], "timestamp": case["convention"],
                  "timezone": case["zone"], "min_coverage": 0.5, "variables": _variable(case)}
        local = _local(case["utc"], case["zone"])
        runs = []
        for name, values in (("a", case["values"]), ("b", _perturbed(case))):
            path = build.csv(Path(folder) / f"{name}.csv", local, values)
            runs.append(build.run(source, case["grid"], [path]))
    (labels, before), (_, after) = runs
    _assert_past_unchanged(labels, before["x"], after["x"], case["cutoff"])


@SETTINGS
@given(case=series_cases(frequencies=("1D",), zones=tuple(FIXED_ZONES)), hourly=st.booleans())
def test_camels_text_source_is_causal(case, hourly, build):
    # CAMELS files hold dates: the days are local days of a fixed-offset zone (interval_start).
    utc_days = case["utc"].normalize()
    case = dict(case, convention="interval_start", ends=utc_days + pd.Timedelta("1D"))
    case["cutoff"] = min(case["cutoff"], case["ends"][-2])
    grid = dict(case["grid"], frequency="1h" if hourly else case["grid"]["frequency"])
    with tempfile.TemporaryDirectory() as folder:
        source = {"path": "unused", "format": "camels_us_streamflow", "frequency": "1D", "timestamp": "interval_start",
                  "timezone": "UTC", "variables": {"q": {"source": "Q", "units": "ft3/s", "aggregation": "mean"}}}
        runs = []
        for name, values in (("a", np.abs(case["values"])), ("b", np.abs(_perturbed(case)))):
            path = build.camels_streamflow(Path(folder) / f"0001_{name}_streamflow_qc.txt", "0001", utc_days, values)
            runs.append(build.run(source, grid, [path]))
    (labels, before), (_, after) = runs
    _assert_past_unchanged(labels, before["q"], after["q"], case["cutoff"])


@SETTINGS
@given(case=series_cases(zones=tuple(FIXED_ZONES)))
def test_netcdf_series_source_is_causal(case, build):
    with tempfile.TemporaryDirectory() as folder:
        source = {"path": "unused", "format": "netcdf_station", "station_dim": "station",
                  "station_id_variable": "station_id", "frequency": case["frequency"], "timestamp": case["convention"],
                  "timezone": case["zone"], "min_coverage": 0.5, "variables": _variable(case)}
        local = _local(case["utc"], case["zone"])
        runs = []
        for name, values in (("a", case["values"]), ("b", _perturbed(case))):
            other = np.random.default_rng(1).normal(size=len(values))
            path = build.netcdf_series(Path(folder) / f"{name}.nc", ["9999", "0001"], local, np.stack([other, values]))
            runs.append(build.run(source, case["grid"], [path]))
    (labels, before), (_, after) = runs
    _assert_past_unchanged(labels, before["x"], after["x"], case["cutoff"])


@SETTINGS
@given(case=series_cases(zones=tuple(FIXED_ZONES)))
def test_pi_xml_source_is_causal(case, build):
    """A Delft-FEWS export: values stamped at their interval's end (or instant), in the document's timeZone."""
    from tests.ingest.pi_builders import Series

    instantaneous = case["convention"] == "instantaneous"
    hours = _local(pd.DatetimeIndex([pd.Timestamp(0)]), case["zone"])[0] - pd.Timestamp(0)
    step = pd.Timedelta(case["frequency"])
    daily = step >= pd.Timedelta("1D")
    unit = ("day", step // pd.Timedelta("1D")) if daily else ("minute", step // pd.Timedelta("1min"))
    with tempfile.TemporaryDirectory() as folder:
        source = {"path": "unused", "format": "pi_xml", "frequency": case["frequency"],
                  "timestamp": "instantaneous" if instantaneous else "interval_end", "min_coverage": 0.5,
                  "variables": _variable(case) | {"x": {**_variable(case)["x"], "source": "P"}}}
        runs = []
        for name, values in (("a", case["values"]), ("b", _perturbed(case))):
            series = Series("0001", "P", case["ends"], values, kind="instantaneous" if instantaneous else "mean",
                            step=unit, units="1")
            path = build.pi(Path(folder) / f"{name}.xml", [series], time_zone=hours / pd.Timedelta(hours=1))
            runs.append(build.run(source, case["grid"], [path]))
    (labels, before), (_, after) = runs
    _assert_past_unchanged(labels, before["x"], after["x"], case["cutoff"])


@SETTINGS
@given(case=series_cases(frequencies=("15min", "1h", "3h", "1D"), zones=("UTC",)), weighted=st.booleans())
def test_gridded_netcdf_source_is_causal(case, weighted, build):
    lats, lons = np.array([35.2, 35.3, 35.4]), np.array([-80.9, -80.8, -80.7])
    spread = np.random.default_rng(case["seed"]).uniform(0.5, 1.5, (1, 3, 3))
    with tempfile.TemporaryDirectory() as folder:
        weights = Path(folder) / "weights.csv"
        pd.DataFrame({"station_id": ["0001"] * 3, "lat": [35.3, 35.3, 35.4], "lon": [-80.8, -80.7, -80.8],
                      "weight": [0.5, 0.3, 0.2]}).to_csv(weights, index=False)
        source = {"path": "unused", "format": "netcdf_grid", "frequency": case["frequency"],
                  "timestamp": case["convention"], "timezone": "UTC", "min_coverage": 0.5,
                  "extraction": "weights" if weighted else "nearest",
                  "weights_path": str(weights) if weighted else None,
                  "variables": {"x": {"source": "rain", "units": "1", "convert": False,
                                      "aggregation": case["aggregation"]}}}
        runs = []
        for name, values in (("a", case["values"]), ("b", _perturbed(case))):
            field = values[:, None, None] * spread
            path = build.netcdf_grid(Path(folder) / f"{name}.nc", case["utc"], lats, lons, field)
            runs.append(build.run(source, case["grid"], [path]))
    (labels, before), (_, after) = runs
    _assert_past_unchanged(labels, before["x"], after["x"], case["cutoff"])


def test_the_property_detects_a_right_closed_boundary(build, tmp_path):
    """Positive control: an observation ending exactly at a label belongs to that label, so the
    property above is tight (a left-closed binning would leak it one step early or drop it)."""
    ends = pd.date_range("2001-01-01 01:00", periods=48, freq="1h")
    values = np.ones(48)
    grid = {"frequency": "1D", "timezone": "UTC", "start": "2001-01-01", "end": "2001-01-01"}
    source = {"path": "unused", "format": "csv", "station": "0001", "time_column": "time", "frequency": "1h",
              "timestamp": "interval_end", "variables": {"x": {"source": "value", "units": "mm", "aggregation": "sum"}}}
    path = build.csv(tmp_path / "a.csv", ends, values)
    _, base = build.run(source, grid, [path])
    values[23] = 100.0  # the hour ending exactly at 2001-01-02 00:00, the day's label
    path = build.csv(tmp_path / "b.csv", ends, values)
    _, moved = build.run(source, grid, [path])
    assert base["x"][0] == 24.0 and moved["x"][0] == 123.0
