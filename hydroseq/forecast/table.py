"""The forecast as one long table, one row per issue time, station and lead: the column contract that the
forecast CSV (:mod:`hydroseq.forecast.writers.csv`) and the served model (:mod:`hydroseq.serving.pyfunc_model`)
both write.

Columns, in order, each group where the forecast has it: ``station``, ``issue_time``, ``lead`` (grid steps),
``valid_time``, ``value`` (the median of a quantile model); the quantiles ``value_q05`` ...; the probability of
exceeding each flood threshold ``p_exceed_<level>``; an ensemble's members ``value_member0`` ...; the same
values in m³/s ``value_m3s``, ``value_q05_m3s``, ..., ``value_member0_m3s`` ... (when the target converts); for
a model that reads the observed target ``observation_age_hours`` and ``ungauged``; with ingested weather-forecast
inputs ``forecast_input_age_hours``; with any weather-forecast input ``forecast_input_fallback``; with a maximum
observation age ``stale_gauge``; and the station's ``station_name`` and ``area_km2``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from hydroseq.config.units import to_m3s
from hydroseq.forecast.discharge import m3s_column
from hydroseq.forecast.result import OBSERVATION_AGE_COLUMN, STALE_COLUMN, ForecastResult, member_column, quantile_label

KEY_COLUMNS = ("station", "issue_time", "lead", "valid_time", "value")
EXCEEDANCE_PREFIX = "p_exceed_"  # p_exceed_2-year
UNGAUGED_COLUMN = "ungauged"
PRODUCT_AGE_COLUMN = "forecast_input_age_hours"
FALLBACK_COLUMN = "forecast_input_fallback"
NAME_COLUMN, AREA_COLUMN = "station_name", "area_km2"


def exceedance_column(level: str) -> str:
    """``p_exceed_2-year``: the column of the probability of exceeding threshold ``level``."""
    return f"{EXCEEDANCE_PREFIX}{level}"


def table_columns(levels: Sequence[float] = (), thresholds: Sequence[str] = (), members: int = 0,
                  in_m3s: bool = False, observation_age: bool = False, ungauged: bool = False,
                  product_age: bool = False, fallback: bool = False, stale: bool = False, names: bool = False,
                  areas: bool = False) -> list[str]:
    """The columns of a table with these groups, in the contract's order (see the module docstring)."""
    values = ["value", *(f"value_{quantile_label(level)}" for level in levels)]
    member_columns = [member_column(member) for member in range(members)]
    return [*KEY_COLUMNS, *values[1:], *(exceedance_column(level) for level in thresholds), *member_columns,
            *([m3s_column(name) for name in values + member_columns] if in_m3s else []),
            *([OBSERVATION_AGE_COLUMN] if observation_age else []), *([UNGAUGED_COLUMN] if ungauged else []),
            *([PRODUCT_AGE_COLUMN] if product_age else []), *([FALLBACK_COLUMN] if fallback else []),
            *([STALE_COLUMN] if stale else []), *([NAME_COLUMN] if names else []), *([AREA_COLUMN] if areas else [])]


def forecast_table(result: ForecastResult, every_station: bool = False, in_m3s: bool = True,
                   ungauged: bool = True) -> pd.DataFrame:
    """``result`` as the long table: rows issue time by issue time, station by station, lead by lead.

    A station not forecast at an issue time (NaN at every lead) has no rows there, unless ``every_station``.
    ``in_m3s`` and ``ungauged`` say whether those columns are wanted where the result allows them.
    """
    n_issues, n_stations, n_leads = result.values.shape
    issue, station, lead = (index.reshape(-1) for index in np.indices((n_issues, n_stations, n_leads)))
    converted = _in_m3s(result) if in_m3s else None
    columns: dict[str, object] = {
        "station": np.asarray(result.stations, dtype=object)[station], "issue_time": result.issue_times[issue],
        "lead": np.asarray(result.leads, dtype=np.int64)[lead], "valid_time": result.valid_times[issue, lead],
        "value": result.values[issue, station, lead]}
    for k, level in enumerate(result.quantile_levels or ()):
        columns[f"value_{quantile_label(level)}"] = result.quantiles[issue, station, lead, k]  # type: ignore[index]
    if result.exceedance is not None and result.thresholds is not None:
        for k, threshold in enumerate(result.thresholds.levels):
            columns[exceedance_column(threshold)] = result.exceedance[issue, station, lead, k]
    n_members = result.members.shape[-1] if result.members is not None else 0
    for member in range(n_members):
        columns[member_column(member)] = result.members[issue, station, lead, member]  # type: ignore[index]
    if converted is not None:
        names = ["value", *(f"value_{quantile_label(level)}" for level in result.quantile_levels or ()),
                 *(member_column(member) for member in range(n_members))]
        for k, name in enumerate(names):
            columns[m3s_column(name)] = converted[issue, station, lead, k]
    if result.observation_age_hours is not None:
        columns[OBSERVATION_AGE_COLUMN] = result.observation_age_hours[issue, station]
        if ungauged:
            columns[UNGAUGED_COLUMN] = np.isin(np.asarray(result.stations)[station], result.ungauged).astype(np.int64)
    if result.forecast_input_age_hours is not None:
        columns[PRODUCT_AGE_COLUMN] = result.forecast_input_age_hours[issue, station]
    if result.forecast_input_read is not None:
        fell_back = [";".join(name for k, name in enumerate(result.forecast_inputs) if not read[k])
                     for read in result.forecast_input_read.reshape(-1, len(result.forecast_inputs))]
        columns[FALLBACK_COLUMN] = np.asarray(fell_back, dtype=object).reshape(n_issues, n_stations)[issue, station]
    if result.max_observation_age_hours is not None:
        columns[STALE_COLUMN] = np.isin(np.asarray(result.stations)[station], list(result.stale)).astype(np.int64)
    if result.station_names is not None:
        columns[NAME_COLUMN] = np.asarray(result.station_names, dtype=object)[station]
    if result.area_km2 is not None:
        columns[AREA_COLUMN] = np.asarray(result.area_km2, dtype=np.float64)[station]
    table = pd.DataFrame(columns)
    if not every_station:
        table = table[np.repeat(np.isfinite(result.values).any(axis=2).reshape(-1), n_leads)]
    return table.reset_index(drop=True)


def _in_m3s(result: ForecastResult) -> np.ndarray | None:
    """``[issue, station, lead, column]`` in m³/s: the value, the quantiles and the members; None without."""
    parts = [result.values[..., None]]
    parts += [result.quantiles] if result.quantiles is not None else []
    parts += [result.members] if result.members is not None else []
    return to_m3s(np.concatenate(parts, axis=-1), result.units, result.step, result.area_km2, station_axis=1)
