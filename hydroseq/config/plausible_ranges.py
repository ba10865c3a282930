"""The plausible range of a value (ingest's): finite, and within its variable's ``valid_min .. valid_max``.

Ingest refuses (or sets missing) every source value outside it (:mod:`hydroseq.ingest.plausibility`); the
same ranges hold wherever values enter a forecast: ``hydroseq forecast`` and its hindcasts check the steps
they read (:mod:`hydroseq.dataset.plausible_values`), the served model the rows it receives, against the
bounds recorded when it was logged. The ranges are here, below the stages, so that the forecast stage uses
them without the ingest stage.

Default bounds by kind, in the canonical unit of the kind; ``valid_min`` / ``valid_max`` in the config, in the
source units, replace them side by side:

==============  ============================  ==========  ==================================
kind            canonical unit                default     why
==============  ============================  ==========  ==================================
depth           mm per source step            0 .. 5000   above any recorded multi-day total
depth_rate      mm/d                          0 .. 50000  ~2000 mm/h, above any 1-minute burst
volume_rate     m3/s                          0 .. 1e6    the Amazon's floods are ~3.5e5
temperature     degC                          -90 .. 60   records -89.2 (Vostok), 56.7 degC
other           (unchanged)                   ±1e30       finite, and float32 after aggregation
==============  ============================  ==========  ==================================

On the grid of an ingested file (:func:`grid_bounds`, :func:`written_bounds`) a bound is in the file's units,
and an amount per grid step (``mm``) may reach the larger of the depth bound and the depth-rate bound over the
step (50,000 mm on a daily grid: an amount over a step is a rate times the step).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import hydroseq.config.unit_conversion as conversion
from hydroseq.config.variables import VariableSpec

DEFAULT_BOUNDS: dict[str, tuple[float, float]] = {
    "depth": (0.0, 5_000.0),
    "depth_rate": (0.0, 50_000.0),
    "volume_rate": (0.0, 1e6),
    "temperature": (-90.0, 60.0),
    "other": (-1e30, 1e30),
}
ANY_VALUE = DEFAULT_BOUNDS["other"]  # a quantity of no known kind: finite, within float32
# the units ingest writes (its output units, as it spells them, and as a config names them), by kind
WRITTEN_KINDS = {"mm": "depth", "mm d-1": "depth_rate", "mm/d": "depth_rate", "mm h-1": "depth_rate",
                 "mm/h": "depth_rate", "m3 s-1": "volume_rate", "m3/s": "volume_rate", "degC": "temperature",
                 "K": "temperature"}
DAY = pd.Timedelta(days=1)


def bounds(spec: VariableSpec) -> tuple[float, float]:
    """``(valid_min, valid_max)`` of ``spec`` in its source units: the configured ones, else the
    defaults of its kind."""
    low, high = DEFAULT_BOUNDS[spec.kind]
    low = spec.valid_min if spec.valid_min is not None else conversion.from_canonical_rate(low, spec)
    high = spec.valid_max if spec.valid_max is not None else conversion.from_canonical_rate(high, spec)
    return low, high


def written_bounds(units: object, grid_step: pd.Timedelta) -> tuple[float, float]:
    """The default bounds of a variable on a grid of ``grid_step`` whose ``units`` attribute is ``units``, in
    those units: the kind's (:data:`WRITTEN_KINDS`; an amount per grid step as described in the module
    docstring); ±1e30 for units ingest does not write (a quantity passed through, a static attribute)."""
    kind = WRITTEN_KINDS.get(str(units).strip()) if units is not None else None
    if kind is None:
        return ANY_VALUE
    low, high = DEFAULT_BOUNDS[kind]
    text = str(units).strip()
    if kind == "depth":
        return low, max(high, DEFAULT_BOUNDS["depth_rate"][1] * (grid_step / DAY))
    if kind == "depth_rate" and text in ("mm h-1", "mm/h"):
        return low / 24.0, high / 24.0
    if kind == "temperature" and text == "K":
        return low + 273.15, high + 273.15
    return low, high


def grid_bounds(spec: VariableSpec, source_step: pd.Timedelta | None, grid_step: pd.Timedelta) -> tuple[float, float]:
    """Ingest's bounds of ``spec`` as bounds of its values on a grid of ``grid_step``, in the file's units.

    ``source_step`` is the source's step (None: not known, as for a forecast product). A bound is converted
    from the source's units to the file's; an amount summed over the source steps of one grid step gets the
    bound times their number. Where that depends on what is not known (a catchment area, the steps of a
    forecast product or of an irregular source), the bound keeps the sign of ingest's, and a side the config
    does not set is the default of the file's units on the grid (:func:`written_bounds`); a side it sets
    stays open (±1e30).
    """
    low, high = bounds(spec)
    summed = spec.aggregation == "sum"
    if summed and source_step is None:
        return _known_signs(spec, low, high, grid_step)
    try:
        canonical = conversion.to_canonical(np.array([low, high], dtype=np.float64), spec, source_step)
        if summed:
            assert source_step is not None
            count = max(1.0, grid_step / source_step)
            canonical = np.array([min(canonical[0], canonical[0] * count), max(canonical[1], canonical[1] * count)])
        converted = conversion.to_output(canonical, spec, grid_step, float("nan"))
    except conversion.AreaMissing:
        return _known_signs(spec, low, high, grid_step)
    return _rounded(float(np.min(converted))), _rounded(float(np.max(converted)))


def _known_signs(spec: VariableSpec, low: float, high: float, grid_step: pd.Timedelta) -> tuple[float, float]:
    """Where the conversion is not known: the signs of ingest's ``low`` and ``high``, each unset side the default
    of the file's units on the grid."""
    default_low, default_high = written_bounds(conversion.cf_units(spec), grid_step)
    signed_low = 0.0 if low >= 0 else ANY_VALUE[0]
    signed_high = ANY_VALUE[1] if high > 0 else 0.0
    return (signed_low if spec.valid_min is not None else max(signed_low, default_low),
            signed_high if spec.valid_max is not None else min(signed_high, default_high))


def _rounded(value: float) -> float:
    """``value`` to 12 significant digits (a converted 50000 stays 50000, not 49999.99999999999)."""
    return float(f"{value:.12g}")
