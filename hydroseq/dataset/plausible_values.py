"""Every value a forecast reads lies within ingest's plausible range: the check of ``hydroseq forecast``, its
hindcasts and the served model.

Ingest refuses a value outside its variable's range (:mod:`hydroseq.config.plausible_ranges`), but a data file
written by other code, or edited after its ingest (without the manifest that would tell), may hold 1e30 mm of
rain, -50 mm, or 1e30 mm/d of discharge; the network would turn them into a forecast. So the values a forecast
reads are checked where they enter it (:class:`hydroseq.forecast.IngestedFile` for a file, the served model for
its rows): the observed forcing, the observed target (an input of a model that reads it) over the history
windows, every lead of each weather-forecast input issued in them, and the static attributes. The first value
outside its bounds (or infinite) is an :class:`~hydroseq.errors.InputDataError` naming the file, the station,
the time, the variable and the value (exit 4). NaN is missing, as ever.

The bounds of a file (:func:`file_bounds`, in its units): those ingest applied, from the ingest config the file
records (:func:`hydroseq.config.plausible_ranges.grid_bounds`: a configured ``valid_min`` of -20 mm/d for
evaporation stays -20); for a variable that config does not name (a file written by other code) the default
of its kind by the units it carries (:func:`hydroseq.config.plausible_ranges.written_bounds`), for a static
attribute any finite value. The served model's bounds are the same, computed from its training file when it
is logged (:mod:`hydroseq.serving.input_bounds`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr
import yaml
from pydantic import ValidationError

from hydroseq.config import IngestConfig
from hydroseq.config.plausible_ranges import ANY_VALUE, grid_bounds, written_bounds
from hydroseq.config.variables import VariableSpec
from hydroseq.dataset.station_data import StationData
from hydroseq.errors import InputDataError

Bounds = Mapping[str, Sequence[float]]  # variable -> (low, high) in the ingested file's units
Values = list[tuple[str, str, np.ndarray]]  # (name in the error, variable, [station(, step)])


def file_bounds(dataset: xr.Dataset, grid_step: pd.Timedelta, variables: Sequence[str],
                static: Collection[str]) -> dict[str, list[float]]:
    """``{variable: [low, high]}`` for each of ``variables`` (``static``: the static attributes among them), in the
    units of ``dataset``, an ingested file on a grid of ``grid_step`` (see the module docstring)."""
    specs = recorded_specs(str(dataset.attrs.get("ingest_config", "")))
    bounds = {}
    for name in variables:
        if name in specs:
            spec, source_step = specs[name]
            bounds[name] = list(grid_bounds(spec, source_step, grid_step))
        elif name in static or name not in dataset.variables:
            bounds[name] = list(ANY_VALUE)
        else:
            bounds[name] = list(written_bounds(dataset[name].attrs.get("units"), grid_step))
    return bounds


def recorded_specs(text: str) -> dict[str, tuple[VariableSpec, pd.Timedelta | None]]:
    """``{variable: (spec, source step)}`` of the ingest config ``text`` a file records (empty if none or not
    readable; a forecast product's step: None)."""
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


def check_plausible(data: StationData, window: slice, bounds: Bounds | None, source: str | Path,
                    units: Mapping[str, str], target: bool, forecast: bool = True,
                    columns: Sequence[str] | None = None) -> None:
    """Every value of ``data`` a forecast reads on the grid steps ``window`` (the observed target if ``target``, the
    weather-forecast inputs if ``forecast``), and every static attribute, lies within ``bounds`` (a variable they
    lack: ±1e30). ``source`` names the file (or the served model's input) and ``units`` the variables' units in
    the error; ``columns`` names the forecast inputs' values (see :func:`check_forecast_plausible`).

    Raises
    ------
    InputDataError
        For the first value outside its bounds or infinite, naming the station, time, variable, value and bounds.
    """
    times = data.times[window]
    values = [(name, name, data.dynamic[:, window, position]) for position, name in enumerate(data.dynamic_names)]
    if target:
        values.append((data.target_name, data.target_name, data.target[:, window]))
    _check(values, data.station_ids, times, bounds, source, units)
    if forecast:
        check_forecast_plausible(data.forecast[:, window], data.forecast_names, data.station_ids, times, bounds,
                                 source, units, columns)
    _check([(name, name, data.static[:, position]) for position, name in enumerate(data.static_names)],
           data.station_ids, times, bounds, source, units)


def check_forecast_plausible(forecast: np.ndarray, names: Sequence[str], station_ids: Sequence[str],
                             times: np.ndarray, bounds: Bounds | None, source: str | Path, units: Mapping[str, str],
                             columns: Sequence[str] | None = None) -> None:
    """:func:`check_plausible` of the weather-forecast inputs ``forecast`` ``[station, step, input, lead]`` issued
    at the grid labels ``times``, lead by lead: each named in the error as ``<variable> at lead <k>``, or by
    ``columns`` (input by input, lead by lead: the served model's ``<variable>_forecast_lead<k>``)."""
    horizon = forecast.shape[-1]
    values = [(columns[position * horizon + lead] if columns is not None else f"{name} at lead {lead + 1}", name,
               forecast[:, :, position, lead]) for position, name in enumerate(names) for lead in range(horizon)]
    _check(values, station_ids, times, bounds, source, units)


def _check(values: Values, station_ids: Sequence[str], times: np.ndarray, bounds: Bounds | None,
           source: str | Path, units: Mapping[str, str]) -> None:
    """Raise for the first of ``values`` outside its variable's bounds (``[station, step]`` at ``times``)."""
    for column, variable, array in values:
        low, high = (bounds or {}).get(variable, ANY_VALUE)
        inner_low, inner_high = _inward(float(low), float(high))
        with np.errstate(invalid="ignore"):
            bad = (array < inner_low) | (array > inner_high)  # NaN: missing; ±inf: outside
        if not bad.any():
            continue
        position = np.unravel_index(int(np.argmax(bad)), bad.shape)
        value = float(array[position])
        when = f", {pd.Timestamp(times[position[1]]).isoformat()}Z" if len(position) > 1 else ""
        unit = f" {units[variable]}" if variable in units else ""
        why = ("is not finite" if not np.isfinite(value)
               else f"is outside {low:g} .. {high:g}{unit}, the plausible range ingest applies to {variable}")
        station = station_ids[int(position[0])]
        raise InputDataError(source, f"{column} {value:g}{unit} {why}", f"station {station}{when}")


def _inward(low: float, high: float) -> tuple[np.float32, np.float32]:
    """``low`` and ``high`` as the float32 values that keep the range within them (float32 data compared with a
    bound rounded outwards would let 1e30 pass a bound of 1e30)."""
    inner_low, inner_high = np.float32(low), np.float32(high)
    if float(inner_low) < low:
        inner_low = np.nextafter(inner_low, np.float32(np.inf))
    if float(inner_high) > high:
        inner_high = np.nextafter(inner_high, np.float32(-np.inf))
    return inner_low, inner_high
