"""Helpers of the NeuralHydrology driver (importable without NeuralHydrology)."""

from __future__ import annotations

import math

from experiments.nh.driver import best_epoch, median_nse


def test_best_epoch_is_the_highest_validation_nse_and_the_earliest_on_ties() -> None:
    assert best_epoch({1: 0.2, 2: 0.5, 3: 0.4}) == 2
    assert best_epoch({1: 0.5, 2: 0.5}) == 1
    assert best_epoch({1: math.nan, 2: 0.1}) == 2
    assert best_epoch({1: math.nan, 2: math.nan}) == 2


def test_median_nse_skips_nan_basins() -> None:
    results = {"a": {"1D": {"NSE": 0.1}}, "b": {"1D": {"NSE": math.nan}}, "c": {"1D": {"NSE": 0.5}},
               "d": {"1D": {"NSE": 0.7}}}
    assert median_nse(results) == 0.5
    assert math.isnan(median_nse({"a": {"1D": {"NSE": math.nan}}}))
