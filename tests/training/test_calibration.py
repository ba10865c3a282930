"""Spread calibration of quantile forecasts on the validation period."""

from __future__ import annotations

import numpy as np
from scipy import stats

from hydroseq.training.calibration import fit_quantile_scale
from hydroseq.training.predict import SplitPrediction

LEVELS = (0.05, 0.25, 0.5, 0.75, 0.95)


def _prediction(obs: np.ndarray, quantiles: np.ndarray) -> SplitPrediction:
    times = np.arange(obs.shape[1])
    return SplitPrediction(sim=quantiles[..., LEVELS.index(0.5)], obs=obs, times=times,
                           in_split=np.ones(obs.shape[1], bool), leads=(1,), sim_scaled=quantiles[..., 2],
                           obs_scaled=obs, quantiles=quantiles, quantile_levels=LEVELS)


def test_a_forecast_twice_too_wide_is_narrowed_to_its_levels() -> None:
    rng = np.random.default_rng(0)
    centre = 10 + rng.normal(size=(4, 5000))
    obs = centre + rng.normal(size=centre.shape)  # errors ~ N(0, 1)
    quantiles = centre[..., None] + 2.0 * stats.norm.ppf(LEVELS)  # forecast says N(0, 4)
    scale = fit_quantile_scale(_prediction(obs, quantiles[None]))
    assert scale.shape == (1, len(LEVELS)) and scale[0, 2] == 1.0
    np.testing.assert_allclose(scale[0, [0, 1, 3, 4]], 0.5, atol=0.03)
    calibrated = centre[..., None] + 2.0 * scale[0] * stats.norm.ppf(LEVELS)
    frequency = (obs[..., None] <= calibrated).mean(axis=(0, 1))
    np.testing.assert_allclose(frequency, LEVELS, atol=0.01)


def test_factors_grow_outwards_so_the_quantiles_stay_ordered_and_zero_flows_do_not_saturate() -> None:
    rng = np.random.default_rng(1)
    centre = rng.gamma(1.0, 1.0, size=(3, 3000))
    obs = np.where(rng.random(centre.shape) < 0.2, 0.0, centre * rng.lognormal(0, 0.3, centre.shape))
    quantiles = np.maximum(centre[..., None] * np.array([0.1, 0.6, 1.0, 1.3, 1.6]), 0)  # a zero-flow regime
    scale = fit_quantile_scale(_prediction(obs, quantiles[None]))[0]
    assert scale[0] >= scale[1] and scale[4] >= scale[3]  # outer levels at least as wide as inner ones
    assert scale.max() < 19.9 and scale.min() > 0.06  # inside the search range: a real solution
    assert scale[0] < 2.0  # the 20 % of zero flows do not push the 5 % quantile to the search limit
