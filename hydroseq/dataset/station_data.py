"""Read an ingested NetCDF once into per-station float32 arrays; nothing reads the file afterwards."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from hydroseq.climate import DERIVED_DYNAMIC
from hydroseq.climate.derived import MIN_INDEX_DAYS
from hydroseq.config import DataConfig
from hydroseq.config.units import m3s_per_mm_km2
from hydroseq.dataset.derived_inputs import derived_dynamic_series, derived_static_table, split_derived
from hydroseq.dataset.forecast_inputs import read_forecast_inputs
from hydroseq.errors import InputDataError
from hydroseq.grid import GridSpec
from hydroseq.ingested import open_ingested

PRECIPITATION_INPUT = "total_precipitation_sum"  # what the runoff signatures read as precipitation


@dataclass(frozen=True, eq=False)
class StationData:
    """The variables one experiment needs, in memory, one row per station.

    All stations share the grid ``times``. Missing values stay NaN; deciding what is valid is the
    job of the sample index.

    Attributes
    ----------
    path
        The NetCDF file the arrays came from.
    station_ids
        Station ids, in the order of the first axis of every array.
    times
        Grid labels (UTC, end of each interval), ``datetime64[ns]``.
    dynamic
        float32 ``[station, time, dynamic feature]``, C-contiguous.
    target
        float32 ``[station, time]``.
    static
        float32 ``[station, static feature]``.
    dynamic_names, static_names, target_name
        Variable names in the order of the feature axes.
    checksum
        The file's ``dataset_checksum`` attribute (a hash of the loaded arrays if it has none).
    grid
        The file's time grid (which local day each label belongs to).
    target_units
        The target variable's ``units`` attribute ("" if it has none).
    forecast, forecast_names
        float32 ``[station, time, input, lead]``: each weather-forecast input's values for leads
        1..H issued at each step (:mod:`hydroseq.dataset.forecast_inputs`), in the variables'
        units; empty without forecast inputs.
    """

    path: Path
    station_ids: tuple[str, ...]
    times: np.ndarray
    dynamic: np.ndarray
    target: np.ndarray
    static: np.ndarray
    dynamic_names: tuple[str, ...]
    static_names: tuple[str, ...]
    target_name: str
    checksum: str
    grid: GridSpec
    target_units: str = ""
    forecast: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 0, 0), np.float32))
    forecast_names: tuple[str, ...] = ()

    @property
    def n_stations(self) -> int:
        """Number of stations."""
        return len(self.station_ids)

    @property
    def n_times(self) -> int:
        """Number of grid steps."""
        return len(self.times)

    def runoff_precipitation(self) -> np.ndarray | None:
        """The precipitation ``[station, time]`` that the runoff ratio and the streamflow elasticity compare the
        target with; None when there is none in the target's unit.

        It is the dynamic input :data:`PRECIPITATION_INPUT` (Caravan's name, which every bundled ingest config
        gives it, in mm per step) beside a target that is a depth rate (mm/d, mm/h): both are then taken to be
        in the same unit, as Caravan's are (mm/d).
        """
        if PRECIPITATION_INPUT not in self.dynamic_names or m3s_per_mm_km2(self.target_units, self.grid.step) is None:
            return None
        return self.dynamic[..., self.dynamic_names.index(PRECIPITATION_INPUT)]


def load_station_data(path: str | Path, data_config: DataConfig) -> StationData:
    """Load the dynamic inputs, target and static attributes named in ``data_config``.

    Parameters
    ----------
    path
        An ingested NetCDF following ``docs/dataset-format.md``.
    data_config
        Names the variables and, optionally, the stations to keep (in that order).

    Raises
    ------
    InputDataError
        If the file is not an ingested dataset (:func:`hydroseq.ingested.open_ingested`), a variable
        or station is missing, a variable has the wrong dimensions, or a static attribute is missing
        for a station.
    """
    path = Path(path)
    dataset, grid = open_ingested(path)
    with dataset:
        station_ids = [str(value) for value in dataset["station"].values]
        rows = _station_rows(station_ids, data_config.stations, path)
        times = np.asarray(dataset["time"].values).astype("datetime64[ns]")
        # Filled variable by variable: stacking a list of them held every input twice.
        dynamic = np.empty((len(rows), len(times), len(data_config.dynamic_inputs)), dtype=np.float32)
        for column, name in enumerate(data_config.dynamic_inputs):
            dynamic[..., column] = (
                derived_dynamic_series(dataset, path, rows, name, data_config.climate_sources, grid, slice(None))
                if name in DERIVED_DYNAMIC else _time_series(dataset, name, rows, path))
        target = _time_series(dataset, data_config.target, rows, path)
        static = _static_inputs(dataset, data_config, rows, path, grid, times)
        forecast = read_forecast_inputs(dataset, data_config.forecast_inputs, data_config.forecast_horizon, rows,
                                        path)
        stored_checksum = dataset.attrs.get("dataset_checksum")
        target_units = str(dataset[data_config.target].attrs.get("units", ""))
    selected = tuple(station_ids[row] for row in rows)
    checksum = str(stored_checksum or _array_checksum(selected, times, dynamic, target, static))
    return StationData(
        path=path, station_ids=selected, times=times, dynamic=np.ascontiguousarray(dynamic),
        target=np.ascontiguousarray(target), static=static,
        dynamic_names=tuple(data_config.dynamic_inputs), static_names=tuple(data_config.static_inputs),
        target_name=data_config.target, checksum=checksum, grid=grid, target_units=target_units,
        forecast=forecast, forecast_names=tuple(item.variable for item in data_config.forecast_inputs),
    )


def _station_rows(station_ids: list[str], wanted: list[str] | None, path: Path) -> list[int]:
    if wanted is None:
        return list(range(len(station_ids)))
    position = {station: row for row, station in enumerate(station_ids)}
    missing = [station for station in wanted if station not in position]
    if missing:
        raise InputDataError(path, f"stations {missing} are not in the file ({len(station_ids)} stations)",
                             where="data.stations")
    return [position[station] for station in wanted]


def _time_series(dataset: xr.Dataset, name: str, rows: list[int], path: Path) -> np.ndarray:
    if name not in dataset.variables:
        dynamic = [var for var in dataset.data_vars if dataset[var].attrs.get("hydroseq_role") == "dynamic"]
        raise InputDataError(path, f"variable {name!r} not found; dynamic variables: {dynamic}")
    variable = dataset[name]
    if set(variable.dims) != {"station", "time"}:
        raise InputDataError(path, f"variable {name!r} has dims {variable.dims}, expected (station, time)")
    values = variable.transpose("station", "time").values
    if rows != list(range(len(values))):
        values = values[rows]
    return np.asarray(values, dtype=np.float32)


def _static_inputs(dataset: xr.Dataset, data_config: DataConfig, rows: list[int], path: Path, grid: GridSpec,
                   times: np.ndarray) -> np.ndarray:
    """The static inputs in model order: read from the file, or derived over the training period (a training
    period shorter than :data:`~hydroseq.climate.derived.MIN_INDEX_DAYS` days reaches back to that many days
    before its end: a fine-tuning run on a short archive; never past its end)."""
    read, derived = split_derived(data_config.static_inputs)
    columns = dict(zip(read, _static_table(dataset, read, rows, path).T, strict=True))
    if derived:
        inside = np.flatnonzero(grid.period_mask(times, data_config.splits.train))
        steps = slice(0, 0)
        if inside.size:
            end = int(inside[-1]) + 1
            steps_per_day = max(1, round(pd.Timedelta("1D") / pd.Timedelta(grid.step)))
            steps = slice(min(int(inside[0]), max(0, end - MIN_INDEX_DAYS * steps_per_day)), end)
        period = (f"the training period {data_config.splits.train.start}..{data_config.splits.train.end}, or the "
                  f"{MIN_INDEX_DAYS} days up to its end")
        table = derived_static_table(dataset, path, rows, derived, data_config.climate_sources, grid, steps, period)
        columns.update(zip(derived, table.T, strict=True))
    if not columns:
        return np.zeros((len(rows), 0), dtype=np.float32)
    return np.stack([columns[name] for name in data_config.static_inputs], axis=1).astype(np.float32)


def _static_table(dataset: xr.Dataset, names: list[str], rows: list[int], path: Path) -> np.ndarray:
    columns = []
    for name in names:
        if name not in dataset.variables:
            static = [var for var in dataset.variables if dataset[var].dims == ("station",)]
            raise InputDataError(path, f"static attribute {name!r} not found; per-station variables: {static}")
        variable = dataset[name]
        if variable.dims != ("station",):
            raise InputDataError(path, f"static attribute {name!r} has dims {variable.dims}, expected (station,)")
        column = np.asarray(variable.values[rows], dtype=np.float32)
        if not np.isfinite(column).all():
            station = dataset["station"].values[rows][int(np.flatnonzero(~np.isfinite(column))[0])]
            raise InputDataError(path, f"static attribute {name!r} is missing", where=f"station {station}")
        columns.append(column)
    return np.stack(columns, axis=1) if columns else np.zeros((len(rows), 0), dtype=np.float32)


def _array_checksum(station_ids: tuple[str, ...], *arrays: np.ndarray) -> str:
    digest = hashlib.sha256("\n".join(station_ids).encode())
    for array in arrays:
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()
