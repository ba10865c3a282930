"""One row per station of the forecast page: its state, newest observation, forecast peak and flood probabilities.

The map colours a station by its highest probability of exceeding a flood threshold over the lead window
(:data:`RISK_CLASSES`, ColorBrewer's colour-blind-safe YlOrRd): a return-period flow or an agency's level, not
a high flow such as the flow exceeded 5 % of the time (``q95``: exceeded every year; its own columns, see
:attr:`hydroseq.scoring.thresholds.StationThresholds.flood`). A probability falls in the class of the percent the
page shows for it. Its marker's shape says whether it was forecast from an up-to-date gauge, a stale one, no
gauge, or not at all (:data:`STATES`). A model without a predictive distribution has no probabilities: its
stations are coloured by the forecast peak as a depth rate (:data:`PEAK_CLASSES`, mm/d or the target's depth
unit), which compares basins of any size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hydroseq.forecast.result import ForecastResult
from hydroseq.report.content import at_least
from hydroseq.report.inputs import Observations
from hydroseq.report.units import Discharge

# (lowest probability of the class, legend text, colour), highest class first
RISK_CLASSES = ((0.8, "80 % or more", "#bd0026"), (0.5, "50 to 80 %", "#f03b20"), (0.2, "20 to 50 %", "#fd8d3c"),
                (0.05, "5 to 20 %", "#fecc5c"), (0.0, "under 5 %", "#ffffb2"))
# deterministic models: (lowest peak as a depth rate, legend text template, colour), viridis, highest first
PEAK_CLASSES = ((10.0, "{} or more", "#440154"), (3.0, "{} to {}", "#3b528b"), (1.0, "{} to {}", "#21918c"),
                (0.3, "{} to {}", "#5ec962"), (0.0, "under {}", "#fde725"))
NO_VALUE_COLOUR = "#bdbdbd"
# state: (marker, legend text)
STATES = {"forecast": ("circle", "forecast, gauge up to date"), "stale": ("square", "forecast from a stale gauge"),
          "ungauged": ("triangle", "forecast without a gauge (ungauged)"), "skipped": ("x", "not forecast")}


@dataclass(frozen=True)
class StationRow:
    """What the page shows of one station (``peak`` and ``thresholds`` in ``unit``; NaN where unknown)."""

    index: int
    station: str
    name: str
    area_km2: float
    lat: float
    lon: float
    state: str
    note: str
    newest_observation: np.datetime64
    observation_age_hours: float
    peak: float
    peak_lead: int
    unit: str
    peak_depth: float  # the peak as a depth rate (Discharge.depth_unit)
    probabilities: tuple[float, ...]  # per threshold, the highest over the leads
    colour: str
    colour_class: str
    flood: tuple[bool, ...] = ()  # per threshold: a flood threshold (else a high flow)

    @property
    def highest_probability(self) -> float:
        """The highest probability of exceeding a flood threshold at any lead (NaN: none known)."""
        return _highest(self.probabilities, self.flood, True)

    @property
    def high_flow_probability(self) -> float:
        """The highest probability of exceeding a high flow (``q95``, ``q99``) at any lead (NaN: none known)."""
        return _highest(self.probabilities, self.flood, False)


def _highest(probabilities: tuple[float, ...], flood: tuple[bool, ...], kind: bool) -> float:
    finite = [p for p, is_flood in zip(probabilities, flood, strict=True) if is_flood is kind and np.isfinite(p)]
    return max(finite) if finite else float("nan")


def station_rows(result: ForecastResult, discharge: Discharge, observations: Observations | None) -> list[StationRow]:
    """One :class:`StationRow` per station of the single-issue forecast ``result``."""
    issue = result.issue_times[0]
    newest, _ = observations.newest(issue) if observations is not None else (None, None)
    depth = discharge.depth_rates(result.values[0])  # [station, lead] as a depth rate, or None
    flood = result.thresholds.flood if result.thresholds is not None else ()
    rows = []
    for s, station in enumerate(result.stations):
        state, note = _state(result, s, observations)
        values = discharge.primary(result.values[0, s], s)
        finite = np.isfinite(values)
        peak_lead = int(np.argmax(np.where(finite, values, -np.inf))) if finite.any() else -1
        probabilities = (tuple(float(np.nanmax(result.exceedance[0, s, :, k]))
                               if np.isfinite(result.exceedance[0, s, :, k]).any() else float("nan")
                               for k in range(result.exceedance.shape[-1]))
                         if result.exceedance is not None else ())
        if newest is not None:
            newest_time = newest[s]
            age = (float((issue - newest_time) / np.timedelta64(1, "h")) if not np.isnat(newest_time)
                   else float("nan"))
        else:
            age = float(result.observation_age_hours[0, s]) if result.observation_age_hours is not None else np.nan
            newest_time = (issue - np.timedelta64(int(age * 3600), "s")).astype("datetime64[ns]") if np.isfinite(
                age) else np.datetime64("NaT", "ns")
        peak_depth = float(np.nanmax(depth[s])) if depth is not None and np.isfinite(depth[s]).any() else np.nan
        colour, colour_class = _colour(_highest(probabilities, flood[:len(probabilities)], True), peak_depth,
                                       result.exceedance is not None, discharge.depth_unit)
        rows.append(StationRow(
            index=s, station=station, name=result.station_names[s] if result.station_names is not None else "",
            area_km2=_at(result.area_km2, s), lat=_at(result.lats, s), lon=_at(result.lons, s), state=state,
            note=note, newest_observation=newest_time, observation_age_hours=age,
            peak=float(values[peak_lead]) if peak_lead >= 0 else float("nan"),
            peak_lead=int(result.leads[peak_lead]) if peak_lead >= 0 else -1, unit=discharge.unit_of(s),
            peak_depth=peak_depth,
            probabilities=probabilities, colour=colour, colour_class=colour_class, flood=flood[:len(probabilities)]))
    return rows


def _state(result: ForecastResult, s: int, observations: Observations | None) -> tuple[str, str]:
    station = result.stations[s]
    if station in result.skipped or not np.isfinite(result.values[0, s]).any():
        return "skipped", f"not forecast: {result.skipped.get(station, 'no forecast in the file')}"
    if station in result.ungauged:
        return "ungauged", "no observed discharge in the data file up to the issue time: forecast without a gauge"
    if observations is not None and not observations.in_file[s]:
        return "forecast", "not in the data file: no observations shown"
    if station in result.stale:
        return "stale", f"stale gauge: {result.stale[station]}"
    return "forecast", ""


def _colour(highest: float, peak_depth: float, probabilistic: bool, depth_unit: str) -> tuple[str, str]:
    """The marker colour and the legend class it stands for (``highest``: the flood probability)."""
    if probabilistic:
        if not np.isfinite(highest):
            return NO_VALUE_COLOUR, "no flood threshold"
        return next((colour, text) for lowest, text, colour in RISK_CLASSES if at_least(highest, lowest))
    if not np.isfinite(peak_depth):
        return NO_VALUE_COLOUR, "no forecast"
    return next((colour, text) for text, colour, lowest in peak_legend(depth_unit) if peak_depth >= lowest)


def peak_legend(depth_unit: str) -> list[tuple[str, str, float]]:
    """``(legend text, colour, lowest peak)`` of each class of a deterministic model's map, highest first."""
    bounds = [lowest for lowest, _, _ in PEAK_CLASSES]
    legend = []
    for k, (lowest, template, colour) in enumerate(PEAK_CLASSES):
        upper = bounds[k - 1] if k else None
        if k == 0:
            text = template.format(f"{lowest:g} {depth_unit}")
        elif lowest == 0.0:
            text = template.format(f"{upper:g} {depth_unit}")
        else:
            text = template.format(f"{lowest:g}", f"{upper:g} {depth_unit}")
        legend.append((text, colour, lowest))
    return legend


def _at(values: np.ndarray | None, s: int) -> float:
    return float(values[s]) if values is not None else float("nan")
