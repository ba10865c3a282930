"""The forecast as a flat CSV table: ``station,issue_time,lead,valid_time,value`` and optional columns."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from hydroseq.config.units import to_m3s
from hydroseq.fileio import atomic_path
from hydroseq.forecast.discharge import m3s_column
from hydroseq.forecast.result import OBSERVATION_AGE_COLUMN, STALE_COLUMN, ForecastResult, member_column, quantile_label

CSV_COLUMNS = ("station", "issue_time", "lead", "valid_time", "value")
UNGAUGED_COLUMN = "ungauged"
FALLBACK_COLUMN = "forecast_input_fallback"
STATION_COLUMNS = ("station_name", "area_km2")  # the last columns, where the forecast file knows them


def format_time(value: np.datetime64) -> str:
    """ISO 8601 in UTC with a ``Z``, to the second: ``2014-09-30T05:00:00Z``."""
    return f"{np.datetime_as_string(value.astype('datetime64[s]'))}Z"


def format_value(value: float) -> str:
    """The shortest text that reads back as the same float32; empty for NaN."""
    number = np.float32(value)
    return "" if np.isnan(number) else np.format_float_positional(number, unique=True, trim="-")


def write_forecast_csv(result: ForecastResult, path: str | Path) -> Path:
    """Write one row per issue time, station and lead, atomically.

    ``lead`` is in grid steps; times are UTC interval ends. Rows where the station could not be
    forecast at that issue time are left out (they are listed in the run's report instead). Models
    that read the observed target add ``observation_age_hours`` (how late the gauge was) and
    ``ungauged`` (1: no observation in the data file up to the issue time, else 0); models
    with ingested weather-forecast inputs add ``forecast_input_age_hours`` (how old the oldest product read
    was); models with weather-forecast inputs add ``forecast_input_fallback``, the inputs (``;``-separated)
    the model read "no forecast" for at that issue time (empty: it read a forecast of every one).
    Models with a predictive distribution add one column per quantile level after ``value`` (the
    median): ``value_q05``, ..., ``value_q95``, and after them the probability of exceeding each
    flood threshold, ``p_exceed_<level>`` (e.g. ``p_exceed_2-year``). An ensemble adds each member's
    point forecast, ``value_member0``, ``value_member1``, ... (the member spread). Then, when the target
    is a discharge as a depth rate (given the stations' ``area_km2``) or in m³/s, the same values in m³/s:
    ``value_m3s``, ``value_q05_m3s``, ..., ``value_member0_m3s``, ... (:mod:`hydroseq.forecast.discharge`;
    empty for a station without an area). A forecast made with a ``max_observation_age`` adds
    ``stale_gauge`` (1: the station's newest observation is older than that, ``result.stale``; else 0).
    The rows end with the station's ``station_name`` and ``area_km2`` (km²), when the result has them.
    """
    path = Path(path)
    valid_times = result.valid_times
    ages = result.observation_age_hours
    ungauged = set(result.ungauged)
    product_ages = result.forecast_input_age_hours
    levels = result.quantile_levels or ()
    threshold_levels = result.thresholds.levels if result.thresholds is not None else ()
    members = result.members
    read, inputs = result.forecast_input_read, result.forecast_inputs
    value_columns = ("value", *tuple(f"value_{quantile_label(level)}" for level in levels))
    member_columns = tuple(member_column(member) for member in range(members.shape[-1] if members is not None else 0))
    in_m3s = _in_m3s(result)
    names, areas = result.station_names, None if result.area_km2 is None else np.asarray(result.area_km2, np.float64)
    columns = (CSV_COLUMNS + value_columns[1:] + tuple(f"p_exceed_{level}" for level in threshold_levels)
               + member_columns
               + (tuple(m3s_column(name) for name in value_columns + member_columns) if in_m3s is not None else ())
               + ((OBSERVATION_AGE_COLUMN, UNGAUGED_COLUMN) if ages is not None else ())
               + (("forecast_input_age_hours",) if product_ages is not None else ())
               + ((FALLBACK_COLUMN,) if read is not None else ())
               + ((STALE_COLUMN,) if result.max_observation_age_hours is not None else ())
               + tuple(name for name, known in zip(STATION_COLUMNS, (names, areas), strict=True) if known is not None))
    with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(columns)
        for i, issue in enumerate(result.issue_times):
            issue_text = format_time(issue)
            for s, station in enumerate(result.stations):
                if np.isnan(result.values[i, s]).all():
                    continue
                age: tuple[str, ...] = () if ages is None else (format_value(ages[i, s]), str(int(station in ungauged)))
                age += () if product_ages is None else (format_value(product_ages[i, s]),)
                age += () if read is None else (";".join(name for k, name in enumerate(inputs) if not read[i, s, k]),)
                age += () if result.max_observation_age_hours is None else (str(int(station in result.stale)),)
                age += () if names is None else (names[s],)
                age += () if areas is None else (format_value(areas[s]),)
                for k, lead in enumerate(result.leads):
                    spread = (() if result.quantiles is None
                              else tuple(format_value(value) for value in result.quantiles[i, s, k]))
                    if result.exceedance is not None:
                        spread += tuple(format_value(value) for value in result.exceedance[i, s, k])
                    if members is not None:
                        spread += tuple(format_value(value) for value in members[i, s, k])
                    if in_m3s is not None:
                        spread += tuple(format_value(value) for value in in_m3s[i, s, k])
                    writer.writerow((station, issue_text, int(lead), format_time(valid_times[i, k]),
                                     format_value(result.values[i, s, k]), *spread, *age))
    return path


def _in_m3s(result: ForecastResult) -> np.ndarray | None:
    """``[issue, station, lead, column]`` in m³/s: the value, the quantiles and the members; None without."""
    parts = [result.values[..., None]]
    parts += [result.quantiles] if result.quantiles is not None else []
    parts += [result.members] if result.members is not None else []
    return to_m3s(np.concatenate(parts, axis=-1), result.units, result.step, result.area_km2, station_axis=1)
