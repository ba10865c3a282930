"""Hydrological signatures of one flow series: NeuralHydrology's set, with its definitions and defaults.

The 13 signatures of ``neuralhydrology.evaluation.signatures`` (release 1.13.0,
``get_available_signatures``), each a number that describes one aspect of a flow regime; comparing
the signature of a simulation with that of the observations says which aspect a model gets wrong.
Every function takes ``flow`` as a 1-D array (NaN where missing: skipped, never filled); those
that work per calendar or water year also take ``times``, the start of each step in local time
(tz-naive, regular, ascending: the ``date`` of a daily series). Units: ``step`` is the grid step
(a day on a daily grid), ``flow`` the unit of the series.

Three definitions depart from NeuralHydrology's code on purpose (its values are otherwise
reproduced within 1e-6, ``tests/scoring/test_signatures.py``):

* :func:`zero_q_freq`, :func:`slope_fdc` and :func:`runoff_ratio` use the observed steps only:
  NeuralHydrology counts missing steps in the length of the series (the zero-flow fraction then
  falls, the FDC's quantile positions shift) and averages precipitation also over the steps
  whose flow is missing. On a series without gaps the values are the same.
* A calendar or water year is used when the series reaches its last step (NeuralHydrology's
  ``end_date < last_date`` also drops a year whose last day is the last day of the series, e.g. the
  last water year of a test period ending on 30 September).
* :func:`stream_elas` skips water years without any observed flow (NeuralHydrology's median is
  NaN then), and is NaN where NeuralHydrology's is infinite.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from hydroseq.scoring.baseflow import PASSES, as_flow_series, baseflow_index
from hydroseq.scoring.hydrological_years import full_years, full_years_of_index, grid_step

SIGNATURES = ("high_q_freq", "high_q_dur", "low_q_freq", "low_q_dur", "zero_q_freq", "q95", "q5", "q_mean",
              "hfd_mean", "baseflow_index", "slope_fdc", "stream_elas", "runoff_ratio")
# What each signature is measured in ("flow": the series' own unit, "step": the grid step).
UNITS = {"high_q_freq": "steps/year", "high_q_dur": "steps", "low_q_freq": "steps/year", "low_q_dur": "steps",
         "zero_q_freq": "fraction", "q95": "flow", "q5": "flow", "q_mean": "flow", "hfd_mean": "steps after 1 Oct",
         "baseflow_index": "fraction", "slope_fdc": "1", "stream_elas": "1", "runoff_ratio": "1"}
# Signatures that need precipitation (in the unit of the flow, e.g. both mm/d).
NEED_PRECIPITATION = ("stream_elas", "runoff_ratio")
CALENDAR_YEAR = 1  # the month a year starts in for the frequencies
WATER_YEAR = 10  # and for the half-flow date and the elasticity
FDC_LOG_OFFSET = 1e-8  # added to the flows before taking logs in slope_fdc (zero flows)
HIGH_FLOW_FACTOR = 9.0  # high flows: above this times the median flow
LOW_FLOW_FACTOR = 0.2  # low flows: below this times the mean flow


def _times(times: ArrayLike, size: int) -> pd.DatetimeIndex:
    """``times`` as a tz-naive DatetimeIndex of ``size`` ascending steps."""
    index = pd.DatetimeIndex(times)
    if index.tz is not None:
        index = index.tz_localize(None)
    if len(index) != size:
        raise ValueError(f"flow has {size} values but times has {len(index)}")
    if not index.is_monotonic_increasing:
        raise ValueError("times must be ascending")
    return index


def _precipitation(precipitation: ArrayLike, size: int) -> NDArray[np.float64]:
    values = np.asarray(precipitation, dtype=np.float64)
    if values.shape != (size,):
        raise ValueError(f"flow has {size} values but precipitation has shape {values.shape}")
    return values


def _nan_statistic(values: NDArray[np.float64], statistic: Literal["mean", "median"]) -> float:
    """``np.nan<statistic>`` of ``values``, NaN (without a warning) when none is finite."""
    if not np.isfinite(values).any():
        return math.nan
    return float(np.nanmedian(values) if statistic == "median" else np.nanmean(values))


def _run_count(positions: NDArray[np.intp]) -> int:
    """How many runs of consecutive positions ``positions`` (ascending) holds."""
    return int(np.count_nonzero(np.diff(positions) > 1)) + 1


def high_q_freq(flow: ArrayLike, times: ArrayLike, threshold: float = HIGH_FLOW_FACTOR) -> float:
    """High-flow frequency: steps per calendar year above ``threshold`` times the median flow, in steps/year.

    The median is that of the whole series; the count is averaged over the full calendar years of
    :func:`full_years` (missing steps count as not high). NaN without a full calendar year.
    Clausen and Biggs (2000), doi:10.1016/S0022-1694(00)00306-1; Westerberg and McMillan (2015),
    doi:10.5194/hess-19-3951-2015, Table 2.
    """
    values = as_flow_series(flow)
    years = full_years(_times(times, values.size), CALENDAR_YEAR)
    return _mean_count(values > threshold * _nan_statistic(values, "median"), years)


def low_q_freq(flow: ArrayLike, times: ArrayLike, threshold: float = LOW_FLOW_FACTOR) -> float:
    """Low-flow frequency: steps per calendar year below ``threshold`` times the **mean** flow, in steps/year.

    As NeuralHydrology computes it (its docstring says median, its code takes the mean of the whole
    series); averaged over the full calendar years. NaN without a full calendar year. Olden and
    Poff (2003), doi:10.1002/rra.700; Westerberg and McMillan (2015), Table 2.
    """
    values = as_flow_series(flow)
    years = full_years(_times(times, values.size), CALENDAR_YEAR)
    return _mean_count(values < threshold * _nan_statistic(values, "mean"), years)


def _mean_count(selected: NDArray[np.bool_], years: list[slice]) -> float:
    """The mean over ``years`` of the number of selected steps in each; NaN without a year."""
    return float(np.mean([np.count_nonzero(selected[year]) for year in years])) if years else math.nan


def high_q_dur(flow: ArrayLike, threshold: float = HIGH_FLOW_FACTOR) -> float:
    """High-flow duration: mean length of the runs of steps above ``threshold`` times the median flow, in steps.

    A missing step ends a run. NaN without a high-flow step. Clausen and Biggs (2000); Westerberg
    and McMillan (2015), Table 2.
    """
    values = as_flow_series(flow)
    high = np.flatnonzero(values > threshold * _nan_statistic(values, "median"))
    return high.size / _run_count(high) if high.size else math.nan


def low_q_dur(flow: ArrayLike, threshold: float = LOW_FLOW_FACTOR) -> float:
    """Low-flow duration: mean length of the runs of steps below ``threshold`` times the **mean** flow, in steps.

    The mean, as in NeuralHydrology's code. A missing step ends a run. NaN without a low-flow step.
    Olden and Poff (2003); Westerberg and McMillan (2015), Table 2.
    """
    values = as_flow_series(flow)
    low = np.flatnonzero(values < threshold * _nan_statistic(values, "mean"))
    return low.size / _run_count(low) if low.size else math.nan


def zero_q_freq(flow: ArrayLike) -> float:
    """Zero-flow frequency: the fraction of the observed steps with a flow of exactly 0 (0 to 1).

    NaN without an observed step (NeuralHydrology divides by the length of the series, missing
    steps included).
    """
    values = as_flow_series(flow)
    observed = int(np.count_nonzero(np.isfinite(values)))
    return np.count_nonzero(values == 0.0) / observed if observed else math.nan


def q95(flow: ArrayLike) -> float:
    """The 95th percentile of the observed flows (exceeded 5 % of the time; linear interpolation), in flow units."""
    values = as_flow_series(flow)
    return float(np.nanquantile(values, 0.95)) if np.isfinite(values).any() else math.nan


def q5(flow: ArrayLike) -> float:
    """The 5th percentile of the observed flows (exceeded 95 % of the time; linear interpolation), in flow units."""
    values = as_flow_series(flow)
    return float(np.nanquantile(values, 0.05)) if np.isfinite(values).any() else math.nan


def q_mean(flow: ArrayLike) -> float:
    """The mean of the observed flows, in flow units."""
    return _nan_statistic(as_flow_series(flow), "mean")


def hfd_mean(flow: ArrayLike, times: ArrayLike) -> float:
    """Mean half-flow date: the step of each water year at which the flow since 1 October passes half the year's.

    Per full water year (:func:`full_years` from October), the first step (0 = 1 October) at which
    the cumulative flow exceeds half the year's total, missing steps adding nothing; the mean over
    the years, in steps after 1 October. Years without flow are skipped; NaN without a full water
    year. Court (1962), doi:10.1029/JZ067i011p04335.
    """
    values = as_flow_series(flow)
    return _half_flow_date(values, full_years(_times(times, values.size), WATER_YEAR))


def _half_flow_date(values: NDArray[np.float64], years: list[slice]) -> float:
    dates = []
    for year in years:
        cumulative = np.nancumsum(values[year])
        passed = np.flatnonzero(cumulative > np.nansum(values[year]) / 2)
        if passed.size:
            dates.append(passed[0])
    return float(np.mean(dates)) if dates else math.nan


def slope_fdc(flow: ArrayLike, lower: float = 0.33, upper: float = 0.66) -> float:
    """Slope of the flow duration curve between exceedance fractions ``lower`` and ``upper`` (in log flow).

    ``(log(Q(lower) + 1e-8) - log(Q(upper) + 1e-8)) / (upper - lower)`` with ``Q(p)`` the observed
    flow at position ``round(p * n)`` of the ``n`` observed flows sorted in descending order
    (Sawicz et al. 2011, doi:10.5194/hess-15-2895-2011, Eq. 3). Steep (large) for flashy
    catchments, flat for damped ones. NaN with too few flows to reach ``upper``.

    Raises
    ------
    ValueError
        Unless ``0 <= lower < upper < 1``.
    """
    if not 0.0 <= lower < upper < 1.0:
        raise ValueError(f"need 0 <= lower < upper < 1, got lower {lower} and upper {upper}")
    values = as_flow_series(flow)
    curve = np.sort(values[np.isfinite(values)])[::-1]
    i, j = int(np.round(lower * curve.size)), int(np.round(upper * curve.size))
    if j >= curve.size:
        return math.nan
    with np.errstate(invalid="ignore"):
        return float((np.log(curve[i] + FDC_LOG_OFFSET) - np.log(curve[j] + FDC_LOG_OFFSET)) / (upper - lower))


def runoff_ratio(flow: ArrayLike, precipitation: ArrayLike) -> float:
    """Runoff ratio: mean flow over mean precipitation, both over the steps where both are known (1).

    Flow and precipitation in the same unit (e.g. mm/d). NaN without such a step or rain
    (Sawicz et al. 2011, Eq. 2).
    """
    values = as_flow_series(flow)
    rain = _precipitation(precipitation, values.size)
    both = np.isfinite(values) & np.isfinite(rain)
    rain_mean = float(np.mean(rain[both])) if both.any() else 0.0
    return float(np.mean(values[both])) / rain_mean if rain_mean != 0.0 else math.nan


def stream_elas(flow: ArrayLike, precipitation: ArrayLike, times: ArrayLike) -> float:
    """Streamflow elasticity to precipitation: the median over water years of ``(dQ / Q) / (dP / P)`` (1).

    Over the steps with an observed flow of 0 or more, ``Q`` and ``P`` are the means of the whole
    series, ``dQ`` and ``dP`` a water year's mean (:func:`full_years` from October) minus them
    (Sankarasubramanian et al. 2001, doi:10.1029/2000WR900330). 1: a 10 % wetter year brings 10 %
    more flow. Water years without an observed flow are skipped; NaN without a full water year, and
    where the median is infinite (no flow, or precipitation as constant as the mean: NeuralHydrology's
    inf).
    """
    values = as_flow_series(flow)
    years = full_years(_times(times, values.size), WATER_YEAR)
    return _elasticity(values, _precipitation(precipitation, values.size), years)


def _elasticity(values: NDArray[np.float64], rain: NDArray[np.float64], years: list[slice]) -> float:
    with np.errstate(invalid="ignore"):
        kept = np.where(values >= 0.0, 1.0, np.nan)  # NaN where the flow is missing or negative
    flow_kept, rain_kept = values * kept, rain * kept
    flow_mean, rain_mean = _nan_statistic(flow_kept, "mean"), _nan_statistic(rain_kept, "mean")
    elasticities = []
    for year in years:
        if np.isfinite(flow_kept[year]).any():
            year_flow, year_rain = _nan_statistic(flow_kept[year], "mean"), _nan_statistic(rain_kept[year], "mean")
            with np.errstate(divide="ignore", invalid="ignore"):  # no flow, or a year as wet as the mean: inf or NaN
                elasticities.append(np.divide(year_flow - flow_mean, year_rain - rain_mean)
                                    * np.divide(rain_mean, flow_mean))
    with np.errstate(invalid="ignore"):
        elasticity = float(np.median(elasticities)) if elasticities else math.nan
    return elasticity if math.isfinite(elasticity) else math.nan


def all_signatures(flow: ArrayLike, times: ArrayLike, precipitation: ArrayLike | None = None) -> dict[str, float]:
    """Every signature of :data:`SIGNATURES` for one series, with NeuralHydrology's defaults.

    ``times`` are the local starts of the steps (regular; see the module). The baseflow filter
    passes follow the grid step (:func:`baseflow_passes`; NaN on a grid neither daily nor hourly),
    and without ``precipitation`` (in the flow's unit) ``stream_elas`` and ``runoff_ratio`` are NaN.
    """
    values = as_flow_series(flow)
    index = _times(times, values.size)
    step = grid_step(index)
    calendar_years = full_years_of_index(index, step, CALENDAR_YEAR)
    water_years = full_years_of_index(index, step, WATER_YEAR)
    passes = PASSES.get(step)
    median, mean = _nan_statistic(values, "median"), _nan_statistic(values, "mean")
    signatures = {"high_q_freq": _mean_count(values > HIGH_FLOW_FACTOR * median, calendar_years),
                  "high_q_dur": high_q_dur(values),
                  "low_q_freq": _mean_count(values < LOW_FLOW_FACTOR * mean, calendar_years),
                  "low_q_dur": low_q_dur(values),
                  "zero_q_freq": zero_q_freq(values), "q95": q95(values), "q5": q5(values), "q_mean": mean,
                  "hfd_mean": _half_flow_date(values, water_years),
                  "baseflow_index": baseflow_index(values, passes) if passes is not None else math.nan,
                  "slope_fdc": slope_fdc(values), "stream_elas": math.nan, "runoff_ratio": math.nan}
    if precipitation is not None:
        rain = _precipitation(precipitation, values.size)
        signatures["stream_elas"] = _elasticity(values, rain, water_years)
        signatures["runoff_ratio"] = runoff_ratio(values, rain)
    return signatures
