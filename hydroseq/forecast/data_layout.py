"""Does an ingested file have the layout a model was trained on? The one check before a forecast reads a file.

Checked in this order: the grid (frequency, time zone, day boundary, label convention), that every
variable the model reads is in the file, that its ingested weather-forecast variables hold every lead the
model reads (``1..forecast_horizon``: a 3-lead product is not read by a 7-lead model as a shorter
forecast), and that each variable has the units the model was trained with.
The first check that fails names every difference it found, on one line: ``F.nc: grid frequency
1h differs from the model's 1D``, ``F.nc: variable streamflow is in m3 s-1; the model was trained
on mm d-1``.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import xarray as xr

from hydroseq.climate import is_derived, needed_sources
from hydroseq.dataset.forecast_inputs import lead_span
from hydroseq.errors import InputDataError
from hydroseq.export.metadata import ExportMetadata
from hydroseq.grid import GRID_ATTRIBUTES, GridSpec

GRID_ATTRIBUTE_WORDS = dict(zip(GRID_ATTRIBUTES, ("frequency", "time zone", "day boundary", "time label convention"),
                                strict=True))


def check_data_layout(path: Path, dataset: xr.Dataset, grid: GridSpec, metadata: ExportMetadata) -> None:
    """Refuse ``dataset`` (opened from ``path``, on ``grid``) unless the model of ``metadata`` can read it.

    The target may be absent when :func:`target_is_optional`: every station is then ungauged.
    Units are compared only for the variables whose units the model records (models exported
    before hydroseq recorded units are not checked).

    Raises
    ------
    InputDataError
        Naming the file and, on one line, every grid attribute, missing variable or units that differ.
    """
    grid_differences = [f"grid {GRID_ATTRIBUTE_WORDS[name]} {found} differs from the model's {trained_on}"
                        for name, found, trained_on in grid.differences(metadata.grid)
                        if not (name == GRID_ATTRIBUTES[1] and reads_any_standard_day(metadata, grid))]
    if grid_differences:
        raise InputDataError(path, "; ".join(grid_differences))
    missing = [f"{name} ({role})" for name, role in _roles(metadata).items() if name not in dataset.variables
               and not (name == metadata.target and target_is_optional(metadata))]
    if missing:
        raise InputDataError(path, f"the model reads variables the file lacks: {', '.join(missing)}")
    short = _short_forecasts(dataset, metadata)
    if short:
        horizon = metadata.forecast_horizon
        raise InputDataError(path, f"the model reads weather-forecast leads 1-{horizon}, but {', '.join(short)}: a "
                                   "product with fewer leads than the model reads is refused rather than read as a "
                                   f"shorter forecast; ingest one with a forecast source of horizon {horizon} or more")
    units = [_units_difference(name, dataset[name].attrs.get("units"), trained_on)
             for name, trained_on in metadata.input_units.items() if name in dataset.variables]
    wrong = [difference for difference in units if difference]
    if wrong:
        raise InputDataError(path, "; ".join(wrong))


def target_is_optional(metadata: ExportMetadata) -> bool:
    """A file may lack the target variable: the model reads the observed target with an "observed" flag (it
    forecasts stations without observations) and records the target's units (the units of its forecast)."""
    return metadata.feature_layout().observed_flag and metadata.target in metadata.input_units


def _short_forecasts(dataset: xr.Dataset, metadata: ExportMetadata) -> list[str]:
    """``<variable> has leads 1-3`` for each ingested weather-forecast input whose ``lead`` coordinate lacks one
    of the model's leads ``1..forecast_horizon``."""
    wanted = set(range(1, metadata.forecast_horizon + 1))
    leads = [int(lead) for lead in np.asarray(dataset["lead"].values)] if "lead" in dataset.variables else []
    short = []
    for item in metadata.forecast_input_specs:
        if item.source != "ingested" or "lead" not in dataset[item.variable].dims:
            continue  # a variable without a lead dimension is refused when it is read, naming its dimensions
        if not wanted <= set(leads):
            found = lead_span(leads) if leads else "none"
            short.append(f"{item.variable} has leads {found}")
    return short


def reads_any_standard_day(metadata: ExportMetadata, grid: GridSpec) -> bool:
    """The model reads local standard-time days and ``grid`` is such a grid: daily, days ending at local midnight
    of a zone without daylight saving (the agency's own standard time; the files and pages show that zone)."""
    if metadata.day_convention != "local_standard_day" or grid.to_attrs() | {GRID_ATTRIBUTES[1]: ""} != (
            metadata.grid.to_attrs() | {GRID_ATTRIBUTES[1]: ""}):
        return False
    offsets = {grid.zone.utcoffset(dt.datetime(2001, month, 1)) for month in (1, 7)}
    return len(offsets) == 1


def _roles(metadata: ExportMetadata) -> dict[str, str]:
    """``{variable: what the model reads it as}`` for every variable the model reads from the file (for a derived
    input, the variables it is derived from)."""
    names = [*metadata.dynamic_inputs, *metadata.static_inputs]
    roles = {name: "dynamic input" for name in metadata.dynamic_inputs if not is_derived(name)}
    roles.update({item.variable: "weather-forecast input" for item in metadata.forecast_input_specs})
    roles.update({name: "static attribute" for name in metadata.static_inputs if not is_derived(name)})
    derived = [name for name in names if is_derived(name)]
    for source in needed_sources(derived, metadata.climate_sources):
        roles.setdefault(source, f"the source of {', '.join(derived[:2])}{', ...' if len(derived) > 2 else ''}")
    roles[metadata.target] = "observed target, an input" if metadata.lagged_target else "target"
    return roles


def _units_difference(name: str, found: object, trained_on: str) -> str:
    """How the units of variable ``name`` in the file (``found``; None: no units attribute) differ; "" if not."""
    if found is None:
        return f"variable {name} has no units attribute; the model was trained on {trained_on}"
    if str(found).strip() != trained_on.strip():
        return f"variable {name} is in {found}; the model was trained on {trained_on}"
    return ""
