"""The forecast as a flat CSV table: the long table of :mod:`hydroseq.forecast.table`, as text."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from hydroseq.fileio import atomic_path
from hydroseq.forecast.result import ForecastResult
from hydroseq.forecast.table import KEY_COLUMNS, forecast_table

CSV_COLUMNS = KEY_COLUMNS  # the columns every forecast CSV starts with


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
    table = forecast_table(result)
    cells = [_as_text(table[column].to_numpy()) for column in table.columns]
    with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(table.columns)
        writer.writerows(zip(*cells, strict=True))
    return path


def _as_text(values: np.ndarray) -> list[str]:
    """A column as the CSV writes it: times as :func:`format_time`, floats as :func:`format_value`, the rest as
    they print."""
    if values.dtype.kind == "M":
        return [f"{text}Z" for text in np.datetime_as_string(values.astype("datetime64[s]"))]
    if values.dtype.kind == "f":
        return [format_value(value) for value in values]
    return [str(value) for value in values]
