"""Return-period flows of each station: a distribution fitted to its water-year maxima, with a confidence interval.

The annual maxima are those of the series as given: of daily means on a daily grid, so a "2-year flow" here is
the 2-year daily-mean flow, below the instantaneous peak a flood-frequency study of the gauge would give.

By default (:class:`FrequencyAnalysis`) a Gumbel (or GEV) distribution is fitted by L-moments (Hosking & Wallis
1997, *Regional Frequency Analysis*; scipy's sample L-moments and Hosking's formulas, tested against lmoments3,
a GPL library this BSD package does not depend on), with a parametric bootstrap interval: ``bootstrap_samples``
records of the station's length drawn from the fit, each refitted. ``method="mle"`` keeps the earlier maximum
likelihood fit (no interval) to reproduce thresholds derived before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

MIN_YEARS = 5  # fewer valid annual maxima than this: no return-period flow
FitMethod = Literal["lmoments", "mle"]
Distribution = Literal["gumbel", "gev"]
_DISTRIBUTION_NAMES = {"gumbel": "Gumbel", "gev": "GEV"}


@dataclass(frozen=True)
class FrequencyAnalysis:
    """How return-period flows are fitted: method, distribution and the bootstrap of the interval.

    Attributes
    ----------
    method
        ``"lmoments"`` (default) or ``"mle"`` (maximum likelihood, the earlier fit, without an interval).
    distribution
        ``"gumbel"`` (default) or ``"gev"``.
    confidence
        The share of the bootstrap's return-period flows between the interval's bounds (0.9: 5 % to 95 %).
    bootstrap_samples
        Records drawn from each station's fitted distribution (0: no interval).
    seed
        Seed of the draws: the same maxima give the same interval, whatever the other stations.
    """

    method: FitMethod = "lmoments"
    distribution: Distribution = "gumbel"
    confidence: float = 0.9
    bootstrap_samples: int = 1000
    seed: int = 0

    def __post_init__(self) -> None:
        if self.method not in ("lmoments", "mle"):
            raise ValueError(f"method must be 'lmoments' or 'mle', got {self.method!r}")
        if self.distribution not in _DISTRIBUTION_NAMES:
            raise ValueError(f"distribution must be 'gumbel' or 'gev', got {self.distribution!r}")
        if not 0.0 < self.confidence < 1.0 or self.bootstrap_samples < 0:
            raise ValueError(f"confidence must be in (0, 1) and bootstrap_samples at least 0, got "
                             f"{self.confidence} and {self.bootstrap_samples}")

    @property
    def has_interval(self) -> bool:
        """Whether the fit gives a confidence interval (L-moments with bootstrap samples)."""
        return self.method == "lmoments" and self.bootstrap_samples > 0

    def describe(self) -> str:
        """One phrase for a file's or a table's ``source``: ``Gumbel fitted by L-moments to water-year maxima, ...``."""
        name = _DISTRIBUTION_NAMES[self.distribution]
        if self.method == "mle":
            return f"{name} fitted by maximum likelihood to water-year maxima (the earlier method, no interval)"
        interval = (f", {self.confidence * 100:g} % interval from {self.bootstrap_samples} parametric bootstrap "
                    f"samples (seed {self.seed})" if self.has_interval else "")
        return f"{name} fitted by L-moments to water-year maxima{interval}"


@dataclass(frozen=True)
class ReturnPeriodFlows:
    """``[station, period]`` flows, their interval (NaN without one), the water years each fit used, and why a
    station has none (``""`` where it has)."""

    flows: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    years: NDArray[np.int64]  # [station]: valid water-year maxima
    notes: tuple[str, ...]


def water_years(times: ArrayLike, water_year_start_month: int = 10) -> NDArray[np.int64]:
    """The water year of each time: a year starts on the 1st of ``water_year_start_month`` and is
    named by the calendar year it ends in (with October: 1 Oct 2000 - 30 Sep 2001 is 2001)."""
    if not 1 <= water_year_start_month <= 12:
        raise ValueError(f"water_year_start_month must be 1..12, got {water_year_start_month}")
    stamps = np.asarray(times, dtype="datetime64[s]")
    years = stamps.astype("datetime64[Y]").astype(np.int64) + 1970
    months = stamps.astype("datetime64[M]").astype(np.int64) % 12 + 1
    if water_year_start_month == 1:
        return years
    return years + (months >= water_year_start_month)


def annual_maxima(values: ArrayLike, times: ArrayLike, water_year_start_month: int = 10,
                  min_coverage: float = 0.8) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Each station's maximum discharge in each water year (:func:`water_years`).

    Parameters
    ----------
    values
        ``[S, T]`` discharge, NaN where missing.
    times
        ``[T]`` strictly increasing times of a regular grid.
    water_year_start_month
        The month on whose 1st a water year starts.
    min_coverage
        The fraction of the year's steps (a full year at the grid's step, so that a year the
        series only partly covers counts as incomplete) that must be finite for a maximum.

    Returns
    -------
    years, maxima
        ``[Y]`` the water years the times touch, ``[S, Y]`` their maxima (NaN below ``min_coverage``).
    """
    flows = np.asarray(values, dtype=np.float64)
    stamps = np.asarray(times, dtype="datetime64[s]")
    if flows.ndim != 2 or stamps.shape != (flows.shape[1],):
        raise ValueError(f"values have shape {flows.shape} and times {stamps.shape}, expected [S, T] and [T]")
    if stamps.size < 2 or np.any(np.diff(stamps) <= np.timedelta64(0, "s")):
        raise ValueError("times must hold at least two strictly increasing steps")
    step = np.median(np.diff(stamps).astype(np.int64))
    labels = water_years(stamps, water_year_start_month)
    years, starts = np.unique(labels, return_index=True)
    first_year = 0 if water_year_start_month == 1 else 1
    year_starts = np.array([f"{year - first_year + k:04d}-{water_year_start_month:02d}-01" for year in years
                            for k in (0, 1)], dtype="datetime64[s]").reshape(-1, 2)
    expected = (year_starts[:, 1] - year_starts[:, 0]).astype(np.int64) / step
    finite = np.add.reduceat(np.isfinite(flows), starts, axis=1)
    maxima = np.fmax.reduceat(flows, starts, axis=1)
    return years, np.where(finite >= min_coverage * expected, maxima, np.nan)


def _scipy_distribution(distribution: Distribution) -> Any:
    from scipy import stats  # here, not at the top: 1 s of every forecast's start (which never fits)

    return stats.gumbel_r if distribution == "gumbel" else stats.genextreme


def _lmoment_parameters(maxima: NDArray[np.float64], distribution: Distribution) -> NDArray[np.float64]:
    """``[..., n]`` samples -> ``[..., k]`` scipy parameters (GEV: shape, loc, scale) of the L-moment fit
    (NaN where no member of the family has the sample's L-moments, such as a sample without spread).

    Hosking & Wallis (1997), *Regional frequency analysis*, appendix A.8 (Gumbel) and A.9 (GEV, shape from the
    L-skewness by Hosking's approximation refined by Newton steps on the exact relation); scipy's ``genextreme``
    shape ``c`` is Hosking's ``k``. ``tests/scoring/test_return_periods.py`` checks them against lmoments3."""
    from scipy import special, stats

    ratios = np.moveaxis(stats.lmoment(maxima, order=(1, 2, 3), axis=-1), 0, -1)  # l1, l2, t3
    l1, l2, t3 = ratios[..., 0], ratios[..., 1], ratios[..., 2]
    invalid = ~(l2 > 0) | ~(np.abs(t3) < 1)
    with np.errstate(all="ignore"):
        if distribution == "gumbel":
            scale = l2 / np.log(2.0)
            parameters = np.stack([l1 - np.euler_gamma * scale, scale], axis=-1)
        else:
            shape = _gev_shape(t3)
            gamma = special.gamma(1.0 + shape)
            scale = l2 * shape / ((1.0 - 2.0 ** -shape) * gamma)
            parameters = np.stack([shape, l1 - scale * (1.0 - gamma) / shape, scale], axis=-1)
            invalid |= ~(shape > -1) | ~np.isfinite(parameters).all(axis=-1)
    parameters[invalid] = np.nan
    return parameters


def _gev_shape(t3: NDArray[np.float64], newton_steps: int = 6) -> NDArray[np.float64]:
    """Hosking's GEV shape ``k`` whose L-skewness ``2 (1 - 3^-k) / (1 - 2^-k) - 3`` is ``t3``."""
    c = 2.0 / (3.0 + t3) - np.log(2.0) / np.log(3.0)
    shape = 7.8590 * c + 2.9554 * c**2  # Hosking, Wallis & Wood (1985), eq. 15: within 9e-4 for |t3| < 0.5
    shape = np.where(np.abs(shape) < 1e-6, 1e-6, shape)  # the Gumbel limit k -> 0 as a small k
    for _ in range(newton_steps):
        two, three = 2.0 ** -shape, 3.0 ** -shape  # Newton: residual / its derivative in k
        shape = shape - (2.0 * (1.0 - three) / (1.0 - two) - 3.0 - t3) / (
            2.0 * (np.log(3.0) * three * (1.0 - two) - np.log(2.0) * two * (1.0 - three)) / (1.0 - two) ** 2)
    return shape


def bootstrap_interval(parameters: NDArray[np.float64], years: int, exceedance: NDArray[np.float64],
                       analysis: FrequencyAnalysis) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``[P]`` bounds of the parametric bootstrap: ``analysis.bootstrap_samples`` records of ``years`` maxima
    drawn from the distribution with ``parameters``, each refitted by L-moments; the central ``confidence``
    share of their return-period flows. The draws depend on the seed and ``years`` only."""
    dist = _scipy_distribution(analysis.distribution)
    uniform = np.random.default_rng((analysis.seed, years)).random((analysis.bootstrap_samples, years))
    refitted = _lmoment_parameters(dist.ppf(uniform, *parameters), analysis.distribution)  # [sample, k]
    replicates = dist.isf(exceedance[None, :], *(refitted[:, j, None] for j in range(refitted.shape[1])))
    tail = 50.0 * (1.0 - analysis.confidence)
    lower, upper = np.nanpercentile(replicates, [tail, 100.0 - tail], axis=0)
    return lower, upper


@lru_cache(maxsize=256)
def _standard_gumbel_interval(years: int, exceedance: tuple[float, ...],
                              analysis: FrequencyAnalysis) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    lower, upper = bootstrap_interval(np.array([0.0, 1.0]), years, np.array(exceedance), analysis)
    lower.setflags(write=False)
    upper.setflags(write=False)
    return lower, upper


def _lmoment_flows(valid: NDArray[np.float64], exceedance: NDArray[np.float64],
                   analysis: FrequencyAnalysis) -> tuple[NDArray[np.float64], NDArray[np.float64],
                                                         NDArray[np.float64]]:
    """Flows, lower and upper bounds ``[P]`` of one station's valid maxima."""
    dist = _scipy_distribution(analysis.distribution)
    parameters = _lmoment_parameters(valid, analysis.distribution)
    flows = np.asarray(dist.isf(exceedance, *parameters), dtype=np.float64)
    lower, upper = np.full_like(flows, np.nan), np.full_like(flows, np.nan)
    if analysis.has_interval and np.isfinite(parameters).all():
        if analysis.distribution == "gumbel":
            # Gumbel records are loc + scale x standard ones, and their L-moment fits and percentiles follow:
            # the interval is that of the standard Gumbel for the record's length, drawn once per length
            low, high = _standard_gumbel_interval(valid.size, tuple(exceedance.tolist()), analysis)
            lower, upper = parameters[0] + parameters[1] * low, parameters[0] + parameters[1] * high
        else:
            lower, upper = bootstrap_interval(parameters, valid.size, exceedance, analysis)
    return flows, lower, upper


def _mle_flows(valid: NDArray[np.float64], exceedance: NDArray[np.float64],
               distribution: Distribution) -> NDArray[np.float64]:
    """The earlier maximum-likelihood fit, unchanged (all-equal maxima give that value)."""
    if np.ptp(valid) == 0.0:
        return np.full(exceedance.size, valid[0])
    from scipy import stats

    location, scale = stats.gumbel_r.fit(valid)
    if distribution == "gumbel":
        return np.asarray(stats.gumbel_r.isf(exceedance, location, scale), dtype=np.float64)
    # Started from the Gumbel fit (shape 0): scipy's default start can end in a far worse local optimum.
    parameters = stats.genextreme.fit(valid, 0.0, loc=location, scale=scale)
    return np.asarray(stats.genextreme.isf(exceedance, *parameters), dtype=np.float64)


def _station_note(valid: NDArray[np.float64], min_years: int, any_finite: bool) -> str:
    """Why a station's maxima give no L-moment fit; ``""`` when they do."""
    if not any_finite:
        return "no finite discharge in the period"
    if valid.size < min_years:
        return (f"{valid.size} water years with enough days for an annual maximum, fewer than the {min_years} "
                "a fit needs")
    if np.ptp(valid) == 0.0:
        return f"all {valid.size} water-year maxima are {valid[0]:g}: no spread to fit a distribution to"
    return ""


def fit_return_periods(values: ArrayLike, times: ArrayLike, periods: Sequence[float] = (2, 5),
                       analysis: FrequencyAnalysis | None = None, water_year_start_month: int = 10,
                       min_coverage: float = 0.8, min_years: int = MIN_YEARS) -> ReturnPeriodFlows:
    """Each station's flow exceeded with probability ``1 / period`` in a water year, with its interval.

    The distribution of ``analysis`` (default: Gumbel by L-moments, 90 % bootstrap interval) is fitted to the
    station's water-year maxima (:func:`annual_maxima`, with ``water_year_start_month`` and ``min_coverage``) and
    its ``isf(1 / period)`` taken. A station with fewer than ``min_years`` valid maxima, without any finite value
    or (L-moments) whose maxima are all equal, such as a dry channel's zeros, is NaN with the reason in ``notes``.

    Raises
    ------
    ValueError
        If a period is not above 1 year.
    """
    if any(not period > 1 for period in periods):
        raise ValueError(f"return periods must exceed 1 year, got {list(periods)}")
    analysis = analysis if analysis is not None else FrequencyAnalysis()
    exceedance = 1.0 / np.asarray(periods, dtype=np.float64)
    flows_in = np.asarray(values, dtype=np.float64)
    _, maxima = annual_maxima(flows_in, times, water_year_start_month, min_coverage)
    shape = (maxima.shape[0], len(periods))
    flows, lower, upper = np.full(shape, np.nan), np.full(shape, np.nan), np.full(shape, np.nan)
    years = np.isfinite(maxima).sum(axis=1).astype(np.int64)
    notes = []
    for s, row in enumerate(maxima):
        valid = row[np.isfinite(row)]
        note = _station_note(valid, min_years, bool(np.isfinite(flows_in[s]).any()))
        if analysis.method == "mle" and valid.size >= min_years:
            flows[s] = _mle_flows(valid, exceedance, analysis.distribution)
            note = ""
        elif not note:
            flows[s], lower[s], upper[s] = _lmoment_flows(valid, exceedance, analysis)
            if not np.isfinite(flows[s]).all():
                note = f"{_DISTRIBUTION_NAMES[analysis.distribution]} L-moment fit failed (L-skewness out of range)"
        notes.append(note)
    return ReturnPeriodFlows(flows, lower, upper, years, tuple(notes))


def return_period_flows(values: ArrayLike, times: ArrayLike, periods: Sequence[float] = (2, 5),
                        distribution: Distribution = "gumbel", method: FitMethod = "lmoments",
                        water_year_start_month: int = 10, min_coverage: float = 0.8,
                        min_years: int = MIN_YEARS) -> NDArray[np.float64]:
    """``[S, P]``: the flows of :func:`fit_return_periods` without their interval (no bootstrap)."""
    analysis = FrequencyAnalysis(method=method, distribution=distribution, bootstrap_samples=0)
    return fit_return_periods(values, times, periods, analysis, water_year_start_month, min_coverage,
                              min_years).flows
