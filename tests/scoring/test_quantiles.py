"""Quantile forecasts as distributions: the piecewise-linear CDF, its tails and ties, PIT, coverage."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

from hydroseq.scoring import quantiles
from hydroseq.scoring.quantiles import DEFAULT_QUANTILES

VALUES = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])  # at the default levels 0.05 .. 0.95


def sorted_quantiles(size: int = len(DEFAULT_QUANTILES), low: float = 0.0, high: float = 1e4) -> st.SearchStrategy:
    """Non-decreasing quantile values (ties likely from the rounding)."""
    return arrays(np.float64, size, elements=st.floats(low, high).map(lambda v: round(v, 1))).map(np.sort)


def test_check_levels_accepts_increasing_levels_inside_zero_one() -> None:
    assert quantiles.check_levels(np.array([0.1, 0.5, 0.9])) == (0.1, 0.5, 0.9)
    for bad in ([], [0.0, 0.5], [0.5, 1.0], [0.5, 0.5], [0.6, 0.4], [np.nan, 0.5]):
        with pytest.raises(ValueError):
            quantiles.check_levels(bad)


def test_cdf_interpolates_between_quantiles() -> None:
    # between (3, 0.25) and (4, 0.5); between (5, 0.75) and (6, 0.9)
    assert quantiles.cdf_at(VALUES, DEFAULT_QUANTILES, [3.5, 5.5]) == pytest.approx([0.375, 0.825])


def test_tails_extend_the_outer_slopes_and_stop_at_zero_discharge() -> None:
    # slope of the first segment 0.05 per 1: reaches 0 at 1 - 0.05 / 0.05 = 0; last: 1 at 7 + 1 = 8
    assert quantiles.cdf_at(VALUES, DEFAULT_QUANTILES, [-1.0, 0.0, 0.5, 7.5, 7.99, 8.0, 50.0]) == pytest.approx(
        [0.0, 0.0, 0.025, 0.975, 0.9995, 1.0, 1.0])
    # the first segment extended would end at 10 - 40 = -30 < 0: the lower tail is raised to end at 0
    steep = np.array([10.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0])
    assert quantiles.cdf_at(steep, DEFAULT_QUANTILES, [0.0, 5.0]) == pytest.approx([0.0, 0.025])
    # a lowest quantile already negative keeps the extended slope: F reaches 0 at -10 - 40 = -50
    negative = steep - 20.0
    assert quantiles.cdf_at(negative, DEFAULT_QUANTILES, [-60.0, -50.0, -49.0, -30.0]) == pytest.approx(
        [0.0, 0.0, 0.05 / 40, 0.025])


def test_ties_are_point_masses_without_division_by_zero() -> None:
    dry = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 2.0, 2.0])
    with np.errstate(all="raise"):
        cdf = quantiles.cdf_at(dry, DEFAULT_QUANTILES, [-0.1, 0.0, 0.5, 1.0, 1.5, 2.0, 2.1])
    # F(0) = 0.25: 25 % chance of zero flow; right-continuous at the tied values 1 and 2
    assert cdf == pytest.approx([0.0, 0.25, 0.375, 0.75, 0.825, 1.0, 1.0])
    constant = quantiles.cdf_at(np.full(7, 3.0), DEFAULT_QUANTILES, [2.9, 3.0, 3.1])
    assert constant == pytest.approx([0.0, 1.0, 1.0])


def test_nan_in_values_or_x_gives_nan_and_shapes_broadcast() -> None:
    values = np.stack([VALUES, np.where(np.arange(7) == 3, np.nan, VALUES)])  # [2, Q]
    cdf = quantiles.cdf_at(values, DEFAULT_QUANTILES, [[3.5], [np.nan]])  # x [2, 1] -> [2, 2]
    assert cdf.shape == (2, 2)
    assert cdf[0, 0] == pytest.approx(0.375) and np.isnan(cdf[0, 1]) and np.isnan(cdf[1]).all()
    per_station = np.broadcast_to(VALUES, (2, 3, 7))  # [S, T, Q] against a threshold per station [S, 1]
    assert quantiles.exceedance_probability(per_station, DEFAULT_QUANTILES, [[3.5], [5.5]]) == pytest.approx(
        np.array([[0.625] * 3, [0.175] * 3]))


def test_decreasing_values_and_mismatched_levels_are_refused() -> None:
    crossing = VALUES[[0, 2, 1, 3, 4, 5, 6]]
    with pytest.raises(ValueError, match="decrease along the last axis; sort them first"):
        quantiles.cdf_at(crossing, DEFAULT_QUANTILES, 1.0)
    assert quantiles.cdf_at(np.sort(crossing), DEFAULT_QUANTILES, 3.5) == pytest.approx(0.375)
    with pytest.raises(ValueError, match="7 levels"):
        quantiles.cdf_at(VALUES[:5], DEFAULT_QUANTILES, 1.0)
    with pytest.raises(ValueError, match="two"):
        quantiles.cdf_at([1.0], [0.5], 1.0)


@settings(max_examples=100, deadline=None)
@given(sorted_quantiles(), arrays(np.float64, 30, elements=st.floats(-10, 2e4)))
def test_cdf_is_monotone_in_x_and_exceedance_in_unit_interval(values: np.ndarray, x: np.ndarray) -> None:
    x = np.sort(x)
    cdf = quantiles.cdf_at(values, DEFAULT_QUANTILES, x)
    assert np.all(np.diff(cdf) >= -1e-12)
    exceedance = quantiles.exceedance_probability(values, DEFAULT_QUANTILES, x)
    assert np.all((exceedance >= 0.0) & (exceedance <= 1.0)) and np.all(np.diff(exceedance) <= 1e-12)
    inside = (x >= values[0]) & (x <= values[-1])
    assert exceedance[inside] == pytest.approx(1.0 - cdf[inside])
    assert np.all(exceedance[x > values[-1]] <= 0.05 + 1e-12) and np.all(exceedance[x < values[0]] >= 0.95 - 1e-12)


def test_exceedance_tails_stay_within_the_quantiles_tail_mass_and_never_reach_0_or_100_percent() -> None:
    """Beyond the outermost quantiles the linear tails said 0 and 1 (a threshold at 8, one segment above the 95 %
    quantile 7, was "impossible"; one at 0.5, "certain"); the exceedance tails decay from 5 % (rise from 95 %)
    along the outer segments' density and reach neither."""
    x = np.array([0.0, 0.5, 1.0, 7.0, 7.5, 8.0, 9.0, 20.0])
    exceedance = quantiles.exceedance_probability(VALUES, DEFAULT_QUANTILES, x)
    scale = 1.0  # each outer segment is 1 wide with 0.05 of mass: the linear tail's length, 1
    assert exceedance == pytest.approx([1 - 0.05 * np.exp(-1.0 / scale), 1 - 0.05 * np.exp(-0.5 / scale), 0.95,
                                        0.05, 0.05 * np.exp(-0.5), 0.05 * np.exp(-1.0), 0.05 * np.exp(-2.0),
                                        0.05 * np.exp(-13.0)], rel=1e-12)
    assert np.all((exceedance > 0.0) & (exceedance < 1.0))
    assert exceedance[5] == pytest.approx(0.0184, abs=1e-4)  # where the linear tail said 0
    assert quantiles.cdf_at(VALUES, DEFAULT_QUANTILES, 8.0) == pytest.approx(1.0)  # PIT keeps the linear tails
    # a tied top (a point mass) is exceeded by nothing above it, as the forecast says
    assert quantiles.exceedance_probability(np.full(7, 3.0), DEFAULT_QUANTILES, [2.0, 3.5]).tolist() == [1.0, 0.0]
    assert np.isnan(quantiles.exceedance_probability(VALUES, DEFAULT_QUANTILES, np.nan))


@settings(max_examples=100, deadline=None)
@given(arrays(np.float64, len(DEFAULT_QUANTILES), elements=st.floats(0.5, 100.0), unique=True).map(np.sort))
def test_pit_of_the_quantile_values_is_their_levels(values: np.ndarray) -> None:
    assert quantiles.pit(values, DEFAULT_QUANTILES, values) == pytest.approx(DEFAULT_QUANTILES)


def test_pit_is_nan_where_obs_is_missing() -> None:
    assert np.isnan(quantiles.pit(VALUES, DEFAULT_QUANTILES, np.nan))


def test_interval_coverage_uses_the_central_levels() -> None:
    values = np.broadcast_to(VALUES, (5, 7))
    obs = [0.5, 1.0, 4.0, 7.0, np.nan]  # 0.9 interval: [1, 7] (levels 0.05, 0.95), bounds inside
    assert quantiles.interval_coverage(values, DEFAULT_QUANTILES, obs, 0.9) == pytest.approx(
        [0.0, 1.0, 1.0, 1.0, np.nan], nan_ok=True)
    # 0.5 interval: [3, 5] (levels 0.25, 0.75)
    assert quantiles.interval_coverage(values, DEFAULT_QUANTILES, obs, 0.5) == pytest.approx(
        [0.0, 0.0, 1.0, 0.0, np.nan], nan_ok=True)
    with pytest.raises(ValueError, match="0.1"):
        quantiles.interval_coverage(values, (0.05, 0.25, 0.5, 0.75, 0.95), obs, 0.8)
    with pytest.raises(ValueError, match="strictly between"):
        quantiles.interval_coverage(values, DEFAULT_QUANTILES, obs, 1.0)


def test_coverage_by_station_skips_missing_steps() -> None:
    values = np.broadcast_to(VALUES, (3, 4, 7))
    obs = np.array([[4.0, 4.0, 9.0, np.nan], [np.nan] * 4, [0.0, 0.0, 0.0, 4.0]])
    assert quantiles.coverage_by_station(values, DEFAULT_QUANTILES, obs, 0.9) == pytest.approx(
        [2 / 3, np.nan, 0.25], nan_ok=True)


def test_calibrated_forecast_covers_its_nominal_probability() -> None:
    rng = np.random.default_rng(7)
    values = np.broadcast_to(stats.norm.ppf(DEFAULT_QUANTILES, loc=50.0, scale=10.0), (2, 20_000, 7))
    obs = rng.normal(50.0, 10.0, size=(2, 20_000))
    coverage = quantiles.coverage_by_station(values, DEFAULT_QUANTILES, obs, 0.8)
    assert coverage == pytest.approx([0.8, 0.8], abs=0.015)  # binomial sd 0.003
