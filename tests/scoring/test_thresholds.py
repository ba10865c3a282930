"""Flood thresholds: annual maxima by water year, return-period fits, percentiles, the threshold table."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from hydroseq.errors import InputDataError
from hydroseq.scoring import thresholds
from hydroseq.scoring.thresholds import StationThresholds

STATIONS = ["01022500", "01547700", "02064000"]
LOC, SCALE = 100.0, 30.0


def daily(start: str, end: str) -> np.ndarray:
    return np.arange(start, end, dtype="datetime64[D]")


def gumbel_series(stations: int, years: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Daily base flow below 10 with one Gumbel(LOC, SCALE) peak per water year and station."""
    rng = np.random.default_rng(seed)
    times = daily("1950-10-01", f"{1950 + years}-10-01")
    water_year = thresholds.water_years(times)
    values = rng.uniform(0.0, 10.0, size=(stations, times.size))
    for year in np.unique(water_year):
        steps = np.flatnonzero(water_year == year)
        peak_steps = steps[rng.integers(0, steps.size, size=stations)]
        values[np.arange(stations), peak_steps] = stats.gumbel_r.rvs(LOC, SCALE, size=stations, random_state=rng)
    return values, times


def test_water_years_are_named_by_the_year_they_end_in() -> None:
    times = np.array(["2000-09-30", "2000-10-01", "2001-09-30T23:00", "2001-10-01"], dtype="datetime64[s]")
    assert thresholds.water_years(times).tolist() == [2000, 2001, 2001, 2002]
    assert thresholds.water_years(times, 1).tolist() == [2000, 2000, 2001, 2001]
    with pytest.raises(ValueError, match="1..12"):
        thresholds.water_years(times, 13)


def test_annual_maxima_respect_the_water_year_boundary() -> None:
    times = daily("2000-10-01", "2002-10-01")
    values = np.ones((1, times.size))
    values[0, times == np.datetime64("2001-09-30")] = 50.0  # last day of water year 2001
    values[0, times == np.datetime64("2001-10-01")] = 80.0  # first day of water year 2002
    years, maxima = thresholds.annual_maxima(values, times)
    assert years.tolist() == [2001, 2002]
    assert maxima.tolist() == [[50.0, 80.0]]
    # calendar years: 2000 and 2002 hold 92 and 273 of 366 and 365 days, too few; 2001 holds both peaks
    years, maxima = thresholds.annual_maxima(values, times, water_year_start_month=1)
    assert years.tolist() == [2000, 2001, 2002]
    assert np.isnan(maxima[0, [0, 2]]).all() and maxima[0, 1] == 80.0


def test_annual_maxima_need_the_coverage_of_a_full_year() -> None:
    times = daily("2000-10-01", "2003-10-01")  # water years 2001 (365 days), 2002, 2003
    values = np.ones((2, times.size))
    water_year = thresholds.water_years(times)
    gap_2001 = np.flatnonzero(water_year == 2001)[:92]  # 273 / 365 = 0.75 finite: below 0.8
    gap_2002 = np.flatnonzero(water_year == 2002)[:55]  # 310 / 365 = 0.85 finite: kept
    values[0, gap_2001] = np.nan
    values[0, gap_2002] = np.nan
    values[1, :] = np.nan
    _, maxima = thresholds.annual_maxima(values, times, min_coverage=0.8)
    assert np.isnan(maxima[0, 0]) and maxima[0, 1:].tolist() == [1.0, 1.0]
    assert np.isnan(maxima[1]).all()
    _, lenient = thresholds.annual_maxima(values, times, min_coverage=0.7)
    assert lenient[0].tolist() == [1.0, 1.0, 1.0]


def test_annual_maxima_of_hourly_steps_and_bad_times() -> None:
    times = np.arange("2000-10-01T00", "2001-10-01T00", dtype="datetime64[h]")  # 8,760 hours
    values = np.ones((1, times.size))
    values[0, 100] = 9.0
    assert thresholds.annual_maxima(values, times)[1].tolist() == [[9.0]]
    _, partial = thresholds.annual_maxima(values[:, : 8760 // 2], times[: 8760 // 2])  # half a year only
    assert np.isnan(partial).all()
    with pytest.raises(ValueError, match="increasing"):
        thresholds.annual_maxima(values[:, :3], times[[0, 2, 1]])


def test_gumbel_fit_recovers_the_2_and_5_year_flows() -> None:
    values, times = gumbel_series(stations=20, years=60, seed=42)
    periods = np.array([2.0, 5.0])
    true = stats.gumbel_r.isf(1.0 / periods, LOC, SCALE)
    # standard error of a Gumbel maximum-likelihood quantile from n maxima (reduced variate y):
    # scale / sqrt(n) * sqrt(1.1087 + 0.5140 y + 0.6079 y^2); for n = 60 about 4.5 and 7.0
    reduced = -np.log(-np.log(1.0 - 1.0 / periods))
    standard_error = SCALE / math.sqrt(60) * np.sqrt(1.1087 + 0.5140 * reduced + 0.6079 * reduced ** 2)
    for distribution in ("gumbel", "gev"):
        flows = thresholds.return_period_flows(values, times, tuple(periods), distribution)
        assert flows.shape == (20, 2)
        assert np.all(np.abs(flows - true) < 3.0 * standard_error), distribution  # every station within 3 se
        assert np.median(np.abs(flows / true - 1.0), axis=0) == pytest.approx([0.0, 0.0], abs=0.05)


def test_return_period_flows_need_enough_years() -> None:
    values, times = gumbel_series(stations=2, years=8, seed=1)
    values[1, times >= np.datetime64("1954-10-01")] = np.nan  # 4 valid years left
    flows = thresholds.return_period_flows(values, times)
    assert np.isfinite(flows[0]).all() and flows[0, 1] > flows[0, 0]
    assert np.isnan(flows[1]).all()
    constant = np.full((1, times.size), 3.0)
    assert thresholds.return_period_flows(constant, times).tolist() == [[3.0, 3.0]]
    with pytest.raises(ValueError, match="exceed 1 year"):
        thresholds.return_period_flows(values, times, periods=(1,))


def test_derived_thresholds_levels_percentiles_and_source() -> None:
    values, times = gumbel_series(stations=3, years=10, seed=3)
    values[1, ::2] = np.nan  # half the days missing: no annual maximum, percentiles of what is left
    values[2] = np.nan
    derived = thresholds.derived_thresholds(values, times, STATIONS)
    assert derived.levels == ("2-year", "5-year", "q95", "q99")
    assert derived.stations == tuple(STATIONS)
    assert derived.source == "training period 1950-10-01..1960-09-30, gumbel"
    assert derived.values[0, :2] == pytest.approx(thresholds.return_period_flows(values[:1], times)[0])
    assert derived.values[0, 2:] == pytest.approx(np.percentile(values[0], [95.0, 99.0]))
    assert np.isnan(derived.values[1, :2]).all()
    assert derived.values[1, 2:] == pytest.approx(np.percentile(values[1, 1::2], [95.0, 99.0]))
    assert np.isnan(derived.values[2]).all()
    labelled = thresholds.derived_thresholds(values, times, STATIONS, periods=(10,), percentiles=(99.5,),
                                             distribution="gev", period_label="1981-10-01..2001-09-30")
    assert labelled.levels == ("10-year", "q99.5")
    assert labelled.source == "training period 1981-10-01..2001-09-30, gev"


def test_station_thresholds_reorder_and_checks() -> None:
    held = StationThresholds(("2-year", "q95"), ("a", "b"), np.array([[1.0, np.nan], [3.0, 4.0]]), "table t.csv")
    assert not held.values.flags.writeable
    reordered = held.for_stations(["b", "z", "a"])
    assert reordered.stations == ("b", "z", "a") and reordered.source == "table t.csv"
    assert reordered.values.tolist()[0] == [3.0, 4.0] and reordered.values.tolist()[2][0] == 1.0
    assert np.isnan(reordered.values[1]).all()
    with pytest.raises(ValueError, match="expected"):
        StationThresholds(("2-year",), ("a", "b"), np.zeros((2, 2)), "x")
    with pytest.raises(ValueError, match="repeat"):
        StationThresholds(("2-year",), ("a", "a"), np.zeros((2, 1)), "x")


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_read_threshold_table_keeps_station_ids_and_per_station_levels(tmp_path: Path) -> None:
    path = write(tmp_path / "thresholds.csv", "\ufeffstation,level,discharge,note\n"
                 "01022500,2-year,120.5,from the agency\n"
                 "01022500,alert,80,\n"
                 "\n"
                 "02064000, 2-year ,55,\n")
    table = thresholds.read_threshold_table(path, STATIONS)
    assert table.stations == tuple(STATIONS)
    assert table.levels == ("2-year", "alert")
    assert table.source == f"table {path}"
    expected = np.array([[120.5, 80.0], [np.nan, np.nan], [55.0, np.nan]])
    np.testing.assert_array_equal(table.values, expected)


@pytest.mark.parametrize(("text", "where", "problem"), [
    ("station,discharge\n01022500,3\n", "line 1", "missing column level"),
    ("station,level,discharge\n01022500,2-year,3\n01022500,5-year,lots\n", "line 3", "'lots' is not a number"),
    ("station,level,discharge\n\n01022500,2-year,-3\n", "line 3", "discharge -3 is negative"),  # a blank line counts
    ("station,level,discharge\n01022500,2-year,nan\n", "line 2", "'nan' is not a finite number"),
    ("station,level,discharge\n01022500,2-year,inf\n", "line 2", "'inf' is not a finite number"),
    ("station,level,discharge\n01022500,2-year,\n", "line 2", "'' is not a number"),
    ("station,level,discharge\n01022500,2-year,3\n01022500,2-year,4\n", "line 3",
     "station 01022500 level '2-year' is already given on line 2"),
    ("station,level,discharge\n1022500,2-year,3\n", "line 2", "station '1022500' is not one of the 3 stations"),
    ("station,level,discharge\n,2-year,3\n", "line 2", "station and level must not be empty"),
])
def test_read_threshold_table_errors_name_the_file_and_line(tmp_path: Path, text: str, where: str,
                                                           problem: str) -> None:
    path = write(tmp_path / "bad.csv", text)
    with pytest.raises(InputDataError) as caught:
        thresholds.read_threshold_table(path, STATIONS)
    message = str(caught.value)
    assert message.startswith(f"{path} ({where}): ") and problem in message
    assert "\n" not in message


def test_read_threshold_table_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(InputDataError, match="cannot be read"):
        thresholds.read_threshold_table(tmp_path / "missing.csv", STATIONS)
    with pytest.raises(InputDataError, match="is empty"):
        thresholds.read_threshold_table(write(tmp_path / "empty.csv", ""), STATIONS)
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"station,level,discharge\n\xff\xfe,2-year,3\n")
    with pytest.raises(InputDataError, match="not a readable CSV"):
        thresholds.read_threshold_table(binary, STATIONS)
