"""The one "beats persistence" rule: a station counts only where both scores exist."""

from __future__ import annotations

import numpy as np

from hydroseq.scoring.skill import stations_beating


def test_a_station_without_both_scores_is_neither_a_win_nor_a_loss() -> None:
    model = np.array([0.8, 0.5, np.nan, 0.9, 0.2])
    persistence = np.array([0.7, 0.6, 0.4, np.nan, 0.2])
    assert stations_beating(model, persistence) == (1, 3)


def test_a_tie_does_not_beat_and_nothing_to_compare_is_zero_of_zero() -> None:
    assert stations_beating(np.array([0.5]), np.array([0.5])) == (0, 1)
    assert stations_beating(np.array([np.nan]), np.array([0.5])) == (0, 0)
