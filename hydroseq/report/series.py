"""The series behind a page's hydrographs, per station, as compact JSON-ready lists (the page's data contract).

Values are in the station's drawing unit (:class:`~hydroseq.report.units.Discharge`), ``null`` where missing:
on the forecast page as the forecast CSV prints them (:func:`exact`), on the verification page, a year of
every lead per station, rounded to :data:`SIGNIFICANT` digits (:func:`rounded`); times are the chart milliseconds of
:class:`~hydroseq.report.timeaxis.TimeAxis`, one list per page where all stations share them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hydroseq.forecast.hindcast import HindcastScores
from hydroseq.forecast.result import ForecastResult
from hydroseq.report.inputs import Observations
from hydroseq.report.units import Discharge
from hydroseq.scoring.quantiles import central_interval_levels

SIGNIFICANT = 4
BANDS = (0.5, 0.9)  # central intervals drawn as bands (where the model has their levels)


def rounded(values: np.ndarray | list[float]) -> list[float | None]:
    """``values`` to :data:`SIGNIFICANT` digits, ``None`` for NaN (JSON ``null``)."""
    return [float(f"{value:.{SIGNIFICANT}g}") if np.isfinite(value) else None
            for value in np.asarray(values, dtype=np.float64).ravel()]


def exact(values: np.ndarray | list[float]) -> list[float | None]:
    """float32 ``values`` as the shortest numbers that read back as them (the forecast CSV's text), ``None`` for NaN."""
    return [float(np.format_float_positional(value, unique=True, trim="-")) if np.isfinite(value) else None
            for value in np.asarray(values, dtype=np.float32).ravel()]


def band_levels(levels: tuple[float, ...] | None) -> dict[str, tuple[int, int]]:
    """``{"50": (i, j), "90": (i, j)}``: the indices of the levels of each central band the model has."""
    found = {}
    for central in BANDS:
        try:
            found[f"{central * 100:g}"] = central_interval_levels(levels or (), central)
        except ValueError:
            continue
    return found


def forecast_series(result: ForecastResult, i: int, s: int, discharge: Discharge) -> dict[str, Any]:
    """Issue ``i`` of ``result`` at station ``s``: ``median`` per lead, ``bands`` ``{"90": [low, high]}`` and,
    for an ensemble without quantiles, ``members`` (one list per member)."""
    series: dict[str, Any] = {"median": exact(discharge.primary(result.values[i, s], s))}
    if result.quantiles is not None:
        quantiles = discharge.primary(result.quantiles[i, s], s)  # [lead, level]
        series["bands"] = {name: [exact(quantiles[:, low]), exact(quantiles[:, high])]
                           for name, (low, high) in band_levels(result.quantile_levels).items()}
    elif result.members is not None:
        members = discharge.primary(result.members[i, s], s)  # [lead, member]
        series["members"] = [exact(members[:, m]) for m in range(members.shape[1])]
    return series


def station_skill(scores: HindcastScores | None, s: int) -> dict[str, list[float | None]] | None:
    """NSE per lead of the model and of persistence at station ``s`` (None without scores or any score)."""
    if scores is None:
        return None
    skill = {name: [None if not np.isfinite(v) else round(float(v), 3) for v in scores.nse[scores.of(name), s]]
             for name in scores.forecasts if name in ("model", "persistence")}
    return skill if any(v is not None for values in skill.values() for v in values) else None


def forecast_page_series(result: ForecastResult, discharge: Discharge, observations: Observations | None,
                         previous: ForecastResult | None, scores: HindcastScores | None) -> list[dict[str, Any]]:
    """Per station of the forecast page: its units, observations up to the issue time, forecast, thresholds
    (derived ones with their interval and water years, or why there is no return-period flow), the previous
    forecast (matched by station id) and its hindcast skill."""
    issue = result.issue_times[0]
    previous_row = {station: p for p, station in enumerate(previous.stations)} if previous is not None else {}
    thresholds = result.thresholds.for_stations(result.stations) if result.thresholds is not None else None
    stations = []
    for s, station in enumerate(result.stations):
        entry: dict[str, Any] = {"unit": discharge.unit_of(s), "second": discharge.second_axis(s),
                                 **forecast_series(result, 0, s, discharge)}
        if observations is not None and observations.in_file[s] and station not in result.ungauged:
            shown = observations.times <= issue
            entry["observed"] = exact(discharge.primary(observations.values[s, shown], s))
        if thresholds is not None:
            entry["thresholds"] = exact(discharge.primary(thresholds.values[s], s))
            if np.isfinite(thresholds.lower[s]).any():  # derived return-period flows: interval, water years
                entry["thresholdIntervals"] = [exact(discharge.primary(bound[s], s))
                                               for bound in (thresholds.lower, thresholds.upper)]
                entry["thresholdYears"] = thresholds.years[s].tolist()
            if thresholds.notes[s]:
                entry["thresholdNote"] = thresholds.notes[s]
        if previous is not None and station in previous_row:
            entry["previous"] = exact(discharge.primary(previous.values[0, previous_row[station]], s))
        entry["skill"] = station_skill(scores, s)
        stations.append(entry)
    return stations


def hindcast_page_series(result: ForecastResult, discharge: Discharge,
                         observations: Observations | None) -> list[dict[str, Any]]:
    """Per station of the verification page: the observations over the period and, per lead, the median and
    the widest band at every issue time."""
    bands = band_levels(result.quantile_levels)
    widest = bands.get("90") or bands.get("50")
    stations = []
    for s in range(len(result.stations)):
        entry: dict[str, Any] = {"unit": discharge.unit_of(s), "second": discharge.second_axis(s),
                                 "median": [rounded(discharge.primary(result.values[:, s, k], s))
                                            for k in range(len(result.leads))]}
        if widest is not None and result.quantiles is not None:
            low, high = widest
            quantiles = discharge.primary(result.quantiles[:, s], s)  # [issue, lead, level]
            entry["band"] = [[rounded(quantiles[:, k, low]), rounded(quantiles[:, k, high])]
                             for k in range(len(result.leads))]
        if observations is not None and observations.in_file[s]:
            entry["observed"] = rounded(discharge.primary(observations.values[s], s))
        stations.append(entry)
    return stations
