"""Unit conversion: source units -> a canonical unit per kind -> the output unit.

Canonical units: ``mm`` per source step (amounts), ``mm/d`` (depth rates), ``m3/s`` (discharge),
``degC``. Source units go to them through the units library (:mod:`hydroseq.config.units`: ``cfs``,
``ft3/s``, ``l/s``, ``inch/d``, ``kg m-2 s-1``, ``degF``, ...). Depth and volume rates are converted into
each other through the catchment area: ``Q[mm/d] = Q[m3/s] * 86400 / (area[km2] * 1e6) * 1000``.

The ingest converts its sources with these (:mod:`hydroseq.ingest.units` names them there); they lie on the
ground floor so that the forecast stage and the served model's logging carry ingest's plausibility bounds onto
the grid (:mod:`hydroseq.config.plausible_ranges`) without importing the ingest stage.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from hydroseq.config.units import celsius, from_celsius, to_canonical_factor
from hydroseq.config.variables import VariableSpec

_CF_UNITS = {"mm": "mm", "mm/d": "mm d-1", "mm/h": "mm h-1", "m3/s": "m3 s-1", "degC": "degC", "K": "K"}


class AreaMissing(ValueError):
    """A conversion between depth and volume needs the catchment area, which is unknown."""


def to_canonical(values: np.ndarray, spec: VariableSpec, source_step: pd.Timedelta | None) -> np.ndarray:
    """Source values in the canonical unit of their kind.

    A depth rate that is to be summed becomes the amount (mm) over its source step.
    """
    kind = spec.kind
    if kind == "other":
        return values
    if kind == "temperature":
        return celsius(values, spec.units)
    converted = values * to_canonical_factor(spec.units)
    if kind == "depth_rate" and spec.aggregation == "sum":
        assert source_step is not None
        converted = converted * (source_step / pd.Timedelta(days=1))
    return converted


def from_canonical_rate(value: float, spec: VariableSpec) -> float:
    """A value in the canonical unit of ``spec``'s kind (``mm/d`` for every depth rate, summed or
    not) in ``spec.units``; the inverse of :func:`to_canonical` without the summing step."""
    kind = spec.kind
    if kind == "other":
        return value
    if kind == "temperature":
        return from_celsius(value, spec.units)
    return value / to_canonical_factor(spec.units)


def to_output(values: np.ndarray, spec: VariableSpec, grid_step: pd.Timedelta, area_km2: float) -> np.ndarray:
    """Aggregated canonical values in ``spec.resolved_output_units``.

    Raises :class:`AreaMissing` when a depth/volume conversion meets an unknown area.
    """
    kind, target = spec.kind, spec.resolved_output_units
    if kind == "other" or (kind == "depth_rate" and spec.aggregation == "sum") or kind == "depth":
        return values
    if kind == "temperature":
        return values + 273.15 if target == "K" else values
    mm_per_day = values if kind == "depth_rate" else None
    if kind == "volume_rate":
        if target == "m3/s":
            return values
        mm_per_day = values * 86_400.0 / _area_m2(area_km2, spec) * 1000.0
    assert mm_per_day is not None
    if target == "mm/d":
        return mm_per_day
    if target == "mm/h":
        return mm_per_day / 24.0
    if target == "mm":
        return mm_per_day * (grid_step / pd.Timedelta(days=1))
    return mm_per_day / 1000.0 * _area_m2(area_km2, spec) / 86_400.0  # m3/s


def cf_units(spec: VariableSpec) -> str:
    """The CF spelling of the output unit (``mm d-1``, ``m3 s-1``)."""
    units = spec.resolved_output_units
    return _CF_UNITS.get(units, units)


def _area_m2(area_km2: float, spec: VariableSpec) -> float:
    if not (isinstance(area_km2, float) and math.isfinite(area_km2) and area_km2 > 0):
        known = "missing" if isinstance(area_km2, float) and math.isnan(area_km2) else repr(area_km2)
        raise AreaMissing(f"converting {spec.units} to {spec.resolved_output_units} needs the catchment area, "
                          f"but the station's area_km2 is {known} (give it in the station table)")
    return area_km2 * 1e6
