"""Event verification: flood events counted by hand, with and without a timing tolerance."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from hydroseq.scoring.event_verification import event_contingency, exceedance_events, pooled_event_scores, score_events
from hydroseq.scoring.thresholds import StationThresholds
from hydroseq.scoring.verification import contingency_scores

# observed events: steps 1-2 and step 5; forecast events: steps 2, 6 and 8 (threshold 1)
OBS = np.array([0, 5, 5, 0, 0, 5, 0, 0, 0, 0], dtype=float)
FORECAST = np.array([0, 0, 5, 0, 0, 0, 5, 0, 5, 0], dtype=float)


def test_runs_above_the_threshold_are_events() -> None:
    first, last = exceedance_events(OBS > 1)
    assert first.tolist() == [1, 5] and last.tolist() == [2, 5]
    first, last = exceedance_events([True, True, False, True])
    assert first.tolist() == [0, 3] and last.tolist() == [1, 3]
    assert exceedance_events(np.zeros(4, dtype=bool))[0].size == 0


def test_events_by_hand_without_tolerance() -> None:
    scores = event_contingency(OBS, FORECAST, 1.0)
    # 1-2 overlaps the forecast at 2: hit; 5 has none: miss; forecasts at 6 and 8 meet no observed flood
    assert scores == pytest.approx({"observed_events": 2, "forecast_events": 3, "hits": 1, "misses": 1,
                                    "false_alarms": 2, "pod": 1 / 2, "far": 2 / 3, "csi": 1 / 4})
    # the per-step table counts steps instead: step 1 is a second miss
    per_step = contingency_scores(FORECAST > 1, OBS > 1)
    assert (per_step["hits"], per_step["misses"], per_step["false_alarms"]) == (1, 2, 2)


def test_one_step_tolerance_forgives_a_forecast_one_step_off() -> None:
    scores = event_contingency(OBS, FORECAST, 1.0, tolerance=1)
    # 5 finds the forecast at 6 (and 6 finds 5); 8 still meets nothing within 7..9
    assert scores == pytest.approx({"observed_events": 2, "forecast_events": 3, "hits": 2, "misses": 0,
                                    "false_alarms": 1, "pod": 1.0, "far": 1 / 3, "csi": 2 / 3})


def test_perfect_and_silent_forecasts() -> None:
    assert event_contingency(OBS, OBS, 1.0) == pytest.approx(
        {"observed_events": 2, "forecast_events": 2, "hits": 2, "misses": 0, "false_alarms": 0, "pod": 1.0,
         "far": 0.0, "csi": 1.0})
    silent = event_contingency(OBS, np.zeros_like(OBS), 1.0)
    assert (silent["misses"], silent["false_alarms"], silent["pod"], silent["csi"]) == (2, 0, 0.0, 0.0)
    assert math.isnan(silent["far"])  # no forecast event: no false alarm ratio


def test_missing_steps_end_events_and_verify_nothing() -> None:
    split = event_contingency([5.0, np.nan, 5.0], [5.0, 5.0, 5.0], 1.0)
    assert (split["observed_events"], split["forecast_events"], split["hits"], split["false_alarms"]) == (2, 2, 2, 0)
    unverifiable = event_contingency([0.0, np.nan, 0.0], [0.0, 5.0, 0.0], 1.0)
    assert unverifiable["forecast_events"] == 0 and unverifiable["false_alarms"] == 0
    assert all(math.isnan(value) for value in event_contingency(OBS, FORECAST, math.nan).values())
    assert all(math.isnan(value) for value in event_contingency([np.nan], [1.0], 1.0).values())
    with pytest.raises(ValueError, match="tolerance"):
        event_contingency(OBS, FORECAST, 1.0, tolerance=-1)
    with pytest.raises(ValueError, match="10 values but forecast has 2"):
        event_contingency(OBS, [1.0, 2.0], 1.0)


def test_score_events_per_station_and_level_and_pooled() -> None:
    thresholds = StationThresholds(("2-year", "5-year"), ("a", "b"), np.array([[1.0, 4.0], [1.0, np.nan]]), "test")
    obs = np.stack([OBS, OBS])
    forecast = np.stack([FORECAST, OBS])
    table = score_events(obs, forecast, thresholds)
    assert table[["station", "level"]].values.tolist() == [["a", "2-year"], ["a", "5-year"], ["b", "2-year"],
                                                           ["b", "5-year"]]
    assert table["hits"].tolist()[:3] == [1, 1, 2] and pd.isna(table.loc[3, "hits"])
    assert str(table["hits"].dtype) == "Int64"
    pooled = pooled_event_scores(table, thresholds.levels)
    # 2-year: hits 1 + 2, misses 1 + 0, false alarms 2 + 0 over 3 + 2 forecast events
    assert pooled["event_pod_2-year"] == pytest.approx(3 / 4)
    assert pooled["event_far_2-year"] == pytest.approx(2 / 5)
    assert pooled["event_csi_2-year"] == pytest.approx(3 / 6)
    assert pooled["event_pod_5-year"] == pytest.approx(1 / 2)  # station a only: 5 > 4 at 1-2 and 5
    with pytest.raises(ValueError, match="one row per station"):
        score_events(obs[:1], forecast[:1], thresholds)
