"""Per-station probabilistic scores: known answers for perfect, point and climatological forecasts."""

from __future__ import annotations

import numpy as np
import pytest

from hydroseq.scoring.baselines import doy_climatology_quantiles
from hydroseq.scoring.probabilistic_scores import event_base_rates, score_quantile_forecast
from hydroseq.scoring.thresholds import StationThresholds

LEVELS = (0.05, 0.25, 0.5, 0.75, 0.95)


@pytest.fixture()
def flows() -> np.ndarray:
    return np.random.default_rng(0).gamma(2.0, 1.0, size=(3, 400))


def _thresholds(values: np.ndarray) -> StationThresholds:
    return StationThresholds(("high",), ("a", "b", "c"), values.reshape(3, 1), "test")


def test_a_forecast_that_is_the_observation_scores_zero_crps_full_coverage_and_no_brier_error(flows) -> None:
    perfect = np.repeat(flows[..., None], len(LEVELS), axis=-1)
    climatology = np.broadcast_to(np.quantile(flows, LEVELS, axis=1).T[:, None, :], perfect.shape)
    thresholds = _thresholds(np.array([3.0, 3.0, 3.0]))
    scores = score_quantile_forecast(perfect, LEVELS, flows, climatology, flows + 1.0, ["a", "b", "c"],
                                     thresholds, event_base_rates(flows, thresholds))
    table = scores.stations
    np.testing.assert_allclose(table["crps"], 0.0, atol=1e-12)
    np.testing.assert_allclose(table["crps_persistence"], 1.0)  # a point forecast's CRPS is its absolute error
    assert (table["crpss_climatology"] == 1).all() and (table["coverage90"] == 1).all()
    assert scores.pooled["brier_high"] == 0 and scores.pooled["bss_high"] == 1 and scores.pooled["pod_high"] == 1
    assert scores.pooled["events_high"] == (flows > 3).sum()
    assert (table["pod_high"] == 1).all() and (table["far_high"] == 0).all()


def test_the_climatological_distribution_has_zero_skill_against_itself_and_a_missing_step_is_not_scored(flows):
    climatology = np.broadcast_to(np.quantile(flows, LEVELS, axis=1).T[:, None, :], (*flows.shape, len(LEVELS)))
    obs = flows.copy()
    obs[0, :10] = np.nan
    thresholds = _thresholds(np.array([3.0, np.nan, 3.0]))  # station b has no threshold
    rates = event_base_rates(flows, thresholds)
    scores = score_quantile_forecast(climatology, LEVELS, obs, climatology, flows, ["a", "b", "c"], thresholds,
                                     rates)
    np.testing.assert_allclose(scores.stations["crpss_climatology"], 0.0, atol=1e-12)
    assert len(scores.pit) == obs.size - 10
    assert np.isnan(scores.stations["brier_high"][1]) and np.isfinite(scores.stations["brier_high"][0])
    assert np.isnan(rates[1, 0]) and rates[0, 0] == pytest.approx((flows[0] > 3).mean())
    np.testing.assert_allclose(scores.stations["coverage90"][[0, 2]], 0.9, atol=0.05)


def test_climatological_quantiles_use_the_fitting_period_and_the_days_around_each_day_only() -> None:
    days = np.tile(np.arange(1, 366), 4)
    target = np.where(days[None, :] < 180, 1.0, 10.0) * np.ones((2, days.size))
    fit = np.arange(days.size) < 3 * 365
    target[:, ~fit] = 1e6  # the evaluation period never feeds the climatology
    table = doy_climatology_quantiles(target, days, fit, LEVELS, window_days=5)
    assert table.shape == (2, days.size, len(LEVELS))
    np.testing.assert_array_equal(table[:, days == 100], 1.0)
    np.testing.assert_array_equal(table[:, days == 300], 10.0)
    around = table[0, np.flatnonzero(days == 180)[0]]  # days 175..185: both regimes
    assert around[0] == 1.0 and around[-1] == 10.0 and table.max() == 10.0


def test_an_interval_the_levels_lack_has_no_coverage_and_the_rest_is_scored(flows) -> None:
    """Levels 0.1 / 0.5 / 0.9 hold neither the 50 % nor the 90 % central interval: NaN coverage, not an error."""
    levels = (0.1, 0.5, 0.9)
    quantiles = np.quantile(flows, levels, axis=1).T[:, None, :].repeat(flows.shape[1], axis=1)
    scores = score_quantile_forecast(quantiles, levels, flows, quantiles, flows, ["a", "b", "c"])
    assert scores.stations[["coverage50", "coverage90"]].isna().all().all()
    assert np.isfinite(scores.stations["crps"]).all()
