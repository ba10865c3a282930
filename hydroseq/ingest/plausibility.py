"""Plausibility of observed values: finite, and within the variable's ``valid_min .. valid_max``.

A value that is infinite or outside its bounds is *implausible*. NaN stays what it is, missing.
The source's ``on_implausible`` decides: ``fail`` raises an error naming the file, the line or
timestamp, the variable and the value; ``mark_missing`` sets the value missing and counts it (the
count per station and variable goes into the ingest report).

Default bounds by kind, in the canonical unit of the kind (converted to the source units for the
check); ``valid_min`` / ``valid_max`` in the config, in the source units, replace them side by side:

==============  ============================  ==========  ==================================
kind            canonical unit                default     why
==============  ============================  ==========  ==================================
depth           mm per source step            0 .. 5000   above any recorded multi-day total
depth_rate      mm/d                          0 .. 50000  ~2000 mm/h, above any 1-minute burst
volume_rate     m3/s                          0 .. 1e6    the Amazon's floods are ~3.5e5
temperature     degC                          -90 .. 60   records -89.2 (Vostok), 56.7 degC
other           (unchanged)                   ±1e30       finite, and float32 after aggregation
==============  ============================  ==========  ==================================

Quantities of the depth kinds that can be negative (evaporation with dew or condensation) need
``valid_min`` in the config.
"""

from __future__ import annotations

import numpy as np

import hydroseq.ingest.units as units
from hydroseq.config.ingest import SourceConfig
from hydroseq.config.variables import VariableSpec
from hydroseq.errors import InputDataError
from hydroseq.ingest.readers.base import RawSeries

DEFAULT_BOUNDS: dict[str, tuple[float, float]] = {
    "depth": (0.0, 5_000.0),
    "depth_rate": (0.0, 50_000.0),
    "volume_rate": (0.0, 1e6),
    "temperature": (-90.0, 60.0),
    "other": (-1e30, 1e30),
}


def bounds(spec: VariableSpec) -> tuple[float, float]:
    """``(valid_min, valid_max)`` of ``spec`` in its source units: the configured ones, else the
    defaults of its kind."""
    low, high = DEFAULT_BOUNDS[spec.kind]
    low = spec.valid_min if spec.valid_min is not None else units.from_canonical_rate(low, spec)
    high = spec.valid_max if spec.valid_max is not None else units.from_canonical_rate(high, spec)
    return low, high


def screen(series: RawSeries, source: SourceConfig) -> tuple[RawSeries, dict[str, int]]:
    """``series`` with implausible values set missing, and their count per variable.

    Raises
    ------
    InputDataError
        With ``on_implausible: fail``, for the first implausible value (file, line or timestamp,
        variable, value and bounds).
    """
    counts: dict[str, int] = {}
    values: dict[str, np.ndarray] = {}
    for name, spec in source.variables.items():
        raw = series.values[name]
        low, high = bounds(spec)
        with np.errstate(invalid="ignore"):
            bad = np.isinf(raw) | (raw < low) | (raw > high)
        if bad.any() and source.on_implausible == "fail":
            first = int(np.argmax(bad))
            raise InputDataError(series.path, f"variable {name} ({spec.source}): {_why(raw[first], low, high, spec)}"
                                 " (set valid_min/valid_max of the variable, or on_implausible: "
                                 "mark_missing)", series.where(first))
        counts[name] = int(bad.sum())
        values[name] = np.where(bad, np.nan, raw) if bad.any() else raw
    return RawSeries(series.path, series.stamps, values, series.lines, series.utc_offsets), counts


def _why(value: float, low: float, high: float, spec: VariableSpec) -> str:
    unit = "" if spec.kind == "other" else f" {spec.units}"
    if not np.isfinite(value):
        return f"value {value} is not finite"
    if value < low:
        return f"value {value:g}{unit} is below valid_min {low:g}{unit}"
    return f"value {value:g}{unit} is above valid_max {high:g}{unit}"
