"""Metrics against values computed by hand, and their behaviour on missing / degenerate input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from hydroseq.scoring import metrics

OBS = [1.0, 2.0, 3.0, 4.0]
SIM = [1.0, 3.0, 2.0, 6.0]
# by hand: mean(obs) = 2.5, sum((obs-2.5)^2) = 5, sum((sim-obs)^2) = 0+1+1+4 = 6 -> NSE = 1 - 6/5
# mean(sim) = 3, std_obs = sqrt(5/4), std_sim = sqrt((4+0+1+9)/4) = sqrt(14/4)
# cov = mean((obs-2.5)(sim-3)) = ((-1.5)(-2) + (-0.5)(0) + (0.5)(-1) + (1.5)(3)) / 4 = 7/4


def test_nse_by_hand() -> None:
    assert metrics.nse(OBS, SIM) == pytest.approx(1 - 6 / 5)


def test_kge_components_by_hand() -> None:
    r = (7 / 4) / math.sqrt(5 / 4 * 14 / 4)
    alpha = math.sqrt(14 / 5)
    beta = 3 / 2.5
    result = metrics.kge(OBS, SIM)
    assert result.r == pytest.approx(r)
    assert result.alpha == pytest.approx(alpha)
    assert result.beta == pytest.approx(beta)
    assert result.kge == pytest.approx(1 - math.sqrt((r - 1) ** 2 + (alpha - 1) ** 2 + (beta - 1) ** 2))


def test_rmse_and_bias_by_hand() -> None:
    assert metrics.rmse(OBS, SIM) == pytest.approx(math.sqrt(6 / 4))
    assert metrics.bias(OBS, SIM) == pytest.approx(0.5)


def test_nan_pairs_are_skipped_not_filled() -> None:
    obs = [1.0, np.nan, 2.0, 3.0, 4.0]
    sim = [1.0, 100.0, 3.0, 2.0, 6.0]
    assert metrics.all_metrics(obs, sim) == pytest.approx(metrics.all_metrics(OBS, SIM), nan_ok=True)
    assert metrics.all_metrics(obs, sim)["n"] == 4


def test_perfect_and_mean_predictions() -> None:
    obs = np.array([0.5, 2.0, 7.0, 3.0])
    assert metrics.nse(obs, obs) == 1.0
    assert metrics.kge(obs, obs).kge == pytest.approx(1.0)
    assert metrics.nse(obs, np.full(4, obs.mean())) == pytest.approx(0.0)


def test_degenerate_series_give_nan_not_errors() -> None:
    assert math.isnan(metrics.nse([2.0, 2.0, 2.0], [1.0, 2.0, 3.0]))
    assert math.isnan(metrics.kge([2.0, 2.0, 2.0], [1.0, 2.0, 3.0]).kge)
    assert math.isnan(metrics.rmse([np.nan], [1.0]))
    with pytest.raises(ValueError, match="3 values but sim has 2"):
        metrics.nse([1.0, 2.0, 3.0], [1.0, 2.0])


@settings(max_examples=50, deadline=None)
@given(arrays(np.float64, 20, elements=st.floats(0.1, 100)), arrays(np.float64, 20, elements=st.floats(0.1, 100)))
def test_nse_never_above_one_and_kge_consistent(obs: np.ndarray, sim: np.ndarray) -> None:
    value = metrics.nse(obs, sim)
    assert math.isnan(value) or value <= 1.0 + 1e-12
    k = metrics.kge(obs, sim)
    if not math.isnan(k.kge):
        assert -1.0 - 1e-9 <= k.r <= 1.0 + 1e-9
        assert k.kge <= 1.0


# --- NSE decomposition and flow-duration-curve biases (NeuralHydrology's definitions) ---

FLOWS = np.arange(1.0, 101.0)  # 100 steps: h = 0.02 keeps the 2 highest, lower/upper 0.2/0.7 are positions 20/70


def test_perfect_simulation_has_no_bias_of_any_kind() -> None:
    rng = np.random.default_rng(1)
    obs = rng.gamma(2.0, 3.0, 500)
    scores = metrics.all_metrics(obs, obs)
    assert scores["fhv"] == 0.0 and scores["fms"] == 0.0 and scores["flv"] == 0.0
    assert scores["beta_nse"] == 0.0 and scores["alpha"] == 1.0
    assert metrics.pearson_r(obs, obs) == pytest.approx(1.0) and metrics.alpha_nse(obs, obs) == 1.0


def test_nse_decomposition_by_hand() -> None:
    assert metrics.beta_nse(OBS, SIM) == pytest.approx((3 - 2.5) / math.sqrt(5 / 4))
    assert metrics.alpha_nse(OBS, SIM) == pytest.approx(math.sqrt(14 / 5)) == metrics.kge(OBS, SIM).alpha
    assert metrics.pearson_r(OBS, SIM) == pytest.approx((7 / 4) / math.sqrt(5 / 4 * 14 / 4)) == metrics.kge(OBS, SIM).r
    assert metrics.all_metrics(OBS, SIM)["beta_nse"] == metrics.beta_nse(OBS, SIM)


def test_scaling_the_simulation_by_1_1_is_a_10_percent_high_flow_bias_and_no_shape_bias() -> None:
    assert metrics.fdc_fhv(FLOWS, 1.1 * FLOWS) == pytest.approx(10.0)
    # the log FDC only shifts: its mid-segment slope and low-flow segment keep their shape
    assert metrics.fdc_fms(FLOWS, 1.1 * FLOWS) == pytest.approx(0.0, abs=1e-9)
    assert metrics.fdc_flv(FLOWS, 1.1 * FLOWS) == pytest.approx(0.0, abs=1e-9)
    assert metrics.beta_nse(FLOWS, 1.1 * FLOWS) == pytest.approx(0.1 * FLOWS.mean() / FLOWS.std())


def test_fhv_takes_the_top_two_percent_of_each_series_sorted_on_its_own() -> None:
    sim = FLOWS.copy()
    sim[0] = 110.0  # the 2 highest simulated flows are now 110 and 100 (at other steps than the observed 100, 99)
    assert metrics.fdc_fhv(FLOWS, sim) == pytest.approx(100 * (110 + 100 - 199) / 199)
    assert metrics.fdc_fhv(FLOWS, FLOWS[::-1]) == 0.0  # timing does not matter to a duration curve
    assert math.isnan(metrics.fdc_fhv([1.0, 2.0], [1.0, 2.0]))  # 2 % of 2 values is no value


def test_fms_and_flv_on_squared_and_rooted_flows() -> None:
    obs = np.arange(10.0, 0.0, -1.0)  # FDC positions 2 and 7 hold 8 and 3; the 3 lowest flows are 1, 2, 3
    slope = math.log(8) - math.log(3)
    assert metrics.fdc_fms(obs, obs ** 2) == pytest.approx(100 * slope / (slope + 1e-6))  # twice the log slope
    area = math.log(2) + math.log(3)  # sum of log(Q / Q_min) over the 3 lowest flows
    assert metrics.fdc_flv(obs, obs ** 2) == pytest.approx(100 * (area - 2 * area) / (area + 1e-6))
    assert metrics.fdc_flv(obs, np.sqrt(obs)) == pytest.approx(100 * (area - area / 2) / (area + 1e-6))


def test_fdc_biases_floor_zero_flows_and_reject_bad_fractions() -> None:
    obs = np.array([0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
    sim = np.where(obs == 0, -0.5, obs)  # negative simulated flows count as 1e-6, like zero observations
    assert metrics.fdc_flv(obs, sim) == pytest.approx(0.0, abs=1e-9)
    assert metrics.fdc_fms(obs, sim) == pytest.approx(0.0, abs=1e-9)
    assert math.isnan(metrics.fdc_flv(-obs - 1, sim))  # a negative observation has no log
    assert math.isnan(metrics.fdc_fms([1.0], [1.0]))
    with pytest.raises(ValueError, match="h must lie strictly between 0 and 1"):
        metrics.fdc_fhv(obs, sim, h=1.0)
    with pytest.raises(ValueError, match="lower"):
        metrics.fdc_fms(obs, sim, lower=0.7, upper=0.2)


def test_decomposition_is_nan_for_constant_observations() -> None:
    assert math.isnan(metrics.beta_nse([2.0, 2.0, 2.0], [1.0, 2.0, 3.0]))
    assert math.isnan(metrics.alpha_nse([2.0], [1.0]))
    assert math.isnan(metrics.pearson_r([1.0, 2.0, 3.0], [2.0, 2.0, 2.0]))
