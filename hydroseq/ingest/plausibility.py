"""Plausibility of observed values: finite, and within the variable's ``valid_min .. valid_max``.

A value that is infinite or outside its bounds is *implausible*. NaN stays what it is, missing.
The source's ``on_implausible`` decides: ``fail`` raises an error naming the file, the line or
timestamp, the variable and the value; ``mark_missing`` sets the value missing and counts it (the
count per station and variable goes into the ingest report).

The bounds are ingest's plausible ranges (:mod:`hydroseq.config.plausible_ranges`, which the forecast and the
served model apply too): the defaults of the variable's kind in the source units, or ``valid_min`` /
``valid_max`` in the config. Quantities of the depth kinds that can be negative (evaporation with dew or
condensation) need ``valid_min`` in the config.
"""

from __future__ import annotations

import numpy as np

from hydroseq.config.ingest import SourceConfig
from hydroseq.config.plausible_ranges import DEFAULT_BOUNDS, bounds
from hydroseq.config.variables import VariableSpec
from hydroseq.errors import InputDataError
from hydroseq.ingest.readers.base import RawSeries

__all__ = ["DEFAULT_BOUNDS", "bounds", "screen"]


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
