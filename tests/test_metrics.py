"""Metrics against values computed by hand, and their behaviour on missing / degenerate input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from hydroseq import metrics

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
    assert metrics.all_metrics(obs, sim) == pytest.approx(metrics.all_metrics(OBS, SIM))
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
