"""The units a page draws a station's discharge in: m³/s where the area allows, the depth rate on a second axis.

Conversions are those of the forecast files (:func:`hydroseq.config.units.to_m3s`), so a value on the page
is the value of the forecast CSV.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from hydroseq.config.units import is_volume_rate, m3s_per_mm_km2, to_m3s

M3S = "m³/s"
_SPELLED = {"mm d-1": "mm/d", "mm day-1": "mm/d", "mm/day": "mm/d", "mm h-1": "mm/h", "mm hr-1": "mm/h",
            "mm s-1": "mm/s", "m3 s-1": M3S, "m3/s": M3S, "m^3/s": M3S, "m**3 s**-1": M3S}


def spelled(units: str) -> str:
    """``mm d-1`` as ``mm/d``, ``m3 s-1`` as ``m³/s``: units as a page writes them."""
    return _SPELLED.get(units.strip(), units.strip())


@dataclass(frozen=True)
class Discharge:
    """A forecast's discharge units and the stations' areas: what each station is drawn in."""

    units: str
    step: pd.Timedelta
    area_km2: np.ndarray | None

    def m3s_factor(self, s: int) -> float:
        """m³/s per unit of the target at station ``s``; NaN where there is no conversion (no area)."""
        area = None if self.area_km2 is None else self.area_km2[s]
        converted = to_m3s(np.ones(1), self.units, self.step, area)
        return float(converted[0]) if converted is not None else float("nan")

    @property
    def depth_unit(self) -> str:
        """The depth rate a deterministic model's map is coloured in (the target's own, else mm/d)."""
        return "mm/d" if is_volume_rate(self.units) else spelled(self.units)

    def unit_of(self, s: int) -> str:
        """``m³/s``, or the target's units where station ``s`` has no conversion."""
        return M3S if np.isfinite(self.m3s_factor(s)) else spelled(self.units)

    def primary(self, values: np.ndarray, s: int) -> np.ndarray:
        """``values`` of station ``s`` in :meth:`unit_of`: float32 values as float64, converted as the forecast
        CSV converts them (so that they print as its numbers)."""
        area = None if self.area_km2 is None else self.area_km2[s]
        converted = to_m3s(values, self.units, self.step, area) if np.isfinite(self.m3s_factor(s)) else None
        return np.asarray(values if converted is None else converted, dtype=np.float32).astype(np.float64)

    def second_axis(self, s: int) -> tuple[str, float] | None:
        """``(unit, factor)`` of the depth-rate axis beside the m³/s one (value there = factor · m³/s); None
        where station ``s`` is drawn in its target units only."""
        factor = self.m3s_factor(s)
        if not np.isfinite(factor) or factor <= 0:
            return None
        if not is_volume_rate(self.units):
            return spelled(self.units), 1.0 / factor
        per_mm_day = m3s_per_mm_km2("mm d-1", self.step)
        area = float(self.area_km2[s]) if self.area_km2 is not None else float("nan")
        if per_mm_day is None or not np.isfinite(area) or area <= 0:
            return None
        return "mm/d", 1.0 / (area * per_mm_day)

    def depth_rates(self, values: np.ndarray) -> np.ndarray | None:
        """``values [station, ...]`` as the depth rate :attr:`depth_unit` names; None where there is none."""
        if not is_volume_rate(self.units):
            return np.asarray(values, dtype=np.float64)
        per_mm_day = m3s_per_mm_km2("mm d-1", self.step)
        if self.area_km2 is None or per_mm_day is None:
            return None
        area = np.where(self.area_km2 > 0, self.area_km2, np.nan).reshape((-1,) + (1,) * (np.ndim(values) - 1))
        return np.asarray(values, dtype=np.float64) / (area * per_mm_day)
