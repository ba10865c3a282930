"""Signatures of the observed and the forecast flows per station: the table evaluation and hindcasts write.

For each station and forecast, every signature of :mod:`hydroseq.scoring.signatures` of the
observed series and of the forecast series, both on the steps where both are known (as the
metrics are), and the forecast's error. The runoff ratio and the streamflow elasticity need the
precipitation in the unit of the flow (evaluation and hindcasts take
:meth:`hydroseq.dataset.StationData.runoff_precipitation`); without it they are empty. The times
are the local starts of the steps (:meth:`hydroseq.grid.GridSpec.step_starts`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from hydroseq.scoring.signatures import SIGNATURES, UNITS, all_signatures

TABLE_COLUMNS = ("station", "forecast", "signature", "unit", "observed", "simulated", "error", "relative_error")
# Signatures whose reference is far from zero wherever a river flows: their error reads as a percent of it. The
# others can be 0 or near it at a station (a share of zero-flow days, a count of low-flow days, a low flow, a date, a
# slope, an elasticity), where a percent error explodes (0.0001 of the days at zero flow forecast as 0.0218: +21700 %):
# a summary gives their error as a difference in their own unit.
RELATIVE_SIGNATURES = ("q95", "q_mean", "runoff_ratio")


def signature_table(observed: np.ndarray, forecasts: Mapping[str, np.ndarray], times: pd.DatetimeIndex,
                    stations: Sequence[str], precipitation: np.ndarray | None = None,
                    flow_units: str = "") -> pd.DataFrame:
    """Signatures of ``observed`` and of each forecast, per station, with the forecast's error.

    Parameters
    ----------
    observed
        ``[station, time]`` observed flow (NaN where missing).
    forecasts
        ``{name: [station, time]}`` forecast flows on the same steps (NaN where none).
    times
        The local start of each step (:meth:`hydroseq.grid.GridSpec.step_starts`).
    stations
        The station ids, in the order of the first axis.
    precipitation
        ``[station, time]`` precipitation in the unit of the flow, or None (the runoff ratio and
        elasticity are then NaN).
    flow_units
        The unit of the flow signatures' column ``unit`` (``q_mean``, ``q5``, ``q95``).

    Returns
    -------
    pandas.DataFrame
        :data:`TABLE_COLUMNS`: one row per station, forecast and signature; ``observed`` and
        ``simulated`` the signature of each series on the steps where both are finite, ``error``
        ``simulated - observed`` in the signature's unit, ``relative_error`` that in percent of
        ``|observed|`` (NaN when the observed value is 0 or either is NaN).
    """
    units = [flow_units if UNITS[name] == "flow" else UNITS[name] for name in SIGNATURES]
    rows: list[tuple[str, str, list[float], list[float]]] = []
    for s, station in enumerate(stations):
        rain = None if precipitation is None else precipitation[s]
        observed_by_steps: dict[bytes, list[float]] = {}  # the forecasts often share their steps
        for name, values in forecasts.items():
            both = np.isfinite(observed[s]) & np.isfinite(values[s])
            key = both.tobytes()
            if key not in observed_by_steps:
                observed_by_steps[key] = _in_order(all_signatures(np.where(both, observed[s], np.nan), times, rain))
            simulated = _in_order(all_signatures(np.where(both, values[s], np.nan), times, rain))
            rows.append((station, name, observed_by_steps[key], simulated))
    count = len(SIGNATURES)
    table = pd.DataFrame({"station": np.repeat([row[0] for row in rows], count),
                          "forecast": np.repeat([row[1] for row in rows], count),
                          "signature": np.tile(SIGNATURES, len(rows)), "unit": np.tile(units, len(rows)),
                          "observed": np.array([row[2] for row in rows], dtype=np.float64).reshape(-1),
                          "simulated": np.array([row[3] for row in rows], dtype=np.float64).reshape(-1)})
    table["error"] = table["simulated"] - table["observed"]
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = 100.0 * table["error"].to_numpy(np.float64) / np.abs(table["observed"].to_numpy(np.float64))
    table["relative_error"] = np.where(np.isfinite(relative), relative, math.nan)
    return table[list(TABLE_COLUMNS)]


def _in_order(signatures: Mapping[str, float]) -> list[float]:
    return [signatures[name] for name in SIGNATURES]


def summary_errors(table: pd.DataFrame) -> tuple[dict[str, float], dict[str, tuple[float, str]]]:
    """The median over stations of each signature's error, as a summary line gives it: ``({name: percent})`` for
    :data:`RELATIVE_SIGNATURES` (the median ``relative_error``) and ``({name: (difference, unit)})`` for the others
    (the median ``error``, the unit a difference is in: ``steps`` for the half-flow date); those not defined left out.
    """
    relative: dict[str, float] = {}
    absolute: dict[str, tuple[float, str]] = {}
    for name, rows in table.groupby("signature", sort=False):
        column = "relative_error" if name in RELATIVE_SIGNATURES else "error"
        value = float(rows[column].median())
        if not math.isfinite(value):
            continue
        if name in RELATIVE_SIGNATURES:
            relative[str(name)] = value
        else:
            unit = str(rows["unit"].iloc[0]) if "unit" in rows else ""
            absolute[str(name)] = (value, unit.replace(" after 1 Oct", ""))
    return relative, absolute


def median_errors(table: pd.DataFrame) -> dict[str, float]:
    """``{"median_<signature>_error": ...}``: the median over stations of each signature's error (NaN skipped)."""
    medians = table.groupby("signature", sort=False)["error"].median()
    return {f"median_{name}_error": float(medians.get(name, math.nan)) for name in SIGNATURES}
