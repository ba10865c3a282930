"""The verification page of a hindcast: per-station skill against persistence on a map (a lead selector), the
per-lead score table the CLI prints, the reliability diagram and PIT histogram, and each station's hydrograph.

The lead selector (lead 1 first, whatever the number of leads) recolours the map, the table's swatches and the
PIT histogram, redraws the selected station's hindcast at that lead, and shows the station table's columns of
that lead only (a week of leads would be 21 columns), keeping its sort on the same score."""

from __future__ import annotations

from typing import Any

import numpy as np

from hydroseq.forecast.hindcast import HindcastScores
from hydroseq.forecast.result import ForecastResult, lead_text
from hydroseq.report.charts import hydrograph, pit_histogram, reliability_diagram, station_map, web_mercator
from hydroseq.report.content import Page, TableColumn, model_text
from hydroseq.report.inputs import Observations
from hydroseq.report.series import hindcast_page_series, rounded
from hydroseq.report.timeaxis import TimeAxis, utc_text
from hydroseq.report.units import Discharge
from hydroseq.scoring.probabilistic_scores import RELIABILITY_LEVEL
from hydroseq.scoring.quantiles import pit
from hydroseq.scoring.verification import pit_histogram as pit_counts
from hydroseq.scoring.verification import reliability_table

# Skill against persistence, 1 - (1 - NSE) / (1 - NSE of persistence) (the persistence index): (lowest, text,
# colour), ColorBrewer's colour-blind-safe RdBu, best first; above 0 the model beats persistence.
SKILL_CLASSES = ((0.5, "0.5 or more", "#2166ac"), (0.2, "0.2 to 0.5", "#67a9cf"), (0.0, "0 to 0.2", "#d1e5f0"),
                 (-0.2, "-0.2 to 0", "#fddbc7"), (-0.5, "-0.5 to -0.2", "#ef8a62"), (-np.inf, "under -0.5", "#b2182b"))
NOT_SCORED = "#bdbdbd"


def skill_against_persistence(model_nse: np.ndarray, persistence_nse: np.ndarray) -> np.ndarray:
    """The persistence index ``1 - (1 - NSE) / (1 - NSE_persistence)`` (NaN where either is unknown)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(persistence_nse < 1, 1 - (1 - model_nse) / (1 - persistence_nse), np.nan)


def verification_page(result: ForecastResult, axis: TimeAxis, observations: Observations | None,
                      scores: HindcastScores) -> Page:
    """Everything the verification page shows of the hindcast ``result`` and its ``scores``."""
    discharge = Discharge(result.units, result.step, result.area_km2)
    first, last = result.issue_times[0], result.issue_times[-1]
    period = f"{axis.text(first)} to {axis.text(last)}"
    leads = [lead_text(int(lead), result.step) for lead in result.leads]
    default = int(np.flatnonzero(np.asarray(result.leads) == 1)[0]) if 1 in set(result.leads.tolist()) else 0
    model, persistence = scores.nse[scores.of("model")], _nse_of(scores, "persistence")
    skill = skill_against_persistence(model, persistence)  # [station, lead]
    header = [("hindcast", f"{len(result.issue_times)} issue times, {utc_text(first)} to {utc_text(last)} "
                           f"(local days {period})"),
              ("model", model_text(result.attributes)),
              ("stations", f"{int(np.isfinite(model).any(axis=1).sum())} of {len(result.stations)} scored"),
              ("leads", ", ".join(text.removeprefix("lead ") for text in leads))]
    notes = ["Skill against persistence is 1 - (1 - NSE) / (1 - NSE of persistence): above 0 the model beats "
             "persistence (the forecast that tomorrow's flow is today's)."]
    observed = _observed_at_valid_times(result, observations) if observations is not None else None
    charts: dict[str, Any] = {"map": station_map(),
                              "hydrograph": hydrograph(None, f"local time ({axis.utc_offset(last)})", markers=False)}
    data: dict[str, Any] = {
        "kind": "verification", "leads": [int(lead) for lead in result.leads], "leadText": leads,
        "stepMs": result.step.total_seconds() * 1000, "issueT": axis.chart_ms(result.issue_times),
        "observedT": axis.chart_ms(observations.times) if observations is not None else [],
        "thresholdLabels": list(result.thresholds.labels) if result.thresholds is not None else [],
        "skill": [_map_colours(result, skill[:, k], model[:, k], persistence[:, k]) for k in range(len(leads))],
        "sortColumn": f"skill_{default}", "stations": hindcast_page_series(result, discharge, observations),
        "map": _map_columns(result, skill[:, default], model[:, default], persistence[:, default]),
    }
    thresholds = result.thresholds.for_stations(result.stations) if result.thresholds is not None else None
    for s, entry in enumerate(data["stations"]):
        entry.update({"station": result.stations[s], "name": _name(result, s),
                      "nse": {name: [None if not np.isfinite(v) else round(float(v), 3)
                                     for v in _nse_of(scores, name)[s]]
                              for name in ("model", "persistence", "climatology")}})
        if thresholds is not None:
            entry["thresholds"] = rounded(discharge.primary(thresholds.values[s], s))
    level = reliability_level(result)
    if observed is not None and result.quantiles is not None and result.quantile_levels is not None:
        values = pit(result.quantiles, result.quantile_levels, observed)  # [issue, station, lead]
        data["pit"] = [pit_counts(values[:, :, k]).tolist() for k in range(len(leads))]
        charts["pit"] = pit_histogram(data["pit"][default])
        if level is not None:
            label = result.thresholds.label(level) if result.thresholds is not None else level
            data["reliabilityLevel"] = f"the {label}" if label != level else f"the {level} threshold"
            charts["reliability"] = reliability_diagram(_reliability(result, observed, leads, level))
        else:
            notes.append("The hindcast has no thresholds: no reliability diagram.")
    elif result.quantiles is not None:
        notes.append("No data file was given (--data): no reliability diagram, PIT histogram or observed flows.")
    elif result.quantiles is None:
        notes.append("This model is deterministic: no reliability diagram or PIT histogram.")
    if observations is None and result.quantiles is None:
        notes.append("No data file was given (--data): the hydrographs show the hindcast without observations.")
    rows = [_table_row(result, s, skill, model, persistence, default) for s in range(len(result.stations))]
    return Page(kind="verification", title=f"Hindcast verification, {period}",
                map_title="Skill against persistence (NSE-based) of the selected lead", header=header, notes=notes,
                data=data, charts=charts, legend=[(colour, text) for _, text, colour in SKILL_CLASSES] +
                [(NOT_SCORED, "not scored")], states=[], rows=rows,
                columns=[TableColumn("name", "station", "text"), TableColumn("station", "id", "text"),
                         TableColumn("area", "area (km²)", "number"),
                         *[column for k, text in enumerate(leads) for column in (
                             TableColumn(f"nse_{k}", f"NSE, {text}", "number", lead=k),
                             TableColumn(f"persistence_{k}", f"persistence, {text}", "number", lead=k),
                             TableColumn(f"skill_{k}", f"skill, {text}", "number", lead=k))]],
                summary=_summary(scores, leads), lead_choices=[(k, text) for k, text in enumerate(leads)])


def _nse_of(scores: HindcastScores, name: str) -> np.ndarray:
    return scores.nse[scores.of(name)] if name in scores.forecasts else np.full(scores.nse.shape[1:], np.nan)


def _name(result: ForecastResult, s: int) -> str:
    return result.station_names[s] if result.station_names is not None else ""


def _class(value: float) -> tuple[str, str]:
    if not np.isfinite(value):
        return NOT_SCORED, "not scored"
    return next((colour, text) for lowest, text, colour in SKILL_CLASSES if value >= lowest)


def _map_colours(result: ForecastResult, skill: np.ndarray, model: np.ndarray,
                 persistence: np.ndarray) -> dict[str, list]:
    summary = [f"NSE {model[s]:.2f}, persistence {persistence[s]:.2f}, skill {skill[s]:+.2f}"
               if np.isfinite(skill[s]) else "not scored" for s in range(len(result.stations))]
    return {"colour": [_class(value)[0] for value in skill], "summary": summary}


def _map_columns(result: ForecastResult, skill: np.ndarray, model: np.ndarray, persistence: np.ndarray) -> dict:
    lons = result.lons if result.lons is not None else np.full(len(result.stations), np.nan)
    lats = result.lats if result.lats is not None else np.full(len(result.stations), np.nan)
    x, y = web_mercator(lons, lats)
    colours = _map_colours(result, skill, model, persistence)
    return {"x": list(x), "y": list(y), "colour": colours["colour"], "marker": ["circle"] * len(result.stations),
            "line": ["#000000"] * len(result.stations), "station": list(result.stations),
            "name": [_name(result, s) or station for s, station in enumerate(result.stations)],
            "summary": colours["summary"]}


def _table_row(result: ForecastResult, s: int, skill: np.ndarray, model: np.ndarray, persistence: np.ndarray,
               default: int) -> dict[str, Any]:
    def cell(value: float) -> tuple[str, float | None]:
        return (f"{value:.2f}", float(value)) if np.isfinite(value) else ("-", None)

    area = float(result.area_km2[s]) if result.area_km2 is not None else float("nan")
    cells: dict[str, tuple[str, Any]] = {"name": (_name(result, s) or "-", _name(result, s).lower()),
                                         "station": (result.stations[s], result.stations[s]),
                                         "area": (f"{area:,.0f}", area) if np.isfinite(area) else ("-", None)}
    for k in range(len(result.leads)):
        cells[f"nse_{k}"], cells[f"persistence_{k}"], cells[f"skill_{k}"] = (
            cell(model[s, k]), cell(persistence[s, k]), cell(skill[s, k]))
    return {"index": s, "colour": _class(skill[s, default])[0], "state": "forecast", "cells": cells}


def _summary(scores: HindcastScores, leads: list[str]) -> dict[str, list]:
    """The per-lead table ``hydroseq forecast`` prints for a hindcast (median and mean NSE over stations)."""
    names = scores.forecasts
    columns = ["lead", "stations", *[f"{name}: median / mean NSE" for name in names], "model: median KGE",
               "model beats persistence"]
    rows = []
    for row, text in zip(scores.summary(), leads, strict=True):
        beats = f"{row.beats_persistence[0]} of {row.beats_persistence[1]}" if row.beats_persistence else "-"
        rows.append([text.removeprefix("lead "), str(row.stations),
                     *[f"{row.median_nse[name]:.3f} / {row.mean_nse[name]:.3f}" for name in names],
                     f"{row.median_kge:.3f}", beats])
    return {"columns": columns, "rows": rows}


def _observed_at_valid_times(result: ForecastResult, observations: Observations) -> np.ndarray:
    """The observation ``[issue, station, lead]`` at each forecast's valid time (NaN where there is none)."""
    position = {time: t for t, time in enumerate(observations.times.astype("datetime64[ns]"))}
    valid = result.valid_times
    index = np.vectorize(lambda time: position.get(np.datetime64(time, "ns"), -1))(valid)  # [issue, lead]
    values = np.where(index[:, None, :] >= 0, observations.values[:, np.maximum(index, 0)].transpose(1, 0, 2), np.nan)
    return values.astype(np.float64)


def reliability_level(result: ForecastResult) -> str | None:
    """The threshold whose reliability the page draws: :data:`RELIABILITY_LEVEL` (what ``hydroseq forecast``'s
    figure draws) where the forecast has it, else its first threshold; None without thresholds."""
    if result.thresholds is None or result.exceedance is None or not result.thresholds.levels:
        return None
    return RELIABILITY_LEVEL if RELIABILITY_LEVEL in result.thresholds.levels else result.thresholds.levels[0]


def _reliability(result: ForecastResult, observed: np.ndarray, leads: list[str],
                 level: str) -> dict[str, dict[str, list]]:
    """Per lead, the reliability of the probability of exceeding the threshold ``level``."""
    assert result.thresholds is not None and result.exceedance is not None
    k_level = result.thresholds.levels.index(level)
    threshold = result.thresholds.for_stations(result.stations).values[:, k_level]
    curves = {}
    for k, text in enumerate(leads):
        probability = result.exceedance[:, :, k, k_level].astype(np.float64)
        event = np.where(np.isfinite(observed[:, :, k]), observed[:, :, k] > threshold[None, :], np.nan)
        table = reliability_table(probability, event)
        filled = table[table["count"] > 0]
        curves[text] = {"forecast": rounded(filled["mean_forecast"].to_numpy()),
                        "observed": rounded(filled["observed_frequency"].to_numpy()),
                        "count": filled["count"].astype(int).tolist()}
    return curves
