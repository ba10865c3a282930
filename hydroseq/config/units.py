"""Unit strings through the UDUNITS-2 library (``cf-units``, the units library of the CF conventions).

A source's ``units`` may be any unit UDUNITS-2 reads (``mm``, ``mm/d``, ``mm d-1``, ``inch/d``,
``m3/s``, ``ft3/s``, ``l/s``, ``kg m-2 s-1``, ``degC``, ``K``, ``degF``, ...) or one of the hydrology
spellings it lacks (:data:`ALIASES`: ``cfs``, ``cms``, ``cumecs``). What quantity it measures is its
*kind* (:func:`unit_kind`), found by what it converts to:

* ``depth``: an amount of water per source step, a length (``mm``, ``m``, ``inch``) or a mass of liquid
  water per area (``kg m-2``, 1 kg m-2 = 1 mm);
* ``depth_rate``: a length or a mass per area per time (``mm/d``, ``mm h-1``, ``m/s``, ``inch/d``,
  ``kg m-2 s-1``), precipitation, evaporation or a discharge as a depth over the catchment;
* ``volume_rate``: a discharge (``m3/s``, ``ft3/s``, ``cfs``, ``l/s``);
* ``temperature`` (``degC``, ``K``, ``degF``).

The ingest converts each kind to its canonical unit (:data:`CANONICAL`) with the factor the library
gives (:func:`to_canonical_factor`), and between depth and volume rates through the catchment area
(:mod:`hydroseq.ingest.units`). The library is imported when a unit is first read.

:func:`to_m3s` turns a discharge as a depth rate over the catchment (the unit ingest writes for it:
``mm d-1``, ``mm h-1``, ``mm`` per grid step) into m³/s through the area, without the library (the
forecast stage and the served model do not need it): ``Q[m³/s] = Q[mm/d] · area[km²] · 1000 / 86400``.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pandas as pd

# Spellings hydrologists use that UDUNITS-2 does not know (it reads "cfs" as nothing, "cms" as nothing)
ALIASES = {"cfs": "ft3 s-1", "CFS": "ft3 s-1", "cms": "m3 s-1", "CMS": "m3 s-1", "cumecs": "m3 s-1"}
CANONICAL = {"depth": "mm", "depth_rate": "mm d-1", "volume_rate": "m3 s-1", "temperature": "degC"}
# Each kind by the units it converts to; a mass of liquid water per area converts as its depth (1 kg m-2 = 1 mm).
_KINDS = (("temperature", "K", 1.0), ("depth", "mm", 1.0), ("depth", "kg m-2", 1.0),
          ("depth_rate", "mm d-1", 1.0), ("depth_rate", "kg m-2 d-1", 1.0), ("volume_rate", "m3 s-1", 1.0))
EXAMPLES = "mm, mm/d, mm h-1, inch/d, kg m-2 s-1, m3/s, ft3/s, cfs, l/s, degC, K, degF"


class UnknownUnits(ValueError):
    """A unit string the library cannot read."""


def _library() -> Any:
    """``cf_units.Unit`` (imported on first use: reading a config that converts nothing needs no library)."""
    import cf_units  # type: ignore[import-untyped]  # no type information

    return cf_units.Unit


@cache
def parse(text: str) -> Any:
    """The unit ``text`` names (:data:`ALIASES` first). Raises :class:`UnknownUnits`."""
    spelled = ALIASES.get(text.strip(), text.strip())
    if not spelled:
        raise UnknownUnits("empty units")
    try:
        unit = _library()(spelled)
    except ValueError:
        raise UnknownUnits(f"unknown units {text!r}: not a UDUNITS-2 unit (e.g. {EXAMPLES})") from None
    if unit.is_unknown() or unit.is_no_unit():
        raise UnknownUnits(f"unknown units {text!r}: not a UDUNITS-2 unit (e.g. {EXAMPLES})")
    return unit


@cache
def unit_kind(text: str) -> str | None:
    """``depth``, ``depth_rate``, ``volume_rate`` or ``temperature``; None for a unit of another quantity
    (``W m-2``, ``1``). Raises :class:`UnknownUnits` for a string the library cannot read."""
    unit = parse(text)
    for kind, reference, _ in _KINDS:
        if unit.is_convertible(_library()(reference)):
            return kind
    return None


@cache
def to_canonical_factor(text: str) -> float:
    """``f`` with ``value[canonical unit of the kind] = value[text] * f``, to 15 significant digits (so that
    ``ft3/s`` gives 0.028316846592 and ``inch/d`` 25.4, not one unit in the last place off). Not for
    temperatures (their scales have offsets: :func:`celsius`)."""
    unit = parse(text)
    for kind, reference, water in _KINDS:
        if kind != "temperature" and unit.is_convertible(_library()(reference)):
            factor = float(unit.convert(1.0, _library()(reference))) * water
            return float(f"{factor:.15g}")
    raise ValueError(f"units {text!r} are not an amount, a rate or a discharge of water")


@cache
def _celsius_line(text: str) -> tuple[float, float]:
    """``(slope, offset)`` of ``degC = value * slope + offset`` for temperatures in ``text``."""
    unit, celsius_unit = parse(text), _library()("degC")
    offset = float(unit.convert(0.0, celsius_unit))
    slope = float(unit.convert(1.0, celsius_unit)) - offset
    return float(f"{slope:.15g}"), float(f"{offset:.15g}")


def celsius(values: np.ndarray, text: str) -> np.ndarray:
    """Temperatures in ``text`` (``K``, ``degF``, ``degC``) in degrees Celsius."""
    slope, offset = _celsius_line(text)
    if slope == 1.0:  # degC, K: only the offset (K - 273.15 exactly)
        return values + offset if offset else values
    return values * slope + offset


def from_celsius(value: float, text: str) -> float:
    """A temperature in degrees Celsius in ``text``; the inverse of :func:`celsius`."""
    slope, offset = _celsius_line(text)
    return (value - offset) / slope


def same_units(first: str, second: str) -> bool:
    """Both strings name the same unit (``m s**-1`` and ``m/s``, ``kg m^-2`` and ``kg m-2``)."""
    try:
        return bool(parse(first) == parse(second))
    except UnknownUnits:
        return False


M3S_UNITS = "m3 s-1"
M3S_STANDARD_NAME = "water_volume_transport_in_river_channel"
# seconds per unit time of each depth-rate spelling ingest writes ("mm" per grid step: see m3s_per_mm_km2)
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
