"""Read only the grid steps a forecast needs from an ingested NetCDF (never the whole history)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import xarray as xr

from hydroseq.dataset import StationData
from hydroseq.dataset.forecast_inputs import read_forecast_inputs, read_reference_times
from hydroseq.errors import InputDataError
from hydroseq.export.metadata import ExportMetadata
from hydroseq.ingested import open_ingested

if TYPE_CHECKING:
    from hydroseq.forecast.forcing_file import ForcingForecast


@dataclass(frozen=True)
class StationInfo:
    """Per-station metadata copied into the forecast files."""

    names: tuple[str, ...] | None
    lats: np.ndarray | None
    lons: np.ndarray | None
    target_units: str
    target_long_name: str
    target_standard_name: str
    dataset_checksum: str


class IngestedFile:
    """An ingested dataset opened lazily: its contract and its grid (against the model's) are checked on opening.

    Use as a context manager; :meth:`read` loads a slice of steps of the model's variables.
    """

    def __init__(self, path: str | Path, metadata: ExportMetadata, forcing_forecast: str | Path | None = None,
                 forecast_source: str | None = None) -> None:
        self.path = Path(path)
        self.metadata = metadata
        self.forcing_forecast = None if forcing_forecast is None else Path(forcing_forecast)
        self.forecast_source = forecast_source
        self.forcing: ForcingForecast | None = None  # the product file on the steps read, once read
        self._updated_window: xr.Dataset | None = None  # the file's steps of self.forcing, updated with it
        self.dataset, self.grid = open_ingested(self.path)
        try:
            self._check()
        except InputDataError:
            self.dataset.close()
            raise

    def __enter__(self) -> IngestedFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.dataset.close()

    @property
    def times(self) -> np.ndarray:
        """All grid labels of the file (UTC, ``datetime64[ns]``)."""
        return np.asarray(self.dataset["time"].values, dtype="datetime64[ns]")

    @property
    def station_ids(self) -> tuple[str, ...]:
        """Every station of the file, in file order."""
        return tuple(str(value) for value in self.dataset["station"].values)

    def _check(self) -> None:
        differences = self.grid.differences(self.metadata.grid)
        if differences:
            name, found, trained_on = differences[0]
            raise InputDataError(self.path, f"{name} is {found!r} but the model was trained on {trained_on!r}",
                                 where=f"global attribute {name}")
        needed = [*self.metadata.dynamic_inputs, self.metadata.target, *self.metadata.static_inputs,
                  *(item.variable for item in self.metadata.forecast_input_specs)]
        missing = [name for name in needed if name not in self.dataset.variables]
        if missing:
            raise InputDataError(self.path, f"variables the model needs are missing: {missing}")

    def read(self, start: int, stop: int) -> StationData:
        """The model's variables on grid steps ``start..stop-1`` of every station, as float32.

        Forecast inputs are those issued at these steps (a perfect one reads the observed values of
        the lead window, after ``stop``: it is an upper bound, see :mod:`hydroseq.dataset.forecast_inputs`).
        """
        window = self.dataset.isel(time=slice(start, stop))
        specs = self.metadata.forecast_input_specs
        rows = list(range(len(self.station_ids)))
        forecasts, first, last = self._forecasts(start, stop)
        forecast = read_forecast_inputs(forecasts, specs, self.metadata.forecast_horizon, rows, self.path, first, last)
        dynamic = np.stack([self._series(window, name) for name in self.metadata.dynamic_inputs], axis=-1)
        static = [np.asarray(self.dataset[name].values, dtype=np.float32) for name in self.metadata.static_inputs]
        return StationData(
            path=self.path, station_ids=self.station_ids, times=np.asarray(window["time"].values, "datetime64[ns]"),
            dynamic=np.ascontiguousarray(dynamic), target=self._series(window, self.metadata.target),
            static=np.stack(static, axis=1) if static else np.zeros((len(self.station_ids), 0), np.float32),
            dynamic_names=tuple(self.metadata.dynamic_inputs), static_names=tuple(self.metadata.static_inputs),
            target_name=self.metadata.target, checksum=self.info().dataset_checksum, grid=self.grid,
            forecast=forecast, forecast_names=tuple(item.variable for item in specs),
        )

    def read_reference_times(self, start: int, stop: int) -> dict[str, np.ndarray]:
        """Per ingested forecast input, the reference time of the product used at each step ``[station, time]``."""
        forecasts, first, last = self._forecasts(start, stop)
        return read_reference_times(forecasts, self.metadata.forecast_input_specs,
                                    list(range(len(self.station_ids))), first, last)

    def _forecasts(self, start: int, stop: int) -> tuple[xr.Dataset, int, int]:
        """Where the forecast variables of steps ``start..stop-1`` are read: the file itself, or a window of it
        updated with ``forcing_forecast`` (gridded once, on the first call); and the steps there."""
        if self.forcing_forecast is None:
            return self.dataset, start, stop
        # imported here: the ingest stage (dask, zarr) is not a requirement of the served pyfunc model
        from hydroseq.forecast.forcing_file import read_forcing_forecast

        gridded = self.forcing
        if gridded is None or self._updated_window is None or (gridded.start, gridded.stop) != (start, stop):
            self.forcing = read_forcing_forecast(self.forcing_forecast, self.dataset, self.path, self.grid, start, stop,
                                                 self.forecast_source)
            self._updated_window = self.forcing.newer_than_ingested(self.dataset, self.metadata.forecast_horizon)
        return self._updated_window, 0, stop - start

    def read_target(self, start: int, stop: int) -> np.ndarray:
        """The observed target ``[station, time]`` on grid steps ``start..stop-1``, as float32."""
        return self._series(self.dataset.isel(time=slice(start, stop)), self.metadata.target)

    def _series(self, window: xr.Dataset, name: str) -> np.ndarray:
        variable = window[name]
        if set(variable.dims) != {"station", "time"}:
            raise InputDataError(self.path, f"variable {name!r} has dims {variable.dims}, expected (station, time)")
        return np.asarray(variable.transpose("station", "time").values, dtype=np.float32)

    def info(self) -> StationInfo:
        """Station names and positions, the target's units and names and the dataset checksum."""
        data = self.dataset
        target = data[self.metadata.target]
        names = tuple(str(v) for v in data["station_name"].values) if "station_name" in data.variables else None
        return StationInfo(
            names=names,
            lats=np.asarray(data["lat"].values, np.float64) if "lat" in data.variables else None,
            lons=np.asarray(data["lon"].values, np.float64) if "lon" in data.variables else None,
            target_units=str(target.attrs.get("units", "")),
            target_long_name=str(target.attrs.get("long_name", self.metadata.target)),
            target_standard_name=str(target.attrs.get("standard_name", "")),
            dataset_checksum=str(data.attrs.get("dataset_checksum", "")),
        )
