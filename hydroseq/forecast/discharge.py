"""The forecast discharge as a volume rate (m³/s) beside the depth rate the models forecast (mm/d, mm/h).

A discharge given as a depth over the catchment becomes a volume rate through the catchment area:
``Q[m³/s] = Q[mm/d] · area[km²] · 1000 / 86400`` (mm to m: 1e-3, km² to m²: 1e6, a day: 86400 s); mm/h
divides by 3600, and ``mm`` (an amount per grid step) by the grid step in seconds. A target already in
m³/s is returned as it is. The units read are those ingest writes for a discharge (``mm d-1``, ``mm h-1``,
``mm s-1``, ``mm``, ``m3 s-1``, and their ``mm/d`` spellings): this module needs no units library, so
the forecast stage and the served model stay free of one.

The served model adds the same columns as the forecast CSV with :func:`add_m3s_columns`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

M3S_SUFFIX = "_m3s"  # value -> value_m3s, value_q05 -> value_q05_m3s, streamflow -> streamflow_m3s
M3S_UNITS = "m3 s-1"
M3S_STANDARD_NAME = "water_volume_transport_in_river_channel"
M3S_LABEL = "discharge (m³/s)"
# depth per second of each depth-rate spelling ("mm" per grid step: see seconds_per_unit)
_PER_SECONDS = {"mm s-1": 1.0, "mm/s": 1.0, "mm h-1": 3600.0, "mm/h": 3600.0, "mm hr-1": 3600.0,
                "mm d-1": 86400.0, "mm/d": 86400.0, "mm day-1": 86400.0, "mm/day": 86400.0}
_VOLUME_RATES = frozenset({"m3 s-1", "m3/s", "m^3/s", "m**3 s**-1"})


def is_volume_rate(units: str) -> bool:
    """``units`` is m³/s already."""
    return units.strip() in _VOLUME_RATES


def m3s_per_mm_km2(units: str, step: pd.Timedelta) -> float | None:
    """The factor ``f`` of ``Q[m³/s] = value · area[km²] · f`` for a depth rate in ``units`` on a grid of
    ``step`` (``mm`` is an amount per grid step); None for units that are no depth rate of water."""
    text = units.strip()
    seconds = step.total_seconds() if text == "mm" else _PER_SECONDS.get(text)
    if seconds is None or seconds <= 0:
        return None
    return 1000.0 / seconds  # mm -> m (1e-3) times km2 -> m2 (1e6), per second


def can_convert(units: str, step: pd.Timedelta) -> bool:
    """Values in ``units`` have an m³/s counterpart (given a catchment area for a depth rate)."""
    return is_volume_rate(units) or m3s_per_mm_km2(units, step) is not None


def to_m3s(values: np.ndarray, units: str, step: pd.Timedelta, area_km2: np.ndarray | float | None,
           station_axis: int = 0) -> np.ndarray | None:
    """``values`` (in ``units``) as float32 m³/s; ``area_km2`` per station along ``station_axis``.

    NaN where the area is missing or not positive; None when ``units`` have no m³/s counterpart or a
    depth rate comes without any area.
    """
    data = np.asarray(values, dtype=np.float64)
    if is_volume_rate(units):
        return data.astype(np.float32)
    factor = m3s_per_mm_km2(units, step)
    if factor is None or area_km2 is None:
        return None
    area = np.asarray(area_km2, dtype=np.float64)
    area = np.where(np.isfinite(area) & (area > 0), area, np.nan)
    if area.ndim == 1:
        area = area.reshape((-1,) + (1,) * (data.ndim - station_axis - 1))
    return (data * area * factor).astype(np.float32)


def m3s_column(column: str) -> str:
    """``value_q05`` -> ``value_q05_m3s``: the name of a column's counterpart in m³/s."""
    return f"{column}{M3S_SUFFIX}"


def add_m3s_columns(table: pd.DataFrame, units: str, step: pd.Timedelta, area_km2: Mapping[str, float],
                    columns: list[str] | None = None) -> pd.DataFrame:
    """``table`` (one row per station and lead, a ``station`` column) with a ``<column>_m3s`` beside each of
    ``columns`` (default: ``value`` and every ``value_q..`` and ``value_member..``), as the forecast CSV has.

    ``area_km2`` maps station ids to catchment areas (km²; a station not in it gets NaN for a depth rate).
    Without an m³/s counterpart of ``units`` the table is returned unchanged. The new columns follow the
    last of ``columns``.
    """
    if columns is None:
        columns = [name for name in table.columns
                   if name == "value" or (name.startswith("value_") and not name.endswith(M3S_SUFFIX))]
    if not columns or not can_convert(units, step):
        return table
    area = table["station"].astype(str).map(lambda station: area_km2.get(station, np.nan)).to_numpy(np.float64)
    converted = {m3s_column(name): to_m3s(table[name].to_numpy(np.float64), units, step, area) for name in columns}
    out = table.copy()
    position = list(out.columns).index(columns[-1]) + 1
    for offset, (name, values) in enumerate(converted.items()):
        out.insert(position + offset, name, values)
    return out
