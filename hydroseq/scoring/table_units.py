"""The units of a station table's numbers (thresholds, rating curves): named in the column's header, converted to
the forecast's.

A table names the units of each number column in its header, in square brackets after the column's name:
``discharge [m3/s]``, ``discharge [mm/d]``, ``stage [m]``. Any unit the units library reads is accepted
(:mod:`hydroseq.config.units`: ``m3/s``, ``m3 s-1``, ``ft3/s``, ``cfs``, ``l/s``, ``mm/d``, ``mm h-1``, ...; stages
``m``, ``cm``, ``ft``). A column without units is refused, as is a separate ``units`` column (it used to be
ignored): a number whose units are guessed is the hazard this rule removes.

A discharge becomes the forecast target's units (:class:`TargetUnits`, usually ``mm d-1``) through the library's
factors and, between a volume rate and a depth rate over the catchment, the station's area:
``Q[mm/d] = Q[m³/s] · 86400 / (area[km²] · 1e6) · 1000 = Q[m³/s] · 86.4 / area[km²]``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from hydroseq.config.units import UnknownUnits, to_canonical_factor, unit_kind
from hydroseq.errors import InputDataError

UNITS_COLUMN = "units"  # refused: the units go in the header
EXAMPLE_HEADERS = "discharge [m3/s], discharge [ft3/s] or discharge [mm/d]"
_HEADER = re.compile(r"^(?P<name>[^\[\]]*?)\s*\[(?P<units>[^\[\]]*)\]$")
_MM_D_PER_M3S_KM2 = 86.4  # 1 m³/s over 1 km² is 86.4 mm/d
_RATES = ("depth_rate", "volume_rate")


def split_header(column: str) -> tuple[str, str]:
    """``"discharge [m3/s]"`` -> ``("discharge", "m3/s")``; ``"discharge"`` -> ``("discharge", "")``."""
    match = _HEADER.match(column.strip())
    if match is None:
        return column.strip(), ""
    return match.group("name").strip(), match.group("units").strip()


@dataclass(frozen=True)
class TargetUnits:
    """What a forecast compares thresholds with: the target's units, the grid step (for an amount per step) and
    each station's catchment area in km² (NaN or absent: unknown)."""

    units: str
    step: pd.Timedelta
    area_km2: Mapping[str, float]

    @classmethod
    def of(cls, units: str, step: pd.Timedelta, station_ids: Sequence[str],
           areas: np.ndarray | Sequence[float] | None) -> TargetUnits:
        """The target units of a data file: its ``units``, ``step``, and ``areas`` in the order of ``station_ids``."""
        known = {} if areas is None else {station: float(area) for station, area in zip(station_ids, areas,
                                                                                          strict=True)}
        return cls(units, step, known)


def column_units(path: Path, units: Mapping[str, str], column: str, kinds: Sequence[str]) -> str:
    """The units the header of ``column`` names (``units``: column -> units, as :func:`split_header` splits them).

    Raises
    ------
    InputDataError
        Naming the file and line 1: the table has a ``units`` column, or the column names no units, units the
        library cannot read, or units of another quantity than ``kinds`` (``depth_rate``, ``volume_rate``: a
        discharge; ``depth``: a stage, a length).
    """
    example = EXAMPLE_HEADERS if column == "discharge" else f"{column} [m] or {column} [ft]"
    if UNITS_COLUMN in units:
        raise InputDataError(path, f"has a {UNITS_COLUMN!r} column, which is not read: write the units in the header "
                                   "of each number column instead, e.g. discharge [m3/s] or stage [m]", "line 1")
    text = units.get(column, "")
    if not text:
        raise InputDataError(path, f"the {column} column does not name its units: write them in its header, "
                                   f"e.g. {example}", "line 1")
    try:
        kind = unit_kind(text)
    except UnknownUnits as error:
        raise InputDataError(path, f"{column} [{text}]: {error}", "line 1") from None
    if kind not in kinds:
        wanted = ("a discharge: a volume rate (m3/s, ft3/s, l/s) or a depth rate over the catchment (mm/d, mm/h)"
                  if "volume_rate" in kinds else "a length (m, cm, ft)")
        raise InputDataError(path, f"{column} [{text}]: these units are not {wanted}", "line 1")
    return text


def length_factor(from_units: str, to_units: str) -> float:
    """``f`` with ``value[to_units] = value[from_units] · f`` for two lengths (stages)."""
    return to_canonical_factor(from_units) / to_canonical_factor(to_units)


def to_target(value: float, units: str, station: str, target: TargetUnits, path: Path, line: int) -> float:
    """A discharge ``value`` in ``units`` (a checked rate, :func:`column_units`) at ``station``, in the target's units.

    Raises
    ------
    InputDataError
        Naming the file and line: the conversion goes between a volume and a depth rate and the station has no
        catchment area, or the target's units are no discharge.
    """
    kind, target_kind = unit_kind(units), _target_kind(target, path)
    canonical = value * to_canonical_factor(units)  # mm/d or m³/s
    per_step = target.step / pd.Timedelta(days=1) if target_kind == "depth" else 1.0  # an amount per grid step
    if kind == target_kind:
        return canonical / to_canonical_factor(target.units)
    if kind == "depth_rate":
        if target_kind == "depth":
            return canonical * per_step / to_canonical_factor(target.units)
        return canonical * _area(station, units, target, path, line) / _MM_D_PER_M3S_KM2 / to_canonical_factor(
            target.units)
    mm_per_day = canonical * _MM_D_PER_M3S_KM2 / _area(station, units, target, path, line)
    return mm_per_day * per_step / to_canonical_factor(target.units)


def _area(station: str, units: str, target: TargetUnits, path: Path, line: int) -> float:
    """The station's catchment area (km²), or an :class:`InputDataError` naming the line."""
    area = target.area_km2.get(station, math.nan)
    if not (math.isfinite(area) and area > 0):
        raise InputDataError(path, f"station {station}: a discharge in {units} is compared with forecasts in "
                                   f"{target.units} through the catchment area, and the data file has no area_km2 "
                                   "for the station", f"line {line}")
    return area


def _target_kind(target: TargetUnits, path: Path) -> str:
    try:
        kind = unit_kind(target.units)
    except UnknownUnits:
        kind = None
    if kind not in (*_RATES, "depth"):
        raise InputDataError(path, f"the forecast's target is in {target.units!r}, not a discharge: a table of "
                                   "discharges cannot be compared with it")
    assert kind is not None
    return kind
