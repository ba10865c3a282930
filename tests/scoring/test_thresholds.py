"""Thresholds: derived from a training period (labels, interval, notes), the user's table, and its precedence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hydroseq.errors import InputDataError
from hydroseq.scoring import thresholds
from hydroseq.scoring.rating_curve import read_rating_curves
from hydroseq.scoring.return_periods import FrequencyAnalysis, fit_return_periods
from hydroseq.scoring.table_units import TargetUnits
from hydroseq.scoring.thresholds import StationThresholds

DATA = Path(__file__).resolve().parents[2] / "data" / "daily_caravan_camels_us"
STATIONS = ["01022500", "01547700", "02064000"]
AREAS = {"01022500": 619.10, "01547700": 115.04, "02064000": 427.71}  # km², as the data file has them
MM_D = TargetUnits("mm d-1", pd.Timedelta(days=1), AREAS)  # what the forecasts are in


def caravan(stations: list[str], first: str, end: str) -> tuple[np.ndarray, np.ndarray]:
    """Daily discharge (mm/d) of bundled Caravan basins from ``first`` up to ``end`` (exclusive)."""
    frames = [pd.read_csv(DATA / f"{station}.csv", usecols=["date", "streamflow"], parse_dates=["date"])
              for station in stations]
    times = frames[0]["date"].to_numpy().astype("datetime64[D]")
    keep = (times >= np.datetime64(first)) & (times < np.datetime64(end))
    return np.stack([frame["streamflow"].to_numpy(np.float64)[keep] for frame in frames]), times[keep]


def test_derived_thresholds_levels_labels_percentiles_and_source() -> None:
    values, times = caravan(STATIONS, "1989-10-01", "1999-10-01")  # water years 1990-1999
    values[1, ::2] = np.nan  # half the days missing: no annual maximum, percentiles of what is left
    values[2] = np.nan
    derived = thresholds.derived_thresholds(values, times, STATIONS)
    assert derived.levels == ("2-year", "5-year", "q95", "q99")
    assert derived.labels == ("2-year daily-mean flow", "5-year daily-mean flow",
                              "daily-mean flow exceeded 5 % of the time", "daily-mean flow exceeded 1 % of the time")
    assert derived.stations == tuple(STATIONS)
    assert derived.source == ("training period 1989-10-01..1999-09-30, daily-mean flows; return periods: Gumbel "
                              "fitted by L-moments to water-year maxima, 90 % interval from 1000 parametric "
                              "bootstrap samples (seed 0)")
    fit = fit_return_periods(values[:1], times)
    assert derived.values[0, :2].tolist() == fit.flows[0].tolist()
    assert derived.lower[0, :2].tolist() == fit.lower[0].tolist() and derived.confidence == 0.9
    assert np.all(derived.lower[0, :2] < derived.values[0, :2]) and np.all(derived.values[0, :2] < derived.upper[0, :2])
    assert derived.years.tolist() == [[10, 10, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
    assert np.isnan(derived.lower[:, 2:]).all()  # percentiles: no interval
    assert derived.values[0, 2:] == pytest.approx(np.percentile(values[0], [95.0, 99.0]))
    assert np.isnan(derived.values[1, :2]).all() and derived.notes[1].startswith("0 water years with enough days")
    assert derived.values[1, 2:] == pytest.approx(np.percentile(values[1, 1::2], [95.0, 99.0]))
    assert np.isnan(derived.values[2]).all() and derived.notes[2] == "no finite discharge in the period"
    labelled = thresholds.derived_thresholds(values, times, STATIONS, periods=(10,), percentiles=(99.5,),
                                             analysis=FrequencyAnalysis(method="mle", distribution="gev"),
                                             period_label="1981-10-01..2001-09-30")
    assert labelled.levels == ("10-year", "q99.5")
    assert labelled.source == ("training period 1981-10-01..2001-09-30, daily-mean flows; return periods: GEV "
                               "fitted by maximum likelihood to water-year maxima (the earlier method, no interval)")
    assert labelled.confidence is None and np.isnan(labelled.lower).all()


@pytest.mark.parametrize(("step", "name"), [("D", "daily-mean"), ("h", "hourly-mean"), ("6h", "6-hour-mean"),
                                            ("15min", "15-minute-mean")])
def test_thresholds_are_named_by_what_one_value_of_the_series_is(step: str, name: str) -> None:
    times = pd.date_range("2000-10-01", periods=10, freq=step).to_numpy()
    assert thresholds.mean_flow_name(times) == name


def test_the_training_period_alone_decides_the_thresholds() -> None:
    """The thresholds of 1990-1999 are those of 1990-2014 cut to 1990-1999, whatever the later years hold."""
    values, times = caravan(STATIONS, "1989-10-01", "2014-10-01")
    train = times < np.datetime64("1999-10-01")
    derived = thresholds.derived_thresholds(values[:, train], times[train], STATIONS)
    perturbed = values.copy()
    perturbed[:, ~train] *= 10.0
    again = thresholds.derived_thresholds(perturbed[:, train], times[train], STATIONS)
    for name in ("values", "lower", "upper", "years"):
        np.testing.assert_array_equal(getattr(again, name), getattr(derived, name))
    assert not np.allclose(thresholds.derived_thresholds(perturbed, times, STATIONS).values[:, :2],
                           derived.values[:, :2])  # control: with the later years it would differ


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


def test_reordering_keeps_the_labels_interval_years_and_notes() -> None:
    held = StationThresholds(("2-year", "q95"), ("a", "b"), np.array([[1.0, 5.0], [3.0, 4.0]]), "derived",
                             ("2-year daily-mean flow", "q95 words"), np.array([[0.5, np.nan], [2.0, np.nan]]),
                             np.array([[1.5, np.nan], [4.0, np.nan]]), np.array([[20, 0], [21, 0]]), ("", "why"), 0.9)
    picked = held.for_stations(["b", "z"])
    assert picked.labels == held.labels and picked.label("q95") == "q95 words" and picked.confidence == 0.9
    assert picked.lower[0, 0] == 2.0 and picked.upper[0, 0] == 4.0 and picked.years.tolist() == [[21, 0], [0, 0]]
    assert picked.notes == ("why", "") and np.isnan(picked.lower[1]).all()
    plain = StationThresholds(("flood",), ("a",), np.array([[7.0]]), "table t.csv")  # a table: no fit
    assert plain.labels == ("flood",) and np.isnan(plain.lower).all() and plain.years.tolist() == [[0]]
    with pytest.raises(ValueError, match="lower have shape"):
        StationThresholds(("flood",), ("a",), np.array([[7.0]]), "x", lower=np.zeros((2, 1)))


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_read_threshold_table_keeps_station_ids_and_per_station_levels(tmp_path: Path) -> None:
    path = write(tmp_path / "thresholds.csv", "\ufeffstation,level,discharge [mm/d],note\n"
                 "01022500,2-year,120.5,from the agency\n"
                 "01022500,alert,80,\n"
                 "\n"
                 "02064000, 2-year ,55,\n")
    table = thresholds.read_threshold_table(path, STATIONS, MM_D)
    assert table.stations == tuple(STATIONS)
    assert table.levels == ("2-year", "alert")
    assert table.source == f"table {path} (discharge in mm/d)"
    expected = np.array([[120.5, 80.0], [np.nan, np.nan], [55.0, np.nan]])
    np.testing.assert_array_equal(table.values, expected)


@pytest.mark.parametrize(("text", "where", "problem"), [
    ("station,discharge [mm/d]\n01022500,3\n", "line 1", "missing column level"),
    ("station,level,discharge [mm/d]\n01022500,2-year,3\n01022500,5-year,lots\n", "line 3", "'lots' is not a number"),
    ("station,level,discharge [mm/d]\n\n01022500,2-year,-3\n", "line 3",
     "discharge -3 is negative"),  # a blank line counts
    ("station,level,discharge [mm/d]\n01022500,2-year,nan\n", "line 2", "'nan' is not a finite number"),
    ("station,level,discharge [mm/d]\n01022500,2-year,inf\n", "line 2", "'inf' is not a finite number"),
    ("station,level,discharge [mm/d]\n01022500,2-year,\n", "line 2", "'' is not a number"),
    ("station,level,discharge [mm/d]\n01022500,2-year,3\n01022500,2-year,4\n", "line 3",
     "station 01022500 level '2-year' is already given on line 2"),
    ("station,level,discharge [mm/d]\n1022500,2-year,3\n", "line 2", "station '1022500' is not one of the 3 stations"),
    ("station,level,discharge [mm/d]\n,2-year,3\n", "line 2", "station and level must not be empty"),
])
def test_read_threshold_table_errors_name_the_file_and_line(tmp_path: Path, text: str, where: str,
                                                           problem: str) -> None:
    path = write(tmp_path / "bad.csv", text)
    with pytest.raises(InputDataError) as caught:
        thresholds.read_threshold_table(path, STATIONS, MM_D)
    message = str(caught.value)
    assert message.startswith(f"{path} ({where}): ") and problem in message
    assert "\n" not in message


def test_read_threshold_table_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(InputDataError, match="cannot be read"):
        thresholds.read_threshold_table(tmp_path / "missing.csv", STATIONS, MM_D)
    with pytest.raises(InputDataError, match="is empty"):
        thresholds.read_threshold_table(write(tmp_path / "empty.csv", ""), STATIONS, MM_D)
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"station,level,discharge [mm/d]\n\xff\xfe,2-year,3\n")
    with pytest.raises(InputDataError, match="not a readable CSV"):
        thresholds.read_threshold_table(binary, STATIONS, MM_D)


def test_a_table_names_its_units_and_is_read_into_the_forecasts(tmp_path: Path) -> None:
    """An agency's alert levels in m³/s (ft³/s, l/s) become mm/d through each station's area; mm/h over a day."""
    path = write(tmp_path / "alert_levels.csv", "station,level,discharge [m3/s]\n01022500,alert,45.77\n"
                 "01547700,alert,10\n")
    table = thresholds.read_threshold_table(path, STATIONS, MM_D)
    assert table.values[:2, 0].tolist() == pytest.approx([45.77 * 86.4 / 619.10, 10 * 86.4 / 115.04], rel=1e-12)
    assert table.source == f"table {path} (discharge in m3/s)"
    for units, value, expected in (("ft3/s", 1000.0, 1000.0 * 0.028316846592 * 86.4 / 619.10),
                                   ("l/s", 45770.0, 45.77 * 86.4 / 619.10), ("mm/h", 0.5, 12.0), ("mm d-1", 6.0, 6.0)):
        other = write(tmp_path / "other.csv", f"station,level,discharge [{units}]\n01022500,alert,{value}\n")
        assert thresholds.read_threshold_table(other, STATIONS, MM_D).values[0, 0] == pytest.approx(expected, rel=1e-12)
    in_m3s = TargetUnits("m3 s-1", pd.Timedelta(days=1), {})  # a forecast in m³/s: no area needed
    assert thresholds.read_threshold_table(path, STATIONS, in_m3s).values[:2, 0].tolist() == [45.77, 10.0]
    per_step = TargetUnits("mm", pd.Timedelta(hours=6), AREAS)  # an amount per 6-hour step
    assert thresholds.read_threshold_table(path, STATIONS, per_step).values[0, 0] == pytest.approx(
        45.77 * 86.4 / 619.10 / 4, rel=1e-12)


@pytest.mark.parametrize(("text", "problem"), [
    ("station,level,discharge\n01022500,alert,45.77\n",
     "the discharge column does not name its units: write them in its header, e.g. discharge [m3/s], "
     "discharge [ft3/s] or discharge [mm/d]"),
    ("station,level,discharge,units\n01022500,alert,10,m3/s\n",
     "has a 'units' column, which is not read: write the units in the header of each number column instead, "
     "e.g. discharge [m3/s] or stage [m]"),
    ("station,level,discharge [m3s]\n01022500,alert,10\n", "discharge [m3s]: unknown units 'm3s'"),
    ("station,level,discharge [m]\n01022500,alert,10\n", "discharge [m]: these units are not a discharge"),
    ("station,level,discharge [m3/s],discharge [mm/d]\n01022500,alert,10,1\n",
     "names the column discharge more than once"),
    ("station,level,stage\n01022500,alert,1\n", "the stage column does not name its units"),
])
def test_a_table_without_units_is_refused_in_one_line(tmp_path: Path, text: str, problem: str) -> None:
    path = write(tmp_path / "alert_levels.csv", text)
    with pytest.raises(InputDataError) as caught:
        thresholds.read_threshold_table(path, STATIONS, MM_D)
    message = str(caught.value)
    assert message.startswith(f"{path} (line 1): {problem}") and "\n" not in message


def test_a_discharge_in_m3s_needs_the_stations_area(tmp_path: Path) -> None:
    path = write(tmp_path / "alert_levels.csv", "station,level,discharge [m3/s]\n01022500,alert,45.77\n")
    no_area = TargetUnits("mm d-1", pd.Timedelta(days=1), {"01022500": float("nan")})
    with pytest.raises(InputDataError) as caught:
        thresholds.read_threshold_table(path, STATIONS, no_area)
    assert str(caught.value) == (f"{path} (line 2): station 01022500: a discharge in m3/s is compared with forecasts "
                                 "in mm d-1 through the catchment area, and the data file has no area_km2 for the "
                                 "station")


RATING = "station,stage [m],discharge [mm/d]\n01022500,0.5,2\n01022500,2.5,30\n01022500,1.0,5\n01022500,1.5,12\n"


def test_a_stage_threshold_becomes_a_discharge_through_the_rating_curve(tmp_path: Path) -> None:
    curves = read_rating_curves(write(tmp_path / "rating.csv", RATING), STATIONS, MM_D)
    path = write(tmp_path / "thresholds.csv", "station,level,discharge [mm/d],stage [m]\n01022500,action,,1.0\n"
                 "01022500,flood,,2.0\n02064000,flood,55,\n")
    table = thresholds.read_threshold_table(path, STATIONS, MM_D, curves)
    assert table.values[0, 0] == pytest.approx(5.0)  # a gauged pair: its discharge
    assert 12.0 < table.values[0, 1] < 30.0  # between the pairs around it
    assert table.values[2, 1] == 55.0
    assert table.source == (f"table {path} (discharge in mm/d, stage in m), stages through the rating curves "
                            f"of {tmp_path / 'rating.csv'}")


@pytest.mark.parametrize(("text", "problem"), [
    ("station,level,stage [m]\n01022500,flood,3.0\n", "stage 3 is outside the rating curve's stages 0.5 to 2.5"),
    ("station,level,stage [m]\n01022500,flood,0.2\n", "stage 0.2 is outside the rating curve's stages 0.5 to 2.5"),
    ("station,level,stage [m]\n01547700,flood,1.0\n", "has no rating curve for the station"),
    ("station,level,discharge [mm/d],stage [m]\n01022500,flood,3,1.0\n", "give a discharge or a stage, not both"),
])
def test_stage_thresholds_outside_or_without_a_curve_are_refused(tmp_path: Path, text: str, problem: str) -> None:
    curves = read_rating_curves(write(tmp_path / "rating.csv", RATING), STATIONS, MM_D)
    path = write(tmp_path / "thresholds.csv", text)
    with pytest.raises(InputDataError) as caught:
        thresholds.read_threshold_table(path, STATIONS, MM_D, curves)
    assert str(caught.value).startswith(f"{path} (line 2): ") and problem in str(caught.value)
    with pytest.raises(InputDataError, match="a rating curve table must turn it into a discharge"):
        thresholds.read_threshold_table(write(tmp_path / "stage.csv", "station,level,stage [m]\n01022500,f,1\n"),
                                        STATIONS, MM_D)


def test_a_stage_in_feet_reads_a_rating_curve_in_metres(tmp_path: Path) -> None:
    curves = read_rating_curves(write(tmp_path / "rating.csv", RATING), STATIONS, MM_D)
    path = write(tmp_path / "thresholds.csv", "station,level,stage [ft]\n01022500,action,3.2808398950131\n")
    assert thresholds.read_threshold_table(path, STATIONS, MM_D, curves).values[0, 0] == pytest.approx(5.0)  # 1 m


def test_a_user_table_takes_precedence_over_the_derived_thresholds(tmp_path: Path) -> None:
    values, times = caravan(STATIONS, "1989-10-01", "1999-10-01")
    table = write(tmp_path / "thresholds.csv", "station,level,discharge [mm/d]\n01022500,flood,40\n")
    chosen = thresholds.station_thresholds(values, times, STATIONS, table, units=MM_D)
    assert chosen.levels == ("flood",)  # no 2-year flow beside it
    assert chosen.source == f"table {table} (discharge in mm/d)"
    assert chosen.values[0, 0] == 40.0 and np.isnan(chosen.values[1:]).all()  # not filled from the derived ones
    derived = thresholds.station_thresholds(values, times, STATIONS, analysis=FrequencyAnalysis(bootstrap_samples=0))
    assert derived.levels == ("2-year", "5-year", "q95", "q99") and np.isfinite(derived.values).all()
    assert derived.confidence is None  # no bootstrap samples: no interval
