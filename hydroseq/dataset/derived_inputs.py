"""Read the inputs hydroseq derives (:mod:`hydroseq.climate`) from an ingested dataset: one reader for training
(:func:`hydroseq.dataset.load_station_data`) and for forecasting (:class:`hydroseq.forecast.IngestedFile`).

A derived input is never a variable of the file: ``pet_oudin`` comes from the temperature and the latitude,
the ``clim_*`` indices from the precipitation and temperature of an index period
(:mod:`hydroseq.climate.derived`). Every refusal names the file, the station and what is missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from hydroseq.climate import derive_dynamic, derive_static, is_derived
from hydroseq.climate.derived import ShortRecordError
from hydroseq.config.derived import ClimateSources
from hydroseq.config.units import same_units
from hydroseq.errors import InputDataError
from hydroseq.grid import GridSpec

_SOURCE_UNITS = {"precipitation": "mm d-1", "temperature": "degC"}


def derived_dynamic_series(dataset: xr.Dataset, path: Path, rows: Sequence[int], name: str,
                           sources: ClimateSources, grid: GridSpec, steps: slice) -> np.ndarray:
    """The derived dynamic input ``name`` ``[station, time]`` of the stations ``rows`` on the steps ``steps``."""
    window = dataset.isel(time=steps)
    temperature = _source(window, path, rows, "temperature", sources, name, grid)
    latitude = station_latitude(dataset, path, rows, sources, name)
    return derive_dynamic(name, temperature, latitude, grid.day_of_year(window["time"].values))


def derived_static_table(dataset: xr.Dataset, path: Path, rows: Sequence[int], names: Sequence[str],
                         sources: ClimateSources, grid: GridSpec, steps: slice,
                         period_text: str) -> np.ndarray:
    """The derived static inputs ``names`` ``[station, len(names)]`` over the index period ``steps`` (described
    as ``period_text`` in a refusal)."""
    window = dataset.isel(time=steps)
    latitude = station_latitude(dataset, path, rows, sources, names[0])
    days = grid.local_days(window["time"].values)
    try:
        return derive_static(names, lambda role: _source(window, path, rows, role, sources, names[0], grid), latitude,
                             np.asarray(days.day_of_year), np.asarray(days.month))
    except ShortRecordError as error:
        station = str(dataset["station"].values[rows[error.station]])
        raise InputDataError(path, f"too short a record to derive the climate indices the model reads: {error} "
                                   f"({period_text})", where=f"station {station}") from None


def station_latitude(dataset: xr.Dataset, path: Path, rows: Sequence[int], sources: ClimateSources,
                     derived: str) -> np.ndarray:
    """The latitude ``[station]`` (degrees north) that ``derived`` needs; refused when absent or off -90..90."""
    name = sources.latitude
    if name not in dataset.variables or dataset[name].dims != ("station",):
        raise InputDataError(path, f"the model derives {derived} from the station latitude, but the file has no "
                                   f"per-station variable {name!r} (give lat in the station table)")
    latitude = np.asarray(dataset[name].values, dtype=np.float64)[list(rows)]
    bad = np.flatnonzero(~(np.abs(latitude) <= 90.0))
    if bad.size:
        station = str(dataset["station"].values[rows[int(bad[0])]])
        raise InputDataError(path, f"latitude {latitude[bad[0]]} is missing or outside -90..90 (the model derives "
                                   f"{derived} from it)", where=f"station {station}")
    return latitude


def _source(window: xr.Dataset, path: Path, rows: Sequence[int], role: str, sources: ClimateSources,
            derived: str, grid: GridSpec) -> np.ndarray:
    """The source variable of ``role`` (``precipitation`` or ``temperature``) ``[station, time]``, float64 (a
    precipitation in mm per daily step is read as mm d-1)."""
    name = getattr(sources, role)
    if name not in window.variables:
        raise InputDataError(path, f"the model derives {derived} from the {role} {name!r}, a variable the file "
                                   "lacks")
    units = str(window[name].attrs.get("units", ""))
    daily_sum = role == "precipitation" and same_units(units, "mm") and pd.Timedelta(grid.step) == pd.Timedelta("1D")
    if not (daily_sum or same_units(units, _SOURCE_UNITS[role])):
        raise InputDataError(path, f"variable {name} is in {units or 'no units'}; the model derives {derived} "
                                   f"from a {role} in {_SOURCE_UNITS[role]}")
    values = window[name].transpose("station", "time").values
    return np.asarray(values, dtype=np.float64)[list(rows)]


def split_derived(names: Sequence[str]) -> tuple[list[str], list[str]]:
    """``(read from the file, derived)`` names of ``names``, each list in the order given."""
    return [name for name in names if not is_derived(name)], [name for name in names if is_derived(name)]
