"""The forecast page of one issue time: header, station map, sortable table, click-through hydrograph."""

from __future__ import annotations

from typing import Any

import numpy as np

from hydroseq.forecast.hindcast import HindcastScores
from hydroseq.forecast.result import ForecastResult, lead_text
from hydroseq.report.charts import hydrograph, station_map, web_mercator
from hydroseq.report.content import Page, TableColumn, model_text, percent, quantity
from hydroseq.report.inputs import Observations
from hydroseq.report.issue_text import forecast_title, issued_text, weather_run_text
from hydroseq.report.outlook import outlook, threshold_heading, thresholds_note
from hydroseq.report.series import forecast_page_series
from hydroseq.report.stations import RISK_CLASSES, STATES, StationRow, peak_legend, station_rows
from hydroseq.report.timeaxis import TimeAxis, age_text
from hydroseq.report.units import Discharge

HISTORY_DAYS = 60  # observed days before the issue time on the hydrograph


def forecast_page(result: ForecastResult, axis: TimeAxis, observations: Observations | None,
                  previous: ForecastResult | None, scores: HindcastScores | None,
                  scores_period: str | None) -> Page:
    """Everything the forecast page shows of ``result`` (one issue time)."""
    issue = result.issue_times[0]
    discharge = Discharge(result.units, result.step, result.area_km2)
    rows = station_rows(result, discharge, observations)
    probabilistic = result.exceedance is not None
    levels = result.thresholds.labels if result.thresholds is not None else ()  # what a person reads
    flood = result.thresholds.flood if result.thresholds is not None else ()
    offset = axis.utc_offset(issue)
    header = [("issued", issued_text(axis, issue)), ("model", model_text(result.attributes)),
              ("newest observation", _newest_text(rows, axis, issue)),
              ("stations", _counts_text(result, rows)),
              ("leads", ", ".join(lead_text(int(lead), result.step).removeprefix("lead ") for lead in result.leads))]
    run = weather_run_text(result)
    if run is not None:
        header.insert(2, ("weather forecast", run))
    notes = _notes(result, rows, observations, previous, scores_period, axis)
    series = forecast_page_series(result, discharge, observations, previous, scores)
    for row, entry in zip(rows, series, strict=True):
        entry.update({"station": row.station, "name": row.name, "state": row.state, "note": row.note})
    data: dict[str, Any] = {
        "kind": "forecast", "issueMs": axis.boundary_ms(issue), "stepMs": result.step.total_seconds() * 1000,
        "leadText": [lead_text(int(lead), result.step) for lead in result.leads],
        "thresholdLabels": list(levels),
        "thresholdConfidence": result.thresholds.confidence if result.thresholds is not None else None,
        "observedT": axis.chart_ms(observations.times[observations.times <= issue]) if observations else [],
        "forecastT": axis.chart_ms(result.valid_times[0]),
        "previousT": axis.chart_ms(previous.valid_times[0]) if previous is not None else [],
        "skillPeriod": scores_period or "", "stations": series,
        "sortColumn": "risk" if probabilistic else "peak_depth",
    }
    data["map"] = _map_columns(rows)
    charts = {"map": station_map(), "hydrograph": hydrograph(axis.boundary_ms(issue), f"local time ({offset})")}
    first_lead, last_lead = (data["leadText"][k].removeprefix("lead ") for k in (0, -1))
    map_title = (f"Highest probability of exceeding a flood threshold, leads {first_lead} to {last_lead}"
                 if probabilistic else f"Forecast peak as a depth rate, leads {first_lead} to {last_lead}")
    legend = ([(colour, text) for _, text, colour in RISK_CLASSES] if probabilistic
              else [(colour, text) for text, colour, _ in peak_legend(discharge.depth_unit)])
    return Page(kind="forecast", title=forecast_title(axis, issue), map_title=map_title, header=header,
                headline=f"Outlook: {outlook(rows, probabilistic, discharge.depth_unit)}", notes=notes,
                data=data, charts=charts,
                legend=legend, states=[(marker, text) for marker, text in STATES.values()],
                columns=_columns(levels, flood, probabilistic, discharge.depth_unit),
                rows=[_table_row(row, levels, axis, discharge) for row in rows])


def _newest_text(rows: list[StationRow], axis: TimeAxis, issue: np.datetime64) -> str:
    times = [row.newest_observation for row in rows if not np.isnat(row.newest_observation)]
    if not times:
        return "none up to the issue time"
    newest = max(times)
    hours = float((issue - newest) / np.timedelta64(1, "h"))
    return f"{axis.text(newest)} ({age_text(hours)} before the issue time, the newest of any station)"


def _counts_text(result: ForecastResult, rows: list[StationRow]) -> str:
    states = [row.state for row in rows]
    stale = (f"{states.count('stale')} stale (no observation for more than {result.max_observation_age_hours:g} h)"
             if result.max_observation_age_hours is not None else "stale gauges not checked")
    return (f"{len(rows) - states.count('skipped')} of {len(rows)} forecast, {states.count('skipped')} not "
            f"forecast, {stale}, {states.count('ungauged')} ungauged")


def _notes(result: ForecastResult, rows: list[StationRow], observations: Observations | None,
           previous: ForecastResult | None, scores_period: str | None, axis: TimeAxis) -> list[str]:
    notes = []
    if result.quantiles is None and result.members is None:
        notes.append("This model is deterministic: each station has one forecast, drawn without uncertainty bands, "
                     "and no threshold probabilities; the map is coloured by the forecast peak.")
    elif result.quantiles is None:
        notes.append("This ensemble has no quantiles: the hydrograph draws each member.")
    if result.thresholds is not None:
        notes.append(thresholds_note(result.thresholds.source, result.thresholds.labels, result.thresholds.flood))
    if observations is None:
        notes.append("No data file was given (--data): the hydrographs show the forecast without observations.")
    if previous is not None:
        notes.append(f"The previous forecast (of {axis.text(previous.issue_times[0])}) is drawn dash-dotted.")
        if previous.attributes.get("model_run_id") != result.attributes.get("model_run_id"):
            notes.append(f"The previous forecast comes from another model: {model_text(previous.attributes)}.")
    if scores_period is not None:
        notes.append(f"Skill per station: NSE of the model and of persistence over the hindcast {scores_period}.")
    unmapped = sum(1 for row in rows if not (np.isfinite(row.lat) and np.isfinite(row.lon)))
    if unmapped:
        notes.append(f"{unmapped} stations have no position in the forecast file and are listed in the table only.")
    return notes


def _map_columns(rows: list[StationRow]) -> dict[str, list]:
    x, y = web_mercator(np.array([row.lon for row in rows]), np.array([row.lat for row in rows]))
    summary = []
    for row in rows:
        text = row.note or STATES[row.state][1]
        if row.probabilities:
            text = f"flood: {percent(row.highest_probability)} highest probability; {text}"
        elif np.isfinite(row.peak):
            text = f"peak {quantity(row.peak, row.unit)}; {text}"
        summary.append(text)
    return {"x": list(x), "y": list(y), "colour": [row.colour for row in rows],
            "marker": [STATES[row.state][0] for row in rows],
            "line": ["#000000" if row.state != "skipped" else "#616161" for row in rows],
            "station": [row.station for row in rows], "name": [row.name or row.station for row in rows],
            "summary": summary}


def _columns(levels: tuple[str, ...], flood: tuple[bool, ...], probabilistic: bool,
             depth_unit: str) -> list[TableColumn]:
    columns = [TableColumn("name", "station", "text"), TableColumn("station", "id", "text"),
               TableColumn("area", "area (km²)", "number"), TableColumn("newest", "newest observation", "text"),
               TableColumn("age", "its age", "number"), TableColumn("peak", "forecast peak", "number"),
               TableColumn("peak_depth", f"peak ({depth_unit})", "number")]
    if probabilistic:
        columns.append(TableColumn("risk", "highest flood probability", "number"))
        columns += [TableColumn(f"p_{k}", threshold_heading(level, is_flood), "number")
                    for k, (level, is_flood) in enumerate(zip(levels, flood, strict=True))]
    return [*columns, TableColumn("state", "state", "text")]


def _table_row(row: StationRow, levels: tuple[str, ...], axis: TimeAxis, discharge: Discharge) -> dict[str, Any]:
    """``{column: (shown text, sort value)}`` plus the row's station index and colour."""
    cells: dict[str, tuple[str, Any]] = {
        "name": (row.name or "-", row.name.lower()), "station": (row.station, row.station),
        "area": (f"{row.area_km2:,.0f}" if np.isfinite(row.area_km2) else "-", _number(row.area_km2)),
        "newest": (axis.text(row.newest_observation), _number(row.observation_age_hours)),
        "age": (age_text(row.observation_age_hours), _number(row.observation_age_hours)),
        "peak": (f"{quantity(row.peak, row.unit)}, {lead_text(row.peak_lead, discharge.step)}"
                 if np.isfinite(row.peak) else "-", _number(row.peak)),
        "peak_depth": (f"{row.peak_depth:.3g}" if np.isfinite(row.peak_depth) else "-", _number(row.peak_depth)),
        "risk": (percent(row.highest_probability), _number(row.highest_probability)),
        "state": (STATES[row.state][1] if not row.note else row.note, row.state),
    }
    for k in range(len(levels)):
        probability = row.probabilities[k] if k < len(row.probabilities) else float("nan")
        cells[f"p_{k}"] = (percent(probability), _number(probability))
    return {"index": row.index, "colour": row.colour, "state": row.state, "cells": cells}


def _number(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None
