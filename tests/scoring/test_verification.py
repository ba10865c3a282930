"""Probabilistic scores against closed forms and hand-made tables, and their handling of missing values."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scoringrules
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

from hydroseq.scoring import quantiles, verification
from hydroseq.scoring.quantiles import DEFAULT_QUANTILES

MANY_LEVELS = (np.arange(199) + 0.5) / 199


def normal_crps(obs: np.ndarray, mu: float, sigma: float) -> np.ndarray:
    """Closed form (Gneiting et al. 2005): sigma * (z (2 Phi(z) - 1) + 2 phi(z) - 1 / sqrt(pi))."""
    z = (obs - mu) / sigma
    return sigma * (z * (2 * stats.norm.cdf(z) - 1) + 2 * stats.norm.pdf(z) - 1 / math.sqrt(math.pi))


def test_crps_of_many_quantiles_of_a_normal_is_its_closed_form() -> None:
    obs = np.array([20.0, 45.0, 50.0, 58.0, 80.0])
    values = np.broadcast_to(stats.norm.ppf(MANY_LEVELS, loc=50.0, scale=10.0), (5, MANY_LEVELS.size))
    expected = normal_crps(obs, 50.0, 10.0)
    assert expected == pytest.approx(scoringrules.crps_normal(obs, 50.0, 10.0, backend="numpy"))
    # 199 midpoint levels: measured error below 1e-4 relative (the tail at 3 sigma is the worst)
    assert verification.crps_quantiles(values, MANY_LEVELS, obs) == pytest.approx(expected, rel=1e-3)


def test_crps_quantiles_is_twice_the_mean_pinball_loss_and_nan_aware() -> None:
    values = np.array([[1.0, 2.0, 4.0], [1.0, np.nan, 4.0], [1.0, 2.0, 4.0]])
    levels = (0.25, 0.5, 0.75)
    obs = np.array([3.0, 3.0, np.nan])
    # y = 3: 0.25 * 2 + 0.5 * 1 + (1 - 0.75) * 1 = 1.25 -> 2 / 3 * 1.25
    scores = verification.crps_quantiles(values, levels, obs)
    assert scores[0] == pytest.approx(2 / 3 * 1.25)
    assert np.isnan(scores[1:]).all()
    assert verification.crps_quantiles(values[0], levels, [[3.0], [1.0]]).shape == (2, 1)
    with pytest.raises(ValueError, match="3 quantiles but 7 levels"):
        verification.crps_quantiles(values, DEFAULT_QUANTILES, obs)


def test_crps_of_one_member_is_the_absolute_error() -> None:
    members = np.array([[3.0], [10.0], [np.nan], [2.0]])
    obs = np.array([5.0, 4.0, 1.0, np.nan])
    assert verification.crps_ensemble(members, obs) == pytest.approx([2.0, 6.0, np.nan, np.nan], nan_ok=True)


def test_crps_ensemble_of_a_large_normal_ensemble_approaches_the_closed_form() -> None:
    rng = np.random.default_rng(3)
    members = rng.normal(0.0, 1.0, size=(3, 20_000))
    obs = np.array([-1.0, 0.0, 2.0])
    assert verification.crps_ensemble(members, obs) == pytest.approx(normal_crps(obs, 0.0, 1.0), abs=0.01)


@settings(max_examples=50, deadline=None)
@given(arrays(np.float64, 5, elements=st.floats(0, 100)), st.floats(0, 100))
def test_crps_ensemble_is_at_most_the_mean_absolute_error(members: np.ndarray, obs: float) -> None:
    crps = float(verification.crps_ensemble(members, obs))
    assert 0.0 <= crps <= float(np.mean(np.abs(members - obs))) + 1e-9




def test_brier_of_perfect_and_climatological_forecasts() -> None:
    event = np.array([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, np.nan, 0.0])
    base_rate = 2 / 9
    assert verification.brier_score(np.nan_to_num(event), event) == 0.0
    assert verification.brier_score(np.full(10, base_rate), event) == pytest.approx(base_rate * (1 - base_rate))
    assert verification.brier_score(1.0 - np.nan_to_num(event), event) == 1.0
    assert verification.brier_skill_score(np.nan_to_num(event), event, base_rate) == pytest.approx(1.0)
    assert verification.brier_skill_score(np.full(10, base_rate), event, base_rate) == pytest.approx(0.0)
    assert verification.brier_skill_score(np.full(10, 0.5), event, base_rate) < 0.0
    assert math.isnan(verification.brier_skill_score([0.2], [1.0], [1.0]))  # the reference is perfect
    assert math.isnan(verification.brier_score([np.nan], [1.0]))


def test_brier_refuses_probabilities_and_events_outside_their_range() -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        verification.brier_score([1.2], [1.0])
    with pytest.raises(ValueError, match="1, 0 or NaN"):
        verification.brier_score([0.5], [2.0])


def test_contingency_scores_on_a_hand_made_table() -> None:
    # 3 hits, 1 miss, 2 false alarms, 4 correct negatives; the NaN pairs are not counted
    forecast = [1, 1, 1, 0, 1, 1, 0, 0, 0, 0, 1, np.nan]
    observed = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0, np.nan, 1]
    scores = verification.contingency_scores(forecast, observed)
    assert {key: scores[key] for key in ("hits", "misses", "false_alarms", "correct_negatives")} == {
        "hits": 3, "misses": 1, "false_alarms": 2, "correct_negatives": 4}
    assert scores["pod"] == pytest.approx(3 / 4)
    assert scores["far"] == pytest.approx(2 / 5)
    assert scores["csi"] == pytest.approx(3 / 6)


def test_contingency_scores_without_events_are_nan() -> None:
    scores = verification.contingency_scores(np.zeros(5, dtype=bool), np.zeros(5, dtype=bool))
    assert scores["correct_negatives"] == 5
    assert all(math.isnan(scores[key]) for key in ("pod", "far", "csi"))


def test_reliability_of_a_calibrated_forecast_is_near_the_diagonal() -> None:
    rng = np.random.default_rng(11)
    probability = rng.uniform(0.0, 1.0, 40_000)
    event = rng.uniform(0.0, 1.0, 40_000) < probability
    table = verification.reliability_table(probability, event, n_bins=10)
    assert list(table.columns) == ["bin_lower", "bin_upper", "mean_forecast", "observed_frequency", "count"]
    assert table["bin_lower"].tolist() == pytest.approx(np.arange(10) / 10)
    assert table["count"].sum() == 40_000
    # about 4,000 per bin: binomial sd at most 0.008
    assert (table["observed_frequency"] - table["mean_forecast"]).abs().max() < 0.03
    overconfident = verification.reliability_table(probability, rng.uniform(0.0, 1.0, 40_000) < 0.5, n_bins=10)
    assert (overconfident["observed_frequency"] - overconfident["mean_forecast"]).abs().max() > 0.3


def test_reliability_table_counts_edges_and_empty_bins() -> None:
    table = verification.reliability_table([0.0, 0.05, 1.0, np.nan, 0.3], [0, 1, 1, 1, np.nan], n_bins=4)
    assert table["count"].tolist() == [2, 0, 0, 1]
    assert table.loc[0, "mean_forecast"] == pytest.approx(0.025)
    assert table.loc[0, "observed_frequency"] == pytest.approx(0.5)
    assert np.isnan(table.loc[1, "mean_forecast"]) and np.isnan(table.loc[1, "observed_frequency"])
    assert table.loc[3, "observed_frequency"] == 1.0


def test_pit_of_calibrated_quantile_forecasts_is_uniform() -> None:
    rng = np.random.default_rng(5)
    obs = rng.normal(30.0, 5.0, 50_000)
    levels = (np.arange(99) + 1) / 100
    values = np.broadcast_to(stats.norm.ppf(levels, loc=30.0, scale=5.0), (obs.size, levels.size))
    counts = verification.pit_histogram(quantiles.pit(values, levels, obs), n_bins=10)
    assert counts.sum() == obs.size
    assert stats.chisquare(counts).pvalue > 0.01
    # too narrow a forecast (sd 2.5 for an sd of 5): U-shaped, the outer bins far above a tenth
    narrow = np.broadcast_to(stats.norm.ppf(levels, loc=30.0, scale=2.5), (obs.size, levels.size))
    narrow_counts = verification.pit_histogram(quantiles.pit(narrow, levels, obs), n_bins=10)
    assert narrow_counts[0] > 2 * obs.size / 10 and narrow_counts[-1] > 2 * obs.size / 10


def test_pit_histogram_bins_ignore_nan_and_refuse_values_outside_zero_one() -> None:
    assert verification.pit_histogram([0.0, 0.1, 0.49, 0.5, 1.0, np.nan], n_bins=2).tolist() == [3, 2]
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        verification.pit_histogram([1.5])
    with pytest.raises(ValueError, match="n_bins"):
        verification.pit_histogram([0.5], n_bins=0)
