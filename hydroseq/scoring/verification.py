"""Scores of probabilistic forecasts: CRPS, Brier, contingency table, reliability, PIT (numpy, scoringrules).

Every function skips what is missing instead of failing: a NaN observation (or forecast) gives a
NaN score for that forecast, and the aggregate scores (:func:`brier_score`, :func:`brier_skill_score`,
:func:`contingency_scores`, :func:`reliability_table`, :func:`pit_histogram`) use only the pairs
where everything is finite, and are NaN when a score is undefined (no pair, no event).

Events are booleans or floats 1/0 (NaN: not observed), probabilities floats in [0, 1] (NaN: no
forecast). The CRPS is in the units of the discharge; the lower, the better.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import scoringrules
from numpy.typing import ArrayLike, NDArray

from hydroseq.scoring.quantiles import check_levels

# scoringrules' numpy backend, named so that the scores do not depend on whether numba is installed.
BACKEND = "numpy"


def _forecast_and_obs(forecast: ArrayLike, obs: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``forecast [..., K]`` and ``obs`` broadcast to ``forecast.shape[:-1]``, both float64."""
    fct = np.asarray(forecast, dtype=np.float64)
    if fct.ndim == 0:
        raise ValueError("a forecast needs a last axis of quantiles or members")
    observed = np.asarray(obs, dtype=np.float64)
    shape = np.broadcast_shapes(fct.shape[:-1], observed.shape)
    return np.broadcast_to(fct, (*shape, fct.shape[-1])), np.broadcast_to(observed, shape)


def _filled(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """``values`` with 0 in place of NaN and infinities (their scores are masked afterwards)."""
    return np.where(np.isfinite(values), values, 0.0)


def _masked(scores: ArrayLike, fct: NDArray[np.float64], obs: NDArray[np.float64]) -> NDArray[np.float64]:
    """``scores`` with NaN wherever the observation or any value of the forecast is not finite."""
    missing = ~np.isfinite(obs) | ~np.isfinite(fct).all(axis=-1)
    return np.where(missing, np.nan, np.asarray(scores, dtype=np.float64))


def crps_quantiles(values: ArrayLike, levels: ArrayLike, obs: ArrayLike) -> NDArray[np.float64]:
    """CRPS of quantile forecasts, as twice the mean pinball loss over the levels.

    ``scoringrules.crps_quantile(obs, fct, alpha)``: ``2 / Q * sum_q PB_q(y)`` with the pinball
    loss ``PB_q = q (y - F_q)`` if ``y >= F_q`` else ``(1 - q) (F_q - y)``. It tends to the CRPS of
    the distribution as the levels fill (0, 1) evenly (e.g. ``(i + 0.5) / Q``); with a few uneven
    levels such as the default seven it weighs each level alike, a proper score for comparing
    forecasts on the same levels but not the same number as the CRPS of their full distribution.

    Parameters
    ----------
    values
        ``[..., Q]`` quantile values (their order along the axis does not matter).
    levels
        The ``Q`` levels (:func:`hydroseq.scoring.quantiles.check_levels`).
    obs
        Observations broadcasting with ``values.shape[:-1]``.

    Returns
    -------
    ndarray
        The score of each forecast; NaN where the observation or a quantile value is NaN or infinite.
    """
    alpha = np.asarray(check_levels(levels))
    fct, observed = _forecast_and_obs(values, obs)
    if fct.shape[-1] != alpha.size:
        raise ValueError(f"values have {fct.shape[-1]} quantiles but {alpha.size} levels were given")
    # scoringrules would count a NaN observation or quantile as a zero loss: fill, then mask.
    scores = scoringrules.crps_quantile(_filled(observed), _filled(fct), alpha, m_axis=-1, backend=BACKEND)
    return _masked(scores, fct, observed)


def crps_ensemble(members: ArrayLike, obs: ArrayLike) -> NDArray[np.float64]:
    """CRPS of ensemble forecasts: that of the members' empirical distribution.

    ``scoringrules.crps_ensemble(obs, fct, m_axis=-1, estimator="qd")``, which equals
    ``E|X - y| - E|X - X'| / 2`` over the members (not the "fair" small-ensemble estimator). A
    one-member ensemble scores its absolute error.

    Parameters
    ----------
    members
        ``[..., M]`` member values.
    obs
        Observations broadcasting with ``members.shape[:-1]``.

    Returns
    -------
    ndarray
        The score of each forecast; NaN where the observation or any member is NaN or infinite.
    """
    fct, observed = _forecast_and_obs(members, obs)
    scores = scoringrules.crps_ensemble(_filled(observed), _filled(fct), m_axis=-1, estimator="qd", backend=BACKEND)
    return _masked(scores, fct, observed)


def _probabilities(probability: ArrayLike, name: str = "probability") -> NDArray[np.float64]:
    """``probability`` as float64, after checking it lies in [0, 1] where it is not NaN."""
    values = np.asarray(probability, dtype=np.float64)
    if np.any((values < 0.0) | (values > 1.0)):
        raise ValueError(f"{name} must lie in [0, 1]")
    return values


def _events(event: ArrayLike) -> NDArray[np.float64]:
    """``event`` as float64 1/0/NaN, after checking it holds nothing else."""
    values = np.asarray(event, dtype=np.float64)
    if np.any((values != 0.0) & (values != 1.0) & ~np.isnan(values)):
        raise ValueError("events must be 1, 0 or NaN (not observed)")
    return values


def _brier_pairs(probability: ArrayLike, event: ArrayLike,
                 reference: ArrayLike | None = None) -> tuple[NDArray[np.float64], ...]:
    """The forecast, event (and reference) values where all of them are finite."""
    arrays = [_probabilities(probability), _events(event)]
    if reference is not None:
        arrays.append(_probabilities(reference, "reference_probability"))
    broadcast = np.broadcast_arrays(*arrays)
    keep = np.logical_and.reduce([np.isfinite(values) for values in broadcast])
    return tuple(values[keep] for values in broadcast)


def brier_score(probability: ArrayLike, event: ArrayLike) -> float:
    """Brier score ``mean((probability - event)^2)`` over the finite pairs (NaN if none).

    0 is perfect, 1 the worst; a forecast of the base rate ``b`` scores ``b (1 - b)``.
    """
    forecast, observed = _brier_pairs(probability, event)
    return float(np.mean((forecast - observed) ** 2)) if forecast.size else math.nan


def brier_skill_score(probability: ArrayLike, event: ArrayLike, reference_probability: ArrayLike) -> float:
    """Brier skill score ``1 - BS / BS_reference``, both over the pairs where all three are finite.

    ``reference_probability`` broadcasts with the forecast: a scalar base rate (climatology) or
    one reference probability per forecast. NaN without a valid pair or when the reference is
    perfect (its score is 0).
    """
    forecast, observed, reference = _brier_pairs(probability, event, reference_probability)
    reference_score = float(np.mean((reference - observed) ** 2)) if forecast.size else 0.0
    if reference_score == 0.0:
        return math.nan
    return 1.0 - float(np.mean((forecast - observed) ** 2)) / reference_score


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else math.nan


def contingency_scores(forecast_event: ArrayLike, observed_event: ArrayLike) -> dict[str, float]:
    """The 2x2 contingency table of a yes/no forecast of an event, and its scores.

    Returns
    -------
    dict
        ``hits``, ``misses``, ``false_alarms``, ``correct_negatives`` (counts over the pairs where
        both are known), ``pod = hits / (hits + misses)`` (probability of detection), ``far =
        false_alarms / (hits + false_alarms)`` (false alarm ratio) and ``csi = hits / (hits +
        misses + false_alarms)`` (critical success index); a score with a zero denominator is NaN.
    """
    forecast, observed = np.broadcast_arrays(_events(forecast_event), _events(observed_event))
    keep = np.isfinite(forecast) & np.isfinite(observed)
    said, happened = forecast[keep] == 1.0, observed[keep] == 1.0
    hits = int(np.count_nonzero(said & happened))
    misses = int(np.count_nonzero(~said & happened))
    false_alarms = int(np.count_nonzero(said & ~happened))
    correct_negatives = int(np.count_nonzero(~said & ~happened))
    return {"hits": hits, "misses": misses, "false_alarms": false_alarms, "correct_negatives": correct_negatives,
            "pod": _ratio(hits, hits + misses), "far": _ratio(false_alarms, hits + false_alarms),
            "csi": _ratio(hits, hits + misses + false_alarms)}


def _bin_index(values: NDArray[np.float64], n_bins: int) -> NDArray[np.intp]:
    """The equal-width bin on [0, 1] of each value; 1.0 falls in the last bin."""
    if n_bins < 1:
        raise ValueError(f"n_bins must be at least 1, got {n_bins}")
    return np.minimum((values * n_bins).astype(np.intp), n_bins - 1)


def reliability_table(probability: ArrayLike, event: ArrayLike, n_bins: int = 10) -> pd.DataFrame:
    """Observed frequency of the event against the forecast probability, in equal-width bins.

    Returns
    -------
    pandas.DataFrame
        One row per bin of [0, 1]: ``bin_lower``, ``bin_upper``, ``mean_forecast`` (the mean
        probability forecast in the bin), ``observed_frequency`` (the fraction of those forecasts
        whose event happened) and ``count`` (the finite pairs in the bin; both means are NaN in an empty bin).
        A reliable forecast has ``observed_frequency`` close to ``mean_forecast``.
    """
    forecast, observed = _brier_pairs(probability, event)
    bins = _bin_index(forecast, n_bins)
    count = np.bincount(bins, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_forecast = np.bincount(bins, weights=forecast, minlength=n_bins) / count
        observed_frequency = np.bincount(bins, weights=observed, minlength=n_bins) / count
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return pd.DataFrame({"bin_lower": edges[:-1], "bin_upper": edges[1:], "mean_forecast": mean_forecast,
                         "observed_frequency": observed_frequency, "count": count})


def pit_histogram(pit_values: ArrayLike, n_bins: int = 10) -> NDArray[np.int64]:
    """Counts of PIT values in ``n_bins`` equal-width bins of [0, 1] (NaN ignored).

    Flat for a calibrated forecast; U-shaped when it is too narrow, a hump when too wide, tilted
    when biased.
    """
    values = _probabilities(pit_values, "PIT values").ravel()
    values = values[~np.isnan(values)]
    return np.bincount(_bin_index(values, n_bins), minlength=n_bins).astype(np.int64)
