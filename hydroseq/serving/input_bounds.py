"""The plausibility bounds of a served model's inputs, in the ingested file's units (recorded when it is logged).

Ingest refuses, or sets missing, every value outside its variable's ``valid_min .. valid_max``
(:mod:`hydroseq.ingest.plausibility`: the configured bounds, else the defaults of the variable's
kind, in the source's units, for each source step). ``hydroseq forecast`` reads only what ingest let
through; the served (MLflow pyfunc) model reads rows from anywhere. :func:`input_bounds` carries
ingest's bounds onto the grid of the ingested file the model was trained on, in that file's units,
from the ingest config the file records, so that the served model refuses what ingest would have
refused (:mod:`hydroseq.serving.served_input`):

* a bound is converted from the source's units to the file's (``mm/h`` to ``mm/d``, ``K`` to ``degC``);
* an amount summed over the source steps of one grid step: the bound times their number;
* where the bound on the grid depends on what is not known when the model is logged (a catchment
  area, the steps of a weather-forecast product or of an irregular source), only the sign of
  ingest's bound is kept (a quantity ingest keeps at or above 0 must be at or above 0) and the
  other side is ±1e30;
* a variable no source of the config names (the static attributes, a file not written by ingest):
  any value within ±1e30.

Unlike the served model itself this module needs the ingest stage (the logging step has it).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from pydantic import ValidationError

from hydroseq.config import IngestConfig
from hydroseq.config.variables import VariableSpec
from hydroseq.export import ExportMetadata
from hydroseq.ingest import plausibility, units
from hydroseq.ingested import open_ingested
from hydroseq.serving.served_input import ANY_VALUE


def input_bounds(path: str | Path, metadata: ExportMetadata) -> dict[str, list[float]]:
    """``{variable: [low, high]}`` for every variable ``metadata``'s model reads, in the units of the
    ingested file ``path`` (see the module docstring).

    Raises
    ------
    InputDataError
        If ``path`` is not an ingested dataset.
    """
    dataset, grid = open_ingested(path)
    with dataset:
        text = str(dataset.attrs.get("ingest_config", ""))
    specs = _variable_specs(text)
    names = [*metadata.dynamic_inputs, metadata.target, *(item.variable for item in metadata.forecast_input_specs),
             *metadata.static_inputs]
    bounds = {}
    for name in dict.fromkeys(names):
        spec, source_step = specs.get(name, (None, None))
        bounds[name] = list(ANY_VALUE if spec is None else grid_bounds(spec, source_step, grid.step))
    return bounds


def grid_bounds(spec: VariableSpec, source_step: pd.Timedelta | None, grid_step: pd.Timedelta) -> tuple[float, float]:
    """Ingest's bounds of ``spec`` as bounds of its values on a grid of ``grid_step``, in the file's units.

    ``source_step`` is the source's step (None: not known, as for a forecast product).
    """
    low, high = plausibility.bounds(spec)
    summed = spec.aggregation == "sum"
    if summed and source_step is None:
        return _signs(low, high)
    try:
        canonical = units.to_canonical(np.array([low, high], dtype=np.float64), spec, source_step)
        if summed:
            assert source_step is not None
            count = max(1.0, grid_step / source_step)
            canonical = np.array([min(canonical[0], canonical[0] * count), max(canonical[1], canonical[1] * count)])
        converted = units.to_output(canonical, spec, grid_step, float("nan"))
    except units.AreaMissing:
        return _signs(low, high)
    return _rounded(float(np.min(converted))), _rounded(float(np.max(converted)))


def _rounded(value: float) -> float:
    """``value`` to 12 significant digits (a converted 50000 stays 50000, not 49999.99999999999)."""
    return float(f"{value:.12g}")


def _signs(low: float, high: float) -> tuple[float, float]:
    """Only the signs of ``low`` and ``high`` (conversions that are not known keep them)."""
    return (0.0 if low >= 0 else ANY_VALUE[0]), (ANY_VALUE[1] if high > 0 else 0.0)


def _variable_specs(text: str) -> dict[str, tuple[VariableSpec, pd.Timedelta | None]]:
    """``{variable: (spec, source step)}`` of the ingest config ``text`` (empty if there is none)."""
    try:
        config = IngestConfig.model_validate(yaml.safe_load(text)) if text else None
    except (yaml.YAMLError, ValidationError):
        config = None
    if config is None:
        return {}
    specs: dict[str, tuple[VariableSpec, pd.Timedelta | None]] = {}
    for source in config.sources:
        specs.update((name, (spec, source.step)) for name, spec in source.variables.items())
    for product in config.forecast_sources:
        specs.update((name, (spec, None)) for name, spec in product.variables.items())
    return specs
