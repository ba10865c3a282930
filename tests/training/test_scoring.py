"""Per-station scores and their summaries: every metric column, peak windows from the grid step."""

from __future__ import annotations

import datetime as dt
import re

import numpy as np
import pandas as pd
import pytest

from hydroseq.cli.training import signature_error_line, signature_lines
from hydroseq.scoring.signature_errors import signature_table
from hydroseq.training.scoring import SCORE_COLUMNS, SIGNATURE_COLUMNS, score_stations, summarise
from tests.fixtures import CARAVAN_DIR


def floods(length: int = 600) -> np.ndarray:
    steps = np.arange(length)
    return 1 + sum(10 * np.exp(-0.5 * ((steps - centre) / 4.0) ** 2) for centre in (100, 250, 420))


def test_score_stations_has_every_metric_and_windows_from_the_step() -> None:
    obs = np.stack([floods(), floods()])
    sim = np.stack([floods(), np.roll(floods(), 6)])
    daily = score_stations(obs, sim, ["a", "b"])
    assert list(daily.columns) == ["station", *SCORE_COLUMNS]
    assert daily.loc[0, ["fhv", "fms", "flv", "beta_nse", "peak_timing", "missed_peaks"]].tolist() == [0] * 6
    assert daily.loc[1, "peak_timing"] == 3  # 6 steps late, seen through the daily window of 3
    hourly = score_stations(obs, sim, ["a", "b"], step=dt.timedelta(hours=1))
    assert hourly.loc[1, "peak_timing"] == 6 and hourly.loc[1, "missed_peaks"] == 0  # windows of 12 steps


def test_summarise_medians_only_where_asked() -> None:
    scores = pd.DataFrame({column: [1.0, 2.0, np.nan, 4.0] for column in SCORE_COLUMNS})
    assert summarise(scores) == pytest.approx({"median_nse": 2.0, "mean_nse": 7 / 3, "median_kge": 2.0,
                                               "mean_kge": 7 / 3, "median_rmse": 2.0, "mean_rmse": 7 / 3,
                                               "median_bias": 2.0, "mean_bias": 7 / 3})
    assert set(summarise(scores, SIGNATURE_COLUMNS, ("median",))) == {f"median_{c}" for c in SIGNATURE_COLUMNS}


def test_signature_lines_sum_events_over_stations_and_skip_levels_without_thresholds() -> None:
    scores = pd.DataFrame({"fhv": [-10.0, 5.0, 20.0], "fms": [1.0, 2.0, 3.0], "flv": [0.0, 0.0, 0.0],
                           "peak_timing": [0.0, 1.0, 2.0], "missed_peaks": [0.0, 0.25, 0.5],
                           "peak_mape": [10.0, 30.0, np.nan]})
    events = pd.DataFrame({"level": ["2-year", "5-year", "q95", "2-year", "5-year", "q95"],
                           "hits": [3, 1, None, 2, 0, None], "misses": [1, 0, None, 0, 1, None],
                           "false_alarms": [0, 0, None, 2, 0, None]}).astype(
        {"hits": "Int64", "misses": "Int64", "false_alarms": "Int64"})
    assert signature_lines(1, scores, events) == [
        "lead 1 model, median over stations: FHV +5.0 %, FMS +2.0 %, FLV +0.0 %, peak timing 1.00 steps, "
        "missed peaks 25%, Peak-MAPE 20.0 %",
        "lead 1 model, flood events over stations (hits/misses/false alarms): 2-year 5/1/2, 5-year 1/1/0"]
    assert len(signature_lines(1, scores, events.iloc[:0])) == 1


def test_signature_error_line_gives_percent_errors_far_from_zero_and_differences_near_it() -> None:
    table = pd.DataFrame({"signature": ["q_mean", "q_mean", "q_mean", "hfd_mean", "runoff_ratio", "hfd_mean"],
                          "unit": ["mm d-1", "mm d-1", "mm d-1", "steps after 1 Oct", "1", "steps after 1 Oct"],
                          "error": [-0.1, 0.05, 0.2, np.nan, 0.01, 3.0],
                          "relative_error": [-10.0, 5.0, 20.0, np.nan, 2.5, 1.5]})
    assert signature_error_line(1, table) == ("lead 1 model, signatures' median error over stations: q_mean +5.0 %, "
                                              "runoff_ratio +2.5 %; as a difference: hfd_mean +3 steps")
    assert signature_error_line(2, table.iloc[3:4]).endswith("none defined")


def test_a_signature_near_zero_is_summarised_as_a_difference_not_a_percent_of_it() -> None:
    """Four bundled basins, water years 2011-2014, against a forecast 0.05 mm/d low and published at 0 below that:
    three basins flow on all but 0-4 % of the days and the forecast has 21-59 % at zero, which read "zero_q_freq
    +959.5 %"; the line now gives the median difference in the share of days, +0.231."""
    stations = ["01022500", "02221525", "05057200", "11473900"]
    columns = ["date", "streamflow", "total_precipitation_sum"]
    frames = [pd.read_csv(CARAVAN_DIR / f"{station}.csv", usecols=columns, parse_dates=["date"]).set_index("date")
              .loc["2010-10-01":"2014-09-30"] for station in stations]
    observed = np.stack([frame["streamflow"].to_numpy() for frame in frames])
    rain = np.stack([frame["total_precipitation_sum"].to_numpy() for frame in frames])
    table = signature_table(observed, {"model": np.maximum(observed - 0.05, 0.0)}, pd.DatetimeIndex(frames[0].index),
                            stations, rain, "mm d-1")
    zero = table.query("signature == 'zero_q_freq'").set_index("station")
    assert zero["observed"].max() < 0.05 and zero["relative_error"].median() > 900  # the percent that misled
    line = signature_error_line(1, table)
    assert f"zero_q_freq {zero['error'].median():+.3g}," in line and "zero_q_freq +0.231," in line
    percents = [float(value) for value in re.findall(r"([+-]\d+(?:\.\d+)?) %", line)]
    assert len(percents) == 3 and max(abs(value) for value in percents) < 10  # q95, q_mean, runoff_ratio
    assert line.split(";")[0].endswith("q95 -1.9 %, q_mean -6.0 %, runoff_ratio -6.0 %")
