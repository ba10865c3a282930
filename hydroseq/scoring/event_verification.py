"""Event verification of threshold exceedances: hits, misses and false alarms counted per flood event.

The per-step table (:func:`hydroseq.scoring.verification.contingency_scores`) counts time steps, so a
five-day flood forecast one day late scores four hits, one miss and one false alarm, and a long
flood weighs more than a short one. Here the unit is the event, as a forecaster counts warnings:

- an **event** is a run of consecutive steps above the threshold (strictly above, as everywhere
  in hydroseq), found separately in the observed and the forecast series;
- an observed event is a **hit** when the forecast exceeds the threshold at least once from
  ``tolerance`` steps before its first step to ``tolerance`` steps after its last one, else a **miss**;
- a forecast event is a **false alarm** when the observations never exceed the threshold in the
  same span around it;
- steps where the observation or the forecast is missing count as below the threshold in both
  series: they end events, and nothing is verified on them.

With ``tolerance=0`` (what ``hydroseq evaluate`` uses) an event is a hit when the two overlap;
``tolerance=1`` also forgives a forecast that starts or ends one step off.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from hydroseq.scoring.thresholds import StationThresholds

COUNTS = ("observed_events", "forecast_events", "hits", "misses", "false_alarms")
SCORES = ("pod", "far", "csi")


def exceedance_events(exceeds: ArrayLike) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """First and last step (both inclusive) of each run of True in the 1-D boolean ``exceeds``."""
    flags = np.asarray(exceeds, dtype=np.int8).ravel()
    edges = np.diff(np.concatenate(([0], flags, [0])))
    return np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1


def _any_within(flags: NDArray[np.bool_], first: NDArray[np.intp], last: NDArray[np.intp],
                tolerance: int) -> NDArray[np.bool_]:
    """Whether ``flags`` is True anywhere in ``[first - tolerance, last + tolerance]``, for each span."""
    counts = np.concatenate(([0], np.cumsum(flags)))
    start = np.maximum(first - tolerance, 0)
    stop = np.minimum(last + tolerance, flags.size - 1) + 1
    return np.asarray(counts[stop] - counts[start] > 0)


def _scores(hits: float, misses: float, false_alarms: float, forecast_events: float) -> dict[str, float]:
    """POD, FAR and CSI of event counts (NaN where a denominator is 0)."""
    def ratio(numerator: float, denominator: float) -> float:
        return numerator / denominator if denominator > 0 else math.nan
    return {"pod": ratio(hits, hits + misses), "far": ratio(false_alarms, forecast_events),
            "csi": ratio(hits, hits + misses + false_alarms)}


def event_contingency(obs: ArrayLike, forecast: ArrayLike, threshold: float, tolerance: int = 0) -> dict[str, float]:
    """Event counts and scores of one series against one threshold (the rule in the module docstring).

    Returns
    -------
    dict
        ``observed_events``, ``forecast_events``, ``hits``, ``misses`` (hits + misses = observed
        events), ``false_alarms`` (forecast events), ``pod = hits / observed events``, ``far = false
        alarms / forecast events``, ``csi = hits / (hits + misses + false alarms)``. A score with a
        zero denominator is NaN; everything is NaN when the threshold is not finite or no step has
        both values.

    Raises
    ------
    ValueError
        If the series differ in length or ``tolerance`` is negative.
    """
    if tolerance < 0:
        raise ValueError(f"tolerance must be 0 or more steps, got {tolerance}")
    observed = np.asarray(obs, dtype=np.float64).ravel()
    forecasted = np.asarray(forecast, dtype=np.float64).ravel()
    if observed.shape != forecasted.shape:
        raise ValueError(f"obs has {observed.size} values but forecast has {forecasted.size}")
    known = np.isfinite(observed) & np.isfinite(forecasted)
    if not math.isfinite(threshold) or not known.any():
        return dict.fromkeys((*COUNTS, *SCORES), math.nan)
    observed_above = known & (observed > threshold)
    forecast_above = known & (forecasted > threshold)
    observed_first, observed_last = exceedance_events(observed_above)
    forecast_first, forecast_last = exceedance_events(forecast_above)
    hits = int(np.count_nonzero(_any_within(forecast_above, observed_first, observed_last, tolerance)))
    verified = int(np.count_nonzero(_any_within(observed_above, forecast_first, forecast_last, tolerance)))
    counts = {"observed_events": observed_first.size, "forecast_events": forecast_first.size, "hits": hits,
              "misses": observed_first.size - hits, "false_alarms": forecast_first.size - verified}
    return {**{key: float(value) for key, value in counts.items()},
            **_scores(counts["hits"], counts["misses"], counts["false_alarms"], counts["forecast_events"])}


def score_events(obs: np.ndarray, forecast: np.ndarray, thresholds: StationThresholds,
                 tolerance: int = 0) -> pd.DataFrame:
    """Event verification of ``forecast [station, time]`` against ``obs`` at every threshold of each station.

    ``thresholds.stations`` are the rows of both arrays (:meth:`StationThresholds.for_stations`).

    Returns
    -------
    pandas.DataFrame
        One row per station and threshold level: ``station``, ``level``, ``threshold`` and the
        keys of :func:`event_contingency` (counts as nullable integers, missing where the threshold is).
    """
    if obs.shape != forecast.shape or obs.shape[0] != len(thresholds.stations):
        raise ValueError(f"obs {obs.shape} and forecast {forecast.shape} must both have one row per station "
                         f"({len(thresholds.stations)})")
    rows = [{"station": station, "level": level, "threshold": float(thresholds.values[s, k]),
             **event_contingency(obs[s], forecast[s], float(thresholds.values[s, k]), tolerance)}
            for s, station in enumerate(thresholds.stations) for k, level in enumerate(thresholds.levels)]
    table = pd.DataFrame(rows, columns=["station", "level", "threshold", *COUNTS, *SCORES])
    return table.astype(dict.fromkeys(COUNTS, "Int64"))


def pooled_event_scores(table: pd.DataFrame, levels: Sequence[str] | None = None) -> dict[str, float]:
    """``{"event_pod_<level>": ..., "event_far_<level>": ..., "event_csi_<level>": ...}`` over all rows of ``table``.

    The counts of :func:`score_events` rows are summed per level before the ratios are taken, so
    stations with many events weigh more (as in the pooled per-step scores).
    """
    pooled: dict[str, float] = {}
    for level in levels if levels is not None else table["level"].unique():
        sums = table.loc[table["level"] == level, list(COUNTS)].sum()
        scores = _scores(float(sums["hits"]), float(sums["misses"]), float(sums["false_alarms"]),
                         float(sums["forecast_events"]))
        pooled.update({f"event_{name}_{level}": value for name, value in scores.items()})
    return pooled
