"""How the forecast page dates its forecast and names the weather-forecast run behind it.

A forecast is named by the local day it is issued at the end of, as ``hydroseq forecast --issue-time 2014-09-30``,
its file names (``forecast_2014-09-30.nc``) and the daily job name it; on a sub-daily grid by the local clock time
of the issue step. The grid label (the UTC end of the step, ``2014-10-01 08:00 UTC``) is given beside it, never
instead of it. The zone and day convention are the forecast file's grid attributes
(:class:`~hydroseq.report.timeaxis.TimeAxis`).
"""

from __future__ import annotations

import numpy as np

from hydroseq.forecast.result import ForecastResult
from hydroseq.report.timeaxis import TimeAxis, age_text, utc_text


def forecast_title(axis: TimeAxis, issue: np.datetime64) -> str:
    """``Streamflow forecast of 2014-09-30 (local standard time, UTC-08:00)``: the date ``hydroseq forecast`` takes;
    on a sub-daily grid the local end of the issue step, ``... of 2005-06-20 06:00 (local standard time, UTC+01:00)``.
    """
    return f"Streamflow forecast of {axis.text(issue)} ({axis.clock_name(issue)})"


def issued_text(axis: TimeAxis, issue: np.datetime64) -> str:
    """The header's issue line: when in local time, the grid's zone and day boundary, and the UTC grid label."""
    zone = f"the grid's zone {axis.grid.timezone}"
    if axis.daily:
        boundary = axis.grid.day_boundary.strftime("%H:%M")
        days = "" if boundary == "00:00" else f", local days starting {boundary}"
        return (f"at the end of {axis.text(issue)} ({axis.clock_name(issue)}; {zone}{days}), "
                f"the grid label {utc_text(issue)}")
    return f"{axis.text(issue)} ({axis.clock_name(issue)}; {zone}), the grid label {utc_text(issue)}"


def weather_run_text(result: ForecastResult) -> str | None:
    """Which weather-forecast run drove the forecast of ``result`` (one issue time): its reference time (UTC), its
    age at the issue time, its members, and how many stations read it, an older run or none; None for a model
    without ingested weather-forecast inputs (the file has no ``forecast_input_age``)."""
    if result.forecast_input_age_hours is None:
        return None
    issue = result.issue_times[0]
    ages = np.asarray(result.forecast_input_age_hours[0], dtype=np.float64)
    forecast = np.array([station not in result.skipped for station in result.stations])
    known = ages[forecast & np.isfinite(ages)]
    members = result.attributes.get("weather_ensemble_members", "")
    kind = f"{members}-member ensemble" if members and int(members) > 1 else "deterministic"
    if not known.size:
        return f"none read: every station was forecast without a weather forecast ({kind} inputs)"
    hours, counts = np.unique(np.round(known, 6), return_counts=True)
    newest = float(hours.min())  # the run most stations read is the newest one any read, unless it is late for all
    main = float(hours[np.argmax(counts)])
    reference = issue - np.timedelta64(round(main * 3600), "s")
    text = (f"{kind} run of {utc_text(reference)}, {age_text(main)} old at the issue time; read by "
            f"{int(counts.max())} of {int(forecast.sum())} stations forecast")
    older = int(np.sum(known > main))
    if older:
        text += f", {older} read an older run (up to {age_text(float(hours.max()))} old)"
    newer = int(np.sum(known < main))
    if newer:
        text += f", {newer} a newer one ({age_text(newest)} old)"
    without = int(np.sum(forecast & ~np.isfinite(ages)))
    if without:
        text += f", {without} none (forecast without a weather forecast)"
    return text
