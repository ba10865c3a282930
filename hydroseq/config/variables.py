"""Variables of a source: the units the ingest converts, and how one variable is read and aggregated.

Shared by observation sources (:mod:`hydroseq.config.ingest`) and forecast sources
(:mod:`hydroseq.config.forecast_source`).
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, model_validator

from hydroseq.config.base import StrictModel
from hydroseq.config.units import EXAMPLES, UnknownUnits, unit_kind

Aggregation = Literal["sum", "mean", "min", "max"]

# Source units are read by the units library (hydroseq.config.units): kind "depth" is an amount accumulated
# over the source step, "depth_rate" a precipitation/evaporation/runoff rate, "volume_rate" a discharge.
OUTPUT_UNITS: dict[str, tuple[str, ...]] = {
    "depth": ("mm",),
    "depth_rate": ("mm", "mm/d", "mm/h", "m3/s"),
    "volume_rate": ("m3/s", "mm/d", "mm/h", "mm"),
    "temperature": ("degC", "K"),
}
DEFAULT_OUTPUT_UNITS = {"depth": "mm", "depth_rate": "mm/d", "volume_rate": "m3/s", "temperature": "degC"}


class VariableSpec(StrictModel):
    """How one output variable is read from a source and aggregated onto the grid.

    ``units`` must be a unit of water (an amount, a rate, a discharge) or a temperature that the units
    library reads (:mod:`hydroseq.config.units`: ``mm/d``, ``inch/d``, ``m3/s``, ``ft3/s``, ``cfs``,
    ``degF``, ...) unless ``convert`` is false, in which case the values and their unit string pass
    through unchanged (wind speed, pressure, ...).
    """

    source: str = Field(description="column or NetCDF variable name in the source (CAMELS forcing: "
                                    "lower-cased column-name prefix, e.g. 'prcp')")
    units: str = Field(description=f"units of the source values, as UDUNITS-2 reads them or cfs ({EXAMPLES})")
    aggregation: Aggregation = "mean"
    output_units: str | None = Field(None, description="default: mm for amounts, mm/d for rates, "
                                                       "m3/s for discharge, degC for temperature")
    convert: bool = True
    min_coverage: float | None = Field(None, ge=0.0, le=1.0, description="overrides the source's")
    valid_min: float | None = Field(None, description="smallest plausible value, in the source units "
                                    "(default by kind, see hydroseq.ingest.plausibility)")
    valid_max: float | None = Field(None, description="largest plausible value, in the source units")
    long_name: str | None = None
    standard_name: str | None = None

    @model_validator(mode="after")
    def _units_known(self) -> VariableSpec:
        for name in ("valid_min", "valid_max"):
            bound = getattr(self, name)
            if bound is not None and not math.isfinite(bound):
                raise ValueError(f"{name} must be a finite number, got {bound}")
        if self.valid_min is not None and self.valid_max is not None and self.valid_min > self.valid_max:
            raise ValueError(f"valid_min {self.valid_min} is above valid_max {self.valid_max}")
        if not self.convert:
            return self
        try:
            kind = unit_kind(self.units)
        except UnknownUnits as error:
            raise ValueError(f"{error} (or set convert: false to pass values through)") from None
        if kind is None:
            raise ValueError(f"units {self.units!r} are not an amount, a rate or a discharge of water, nor a "
                             "temperature: the ingest cannot convert them (set convert: false to pass values through)")
        if self.output_units is not None and self.output_units not in OUTPUT_UNITS[kind]:
            raise ValueError(f"cannot convert {self.units!r} to {self.output_units!r}; "
                             f"possible: {', '.join(OUTPUT_UNITS[kind])}")
        if kind == "depth" and self.aggregation != "sum":
            raise ValueError(f"{self.units!r} is an amount per step: aggregation must be 'sum'")
        if kind in ("volume_rate", "temperature") and self.aggregation == "sum":
            raise ValueError(f"summing {self.units!r} values has no physical meaning: use mean, min or max")
        return self

    @property
    def kind(self) -> str:
        """``depth``, ``depth_rate``, ``volume_rate``, ``temperature`` or ``other``."""
        return (unit_kind(self.units) or "other") if self.convert else "other"

    @property
    def resolved_output_units(self) -> str:
        """The units written to the output file."""
        if self.kind == "other":
            return self.output_units or self.units
        if self.output_units:
            return self.output_units
        if self.kind == "depth_rate" and self.aggregation == "sum":
            return "mm"
        return DEFAULT_OUTPUT_UNITS[self.kind]
