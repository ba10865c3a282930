"""Which weather-forecast product each station's forecast read, and what happens where none was valid.

A product valid at the issue time must cover every lead the model reads (``1..forecast_horizon``): one that
holds values for some leads and none for others (a run shorter than the model's leads, a field missing for
some steps) is refused (:func:`check_lead_coverage`) rather than read as a shorter forecast. A run read
because the one due is late (``on_missing_product: use_previous``: its leads shift, missing beyond its last
step) is the exception: it is read, and flagged as late with the leads it covers. No product at all (every
lead missing) is the fallback the model was trained for (``forecast_hiding``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from hydroseq.dataset import StationData
from hydroseq.dataset.forecast_inputs import lead_span, partial_leads
from hydroseq.errors import InputDataError
from hydroseq.export.metadata import ExportMetadata
from hydroseq.grid.weather_products import RunSchedule, due_references

MissingForecastInput = Literal["fallback", "fail"]
PERFECT_LABEL = ("perfect: the observed values over the lead window, an upper bound on what a real weather "
                 "forecast can give; not an operational forecast")


@dataclass(frozen=True)
class ProductUse:
    """How a forecast run used its weather-forecast inputs, input by input.

    Attributes
    ----------
    inputs
        The model's weather-forecast inputs (variable names), in the order of the last axis below.
    read
        bool ``[issue, station, input]``: the model read a forecast of the input (a value at some
        lead); False where it read "no forecast" for it (the fallback, as trained with
        ``forecast_hiding``). None for a model without weather-forecast inputs.
    input_age_hours
        float32 ``[issue, station, input]``: hours from the reference time of the product the input
        was read from to the issue time; NaN where the input fell back, and for a perfect input
        (no product). None without ingested inputs.
    age_hours
        float32 ``[issue, station]``: the oldest of ``input_age_hours`` over the inputs read from a
        product (NaN where none was), or None.
    fallback
        ``{station: message}`` for stations forecast without some weather-forecast input at some
        issue time; the message names the inputs that fell back and those read.
    late
        ``{station: message}`` for stations that read, at the (last) issue time, an older run than
        the newest one due by then: the run due was late or missing (:mod:`hydroseq.grid.weather_products`).
    attributes
        Global attributes for the forecast files: the inputs, their sources and horizon.
    """

    inputs: tuple[str, ...] = ()
    read: np.ndarray | None = None
    input_age_hours: np.ndarray | None = None
    age_hours: np.ndarray | None = None
    fallback: dict[str, str] = field(default_factory=dict)
    late: dict[str, str] = field(default_factory=dict)
    attributes: dict[str, str] = field(default_factory=dict)


def product_use(metadata: ExportMetadata, data: StationData, ends: np.ndarray, references: dict[str, np.ndarray],
                on_missing: MissingForecastInput, path: Path,
                file_attributes: dict[str, str] | None = None,
                schedules: dict[str, tuple[pd.Timedelta, pd.Timedelta]] | None = None) -> ProductUse:
    """Per input, what the model read at the issue steps ``ends`` (indices into ``data``), the products'
    ages, fallbacks and attributes; ``file_attributes`` name a product file read at forecast time
    (``--forcing-forecast``), ``path`` the file errors name, ``schedules`` each ingested input's
    ``(latency, issue frequency)`` (runs older than the one due are reported as late).

    Raises
    ------
    InputDataError
        With ``on_missing="fail"``, naming the stations, the inputs and the issue time, when some
        station has, for some forecast input, no value for any lead at an issue time; whatever
        ``on_missing``, when a product covers only some of the model's leads (:func:`check_lead_coverage`).
    """
    specs = metadata.forecast_input_specs
    if not specs:
        return ProductUse()
    check_lead_coverage(metadata, data.forecast, data.times, ends, references, schedules or {}, data.station_ids,
                        path)
    attributes = {"forecast_inputs": json.dumps(metadata.forecast_inputs),
                  "forecast_input_horizon_steps": str(metadata.forecast_horizon), **(file_attributes or {})}
    if metadata.perfect_forecast_inputs:
        attributes["forecast_inputs_source"] = PERFECT_LABEL
    names = tuple(item.variable for item in specs)
    read = np.isfinite(data.forecast[:, ends]).any(axis=3).transpose(1, 0, 2)  # [issue, station, input]
    issues = data.times[ends]
    input_age, age = _ages(names, read, issues, references, ends)
    missing = [s for s in range(data.n_stations) if not read[:, s].all()]
    if missing and on_missing == "fail":
        first = missing[0]
        issue = int(np.flatnonzero(~read[:, first].all(axis=1))[0])
        absent = ", ".join(name for k, name in enumerate(names) if not read[issue, first, k])
        raise InputDataError(path, f"no weather forecast is valid at the issue time for {len(missing)} stations "
                                   f"(first: {data.station_ids[first]}, without {absent}); ingest the newest "
                                   "product or forecast with fallback", where=f"time {_label(issues[issue])}")
    kinds = tuple(item.source for item in specs)
    fallback = {data.station_ids[s]: _reason(names, kinds, read[:, s],
                                             None if input_age is None else input_age[:, s], issues)
                for s in missing}
    late = _late_runs(names, read, issues, references, ends, schedules or {}, data.station_ids,
                      np.isfinite(data.forecast[:, ends[-1]]))
    if late:
        attributes["late_weather_forecast_stations"] = json.dumps(late, sort_keys=True)
    return ProductUse(inputs=names, read=read, input_age_hours=input_age, age_hours=age, fallback=fallback,
                      late=late, attributes=attributes)


def check_lead_coverage(metadata: ExportMetadata, forecast: np.ndarray, times: np.ndarray, ends: np.ndarray,
                        references: dict[str, np.ndarray], schedules: dict[str, tuple[pd.Timedelta, pd.Timedelta]],
                        station_ids: tuple[str, ...], path: Path) -> None:
    """Refuse a weather forecast that covers only some of the model's leads at an issue step ``ends``.

    ``forecast`` is ``[station, time, input, lead]`` (:attr:`hydroseq.dataset.StationData.forecast`), ``times``
    its grid labels. An ingested input that holds a value at some lead and none at another is a run
    shorter than the model's leads (or a field missing for some steps): the model would read "no
    forecast" for those leads alone, a forecast that silently knows less than it says. The exception is a
    run older than the one due by the issue time (``references`` and ``schedules`` tell, as for the late-run
    report): its leads shift and end early by design, and it is flagged as late.

    Raises
    ------
    InputDataError
        Naming ``path``, the first issue time concerned, the input, the leads without a value, how many
        stations (the first of them) and the run read.
    """
    specs = metadata.forecast_input_specs
    finite = np.isfinite(forecast[:, ends])  # [station, issue, input, lead]
    partial = partial_leads(forecast[:, ends])  # [station, issue, input]
    issues = times[ends]
    for k, item in enumerate(specs):
        if item.source != "ingested" or not partial[:, :, k].any():
            continue
        bad = partial[:, :, k].copy()
        used = references.get(item.variable)
        if used is not None and item.variable in schedules:
            latency, frequency = schedules[item.variable]
            due = due_references(issues.astype("datetime64[ns]").view(np.int64), latency, frequency).view(
                "datetime64[ns]")
            bad &= ~(~np.isnat(used[:, ends]) & (used[:, ends] < due[None, :]))  # a late run: flagged, not refused
        if not bad.any():
            continue
        issue = int(np.flatnonzero(bad.any(axis=0))[0])
        stations = np.flatnonzero(bad[:, issue])
        first = int(stations[0])
        absent = np.flatnonzero(~finite[first, issue, k]) + 1
        run = ""
        if used is not None and not np.isnat(used[first, ends[issue]]):
            run = f", read from the run of {pd.Timestamp(used[first, ends[issue]]):%Y-%m-%dT%H:%M}Z"
        count = f"{len(stations)} of {len(station_ids)} stations (first {station_ids[first]}{run})"
        others = int(bad.any(axis=0).sum())
        when = f", at {others} of {len(issues)} issue times" if others > 1 else ""
        raise InputDataError(path, f"the weather forecast {item.variable} has no value at lead(s) {lead_span(absent)} "
                                   f"of the model's 1-{metadata.forecast_horizon} for {count}{when}: a product "
                                   "that does not cover every lead the model reads is refused rather than read as a "
                                   "shorter forecast; ingest one that covers them",
                             where=f"time {_label(issues[issue])}")


def _late_runs(names: tuple[str, ...], read: np.ndarray, issues: np.ndarray, references: dict[str, np.ndarray],
               ends: np.ndarray, schedules: dict[str, tuple[pd.Timedelta, pd.Timedelta]],
               station_ids: tuple[str, ...], last_leads: np.ndarray) -> dict[str, str]:
    """At the last issue time, the stations whose inputs read a run older than the one due (and, where that run
    ends before the model's last lead, the leads it covers: ``last_leads``, bool ``[station, input, lead]``)."""
    late: dict[str, list[str]] = {}
    issue = issues[-1]
    for k, name in enumerate(names):
        if name not in schedules or name not in references:
            continue
        latency, frequency = schedules[name]
        due = RunSchedule(frequency).run_due(pd.Timestamp(issue), latency)
        used = references[name][:, ends[-1]]
        for s, reference in enumerate(used):
            if np.isnat(reference) or not read[-1, s, k] or pd.Timestamp(reference) >= due:
                continue
            age = (pd.Timestamp(issue) - pd.Timestamp(reference)) / pd.Timedelta(hours=1)
            covered = np.flatnonzero(last_leads[s, k]) + 1
            short = (f", which covers lead(s) {lead_span(covered)} of 1-{last_leads.shape[-1]} only"
                     if len(covered) < last_leads.shape[-1] else "")
            late.setdefault(station_ids[s], []).append(
                f"{name}: the run of {due:%Y-%m-%dT%H:%M}Z was not in by the issue time; read the run of "
                f"{pd.Timestamp(reference):%Y-%m-%dT%H:%M}Z ({age:g} h old){short}")
    return {station: "; ".join(reasons) for station, reasons in late.items()}


def _ages(names: tuple[str, ...], read: np.ndarray, issues: np.ndarray, references: dict[str, np.ndarray],
          ends: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Per input ``[issue, station, input]`` and oldest over the inputs ``[issue, station]``: hours from the
    reference time of the product read to the issue time (NaN where the input fell back or has no product)."""
    if not references:
        return None, None
    ages = np.full(read.shape, np.nan, dtype=np.float32)
    for k, name in enumerate(names):
        if name not in references:
            continue
        reference = references[name][:, ends].T  # [issue, station]
        with np.errstate(invalid="ignore"):
            hours = (issues[:, None] - reference) / np.timedelta64(1, "h")
        ages[..., k] = np.where(np.isnat(reference) | ~read[..., k], np.nan, hours)
    none = np.isnan(ages).all(axis=2)
    oldest = np.where(np.isnan(ages), -np.inf, ages).max(axis=2)
    return ages, np.where(none, np.nan, oldest).astype(np.float32)


def _reason(names: tuple[str, ...], kinds: tuple[str, ...], read: np.ndarray, ages: np.ndarray | None,
            issues: np.ndarray) -> str:
    """Which inputs a station was forecast without (``read [issue, input]`` False) and what it read for the others."""
    without, others = [], []
    for k, name in enumerate(names):
        absent = np.flatnonzero(~read[:, k])
        if len(absent) and len(issues) == 1:
            without.append(name)
        elif len(absent):
            without.append(f"{name} at {len(absent)} of {len(issues)} issue times (first {_label(issues[absent[0]])})")
        elif kinds[k] == "perfect":
            others.append(f"{name} read as observed (perfect)")
        elif ages is not None and len(issues) == 1 and np.isfinite(ages[0, k]):
            others.append(f"{name} from the product, {ages[0, k]:g} h old")
        else:
            others.append(f"{name} from a product")
    when = f" (none valid at the issue time {_label(issues[0])})" if len(issues) == 1 else ""
    text = f"forecast without {', '.join(without)}{when}, read as 'no forecast'"
    return text + (f"; {', '.join(others)}" if others else "")


def _label(value: np.datetime64) -> str:
    return f"{pd.Timestamp(value).isoformat()}Z"
