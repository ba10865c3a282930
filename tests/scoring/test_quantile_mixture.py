"""The mixture of distributions given by their quantiles (an ensemble weather forecast through a quantile
model), checked against mixtures whose quantiles are known, and an ensemble's own quantiles."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from hydroseq.scoring.quantiles import ensemble_quantiles, mixture_quantiles

LEVELS = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)


def test_the_mixture_of_one_distribution_is_that_distribution():
    quantiles = stats.gamma.ppf(LEVELS, 2.0, scale=3.0)
    np.testing.assert_allclose(mixture_quantiles(quantiles[None, None, :], LEVELS)[0], quantiles, rtol=1e-6)
    same = np.stack([quantiles] * 5)[None]
    np.testing.assert_allclose(mixture_quantiles(same, LEVELS)[0], quantiles, rtol=1e-6)


def test_the_mixture_keeps_the_spread_between_members():
    """Ten normals with scattered means: the mixture's quantiles are those of the pooled samples
    (within the error of representing each member by 7 quantiles), wider than the average member's."""
    rng = np.random.default_rng(0)
    means = rng.normal(0.0, 2.0, 10)
    members = np.stack([stats.norm.ppf(LEVELS, loc=mean) for mean in means])[None]
    mixture = mixture_quantiles(members, LEVELS)[0]
    pooled = np.concatenate([rng.normal(mean, 1.0, 100_000) for mean in means])
    np.testing.assert_allclose(mixture, np.quantile(pooled, LEVELS), atol=0.05)
    averaged = members[0].mean(axis=0)  # quantile averaging: the weather's spread lost
    assert mixture[-1] - mixture[0] > 1.5 * (averaged[-1] - averaged[0])


def test_two_members_far_apart_put_the_median_between_them():
    quantiles = stats.norm.ppf(LEVELS)
    mixture = mixture_quantiles(np.stack([quantiles - 10, quantiles + 10])[None], LEVELS)[0]
    gap = 10 - (quantiles[-1] + (quantiles[-1] - quantiles[-2]))  # where each member's tail ends
    assert -gap - 1e-4 <= mixture[3] <= gap + 1e-4 and mixture[2] == pytest.approx(-10, abs=1e-5)


def test_a_missing_member_makes_the_combination_missing():
    quantiles = np.tile(stats.norm.ppf(LEVELS), (2, 3, 1))  # two rows of three members
    quantiles[1, 2, 4] = np.nan
    combined = mixture_quantiles(quantiles, LEVELS)
    assert np.isfinite(combined[0]).all() and np.isnan(combined[1]).all()
    points = np.array([[1.0, 2.0, np.nan], [1.0, 2.0, 3.0]])
    assert np.isnan(ensemble_quantiles(points, LEVELS)[0]).all()
    np.testing.assert_allclose(ensemble_quantiles(points, LEVELS)[1], np.quantile([1, 2, 3], LEVELS))
