"""The forecast discharge as a volume rate (m³/s) beside the depth rate the models forecast (mm/d, mm/h).

A discharge given as a depth over the catchment becomes a volume rate through the catchment area:
``Q[m³/s] = Q[mm/d] · area[km²] · 1000 / 86400`` (mm to m: 1e-3, km² to m²: 1e6, a day: 86400 s); mm/h
divides by 3600, and ``mm`` (an amount per grid step) by the grid step in seconds. A target already in
m³/s is returned as it is. The units read are those ingest writes for a discharge (``mm d-1``, ``mm h-1``,
``mm s-1``, ``mm``, ``m3 s-1``, and their ``mm/d`` spellings): the conversion
(:func:`hydroseq.config.units.to_m3s`) needs no units library, so the forecast stage and the served model
stay free of one.

The served model adds the same columns as the forecast CSV with :func:`add_m3s_columns`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from hydroseq.config.units import can_convert, to_m3s

M3S_SUFFIX = "_m3s"  # value -> value_m3s, value_q05 -> value_q05_m3s, streamflow -> streamflow_m3s
M3S_LABEL = "discharge (m³/s)"


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
