"""Read only the grid steps a forecast needs from an ingested NetCDF (never the whole history)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import xarray as xr

from hydroseq.climate import DERIVED_DYNAMIC
from hydroseq.climate.derived import INDEX_YEARS, index_period
from hydroseq.dataset import StationData
from hydroseq.dataset.derived_inputs import derived_dynamic_series, derived_static_table, split_derived
from hydroseq.dataset.forecast_inputs import read_forecast_inputs, read_reference_times, weather_members
from hydroseq.dataset.plausible_values import check_forecast_plausible, check_plausible, file_bounds
from hydroseq.errors import InputDataError
from hydroseq.export.metadata import ExportMetadata
from hydroseq.forecast.data_layout import check_data_layout
from hydroseq.ingested import open_ingested

if TYPE_CHECKING:
    from hydroseq.forecast.forcing_file import ForcingForecast

UNGAUGED_BLOCK_VALUES = 2**24  # target values read at a time looking for any observation (64 MB of float32)


@dataclass(frozen=True)
class StationInfo:
    """Per-station metadata copied into the forecast files."""

    names: tuple[str, ...] | None
    lats: np.ndarray | None
    lons: np.ndarray | None
    areas: np.ndarray | None  # catchment areas in km2 (NaN: unknown)
    target_units: str
    target_long_name: str
    target_standard_name: str
    dataset_checksum: str


class IngestedFile:
    """An ingested dataset opened lazily: its contract and its layout (against the model's) are checked on opening
    (:func:`hydroseq.forecast.data_layout.check_data_layout`).

    Use as a context manager; :meth:`read` loads a slice of steps of the model's variables, refusing a value the
    forecast reads that is outside ingest's plausible range (:mod:`hydroseq.dataset.plausible_values`).
    """

    def __init__(self, path: str | Path, metadata: ExportMetadata, forcing_forecast: str | Path | None = None,
                 forecast_source: str | None = None) -> None:
        self.path = Path(path)
        self.metadata = metadata
        self.forcing_forecast = None if forcing_forecast is None else Path(forcing_forecast)
        self.forecast_source = forecast_source
        self.forcing: ForcingForecast | None = None  # the product file on the steps read, once read
        self._updated_window: xr.Dataset | None = None  # the file's steps of self.forcing, updated with it
        self._last_issue = -1  # the last issue step self.forcing was read for
        self._bounds: dict[str, list[float]] | None = None  # the plausible ranges, once computed
        self.dataset, self.grid = open_ingested(self.path)
        try:
            check_data_layout(self.path, self.dataset, self.grid, metadata)
        except InputDataError:
            self.dataset.close()
            raise
        self.has_target = metadata.target in self.dataset.variables  # if not, every station is ungauged

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

    @property
    def weather_members(self) -> int:
        """The members of the ensemble weather forecasts the model's inputs read (0: none is an ensemble)."""
        return weather_members(self.dataset, self.metadata.forecast_input_specs)

    def read(self, start: int, stop: int, last_issue: int | None = None,
             weather_member: int | None = None, first_issue: int | None = None) -> StationData:
        """The model's variables on grid steps ``start..stop-1`` of every station, as float32.

        Forecast inputs are those issued at these steps (a perfect one reads the observed values of
        the lead window, after ``stop``: it is an upper bound, see :mod:`hydroseq.dataset.forecast_inputs`);
        ``last_issue`` (default ``stop - 1``), the last issue step, bounds the products a
        ``forcing_forecast`` file is read for (those published by then); ``weather_member``: the
        member of an ensemble weather forecast the inputs read (:attr:`weather_members`); ``first_issue``
        (default ``stop - 1``): the first issue step, the end of the period derived climate indices are taken from.
        """
        window = self.dataset.isel(time=slice(start, stop))
        specs = self.metadata.forecast_input_specs
        forecast = self.read_forecast(start, stop, last_issue, weather_member)
        dynamic = np.stack([self._dynamic(window, name, start, stop) for name in self.metadata.dynamic_inputs], axis=-1)
        static = self._static(stop - 1 if first_issue is None else first_issue)
        info = self.info()
        data = StationData(
            path=self.path, station_ids=self.station_ids, times=np.asarray(window["time"].values, "datetime64[ns]"),
            dynamic=np.ascontiguousarray(dynamic), target=self.read_target(start, stop),
            static=static,
            dynamic_names=tuple(self.metadata.dynamic_inputs), static_names=tuple(self.metadata.static_inputs),
            target_name=self.metadata.target, checksum=info.dataset_checksum, grid=self.grid,
            target_units=info.target_units, forecast=forecast, forecast_names=tuple(item.variable for item in specs),
        )
        read = slice(0, (stop - 1 if last_issue is None else last_issue) - start + 1)  # up to the last issue step
        check_plausible(data, read, self.bounds, self.path, self.metadata.input_units, self.metadata.lagged_target,
                        forecast=False)  # read_forecast checked the forecast inputs
        return data

    def _dynamic(self, window: xr.Dataset, name: str, start: int, stop: int) -> np.ndarray:
        """One dynamic input ``[station, time]`` on the steps of ``window`` (``start..stop-1``), read or derived."""
        if name not in DERIVED_DYNAMIC:
            return self._series(window, name)
        rows = range(len(self.station_ids))
        return derived_dynamic_series(self.dataset, self.path, rows, name, self.metadata.climate_sources, self.grid,
                                      slice(start, stop))

    def _static(self, first_issue: int) -> np.ndarray:
        """The static inputs ``[station, feature]``: read from the file, or derived from the forcing of the
        :data:`~hydroseq.climate.derived.INDEX_YEARS` years up to ``first_issue`` (never a later day)."""
        read, derived = split_derived(self.metadata.static_inputs)
        columns = {name: np.asarray(self.dataset[name].values, dtype=np.float32) for name in read}
        for name, column in columns.items():
            if not np.isfinite(column).all():
                station = self.station_ids[int(np.flatnonzero(~np.isfinite(column))[0])]
                raise InputDataError(self.path, f"static attribute {name!r} is missing (the model reads it)",
                                     where=f"station {station}")
        if derived:
            rows = range(len(self.station_ids))
            day = self.grid.local_days(self.times[first_issue:first_issue + 1])[0].date()
            period = f"the forcing of at most {INDEX_YEARS} years up to the first issue day {day}"
            table = derived_static_table(self.dataset, self.path, rows, derived, self.metadata.climate_sources,
                                         self.grid, index_period(first_issue), period)
            columns.update(zip(derived, table.T, strict=True))
        if not columns:
            return np.zeros((len(self.station_ids), 0), np.float32)
        return np.stack([columns[name] for name in self.metadata.static_inputs], axis=1)

    def read_forecast(self, start: int, stop: int, last_issue: int | None = None,
                      weather_member: int | None = None) -> np.ndarray:
        """The weather-forecast inputs of :meth:`read` alone, ``[station, time, input, lead]`` (for another
        member of an ensemble weather forecast: the observations are the same)."""
        forecasts, first, last = self._forecasts(start, stop, last_issue)
        forecast = read_forecast_inputs(forecasts, self.metadata.forecast_input_specs, self.metadata.forecast_horizon,
                                        list(range(len(self.station_ids))), self.path, first, last, weather_member)
        read = slice(0, (stop - 1 if last_issue is None else last_issue) - start + 1)  # issued up to the last issue
        check_forecast_plausible(forecast[:, read], [item.variable for item in self.metadata.forecast_input_specs],
                                 self.station_ids, self.times[start:stop][read], self.bounds, self.path,
                                 self.metadata.input_units)
        return forecast

    @property
    def bounds(self) -> dict[str, list[float]]:
        """The plausible range of each variable the model reads, in the file's units
        (:func:`hydroseq.dataset.plausible_values.file_bounds`)."""
        if self._bounds is None:
            self._bounds = file_bounds(self.dataset, self.grid.step, model_variables(self.metadata),
                                       self.metadata.static_inputs)
        return self._bounds

    def read_reference_times(self, start: int, stop: int, last_issue: int | None = None) -> dict[str, np.ndarray]:
        """Per ingested forecast input, the reference time of the product used at each step ``[station, time]``."""
        forecasts, first, last = self._forecasts(start, stop, last_issue)
        return read_reference_times(forecasts, self.metadata.forecast_input_specs,
                                    list(range(len(self.station_ids))), first, last)

    def forecast_schedules(self) -> dict[str, tuple[pd.Timedelta, pd.Timedelta]]:
        """Per ingested forecast input, its product's ``(latency, issue frequency)`` as the ingest wrote them."""
        schedules = {}
        for item in self.metadata.forecast_input_specs:
            attrs = self.dataset[item.variable].attrs if item.variable in self.dataset.variables else {}
            if item.source == "ingested" and "forecast_latency" in attrs and "forecast_issue_frequency" in attrs:
                schedules[item.variable] = (pd.Timedelta(attrs["forecast_latency"]),
                                            pd.Timedelta(attrs["forecast_issue_frequency"]))
        return schedules

    def _forecasts(self, start: int, stop: int, last_issue: int | None) -> tuple[xr.Dataset, int, int]:
        """Where the forecast variables of steps ``start..stop-1`` are read: the file itself, or a window of it
        updated with ``forcing_forecast`` (gridded once, on the first call); and the steps there."""
        if self.forcing_forecast is None:
            return self.dataset, start, stop
        # imported here: the ingest stage (dask, zarr) is not a requirement of the served pyfunc model
        from hydroseq.forecast.forcing_file import read_forcing_forecast

        gridded, last_issue = self.forcing, stop - 1 if last_issue is None else last_issue
        if (gridded is None or self._updated_window is None
                or (gridded.start, gridded.stop, self._last_issue) != (start, stop, last_issue)):
            self.forcing = read_forcing_forecast(self.forcing_forecast, self.dataset, self.path, self.grid, start, stop,
                                                 self.forecast_source, last_issue)
            self._last_issue = last_issue
            self._updated_window = self.forcing.newer_than_ingested(self.dataset, self.metadata.forecast_horizon)
        return self._updated_window, 0, stop - start

    def read_target(self, start: int, stop: int, stations: np.ndarray | None = None) -> np.ndarray:
        """The observed target ``[station, time]`` on grid steps ``start..stop-1`` of the station rows ``stations``
        (default: all), as float32; all NaN in a file without the target."""
        rows = slice(None) if stations is None else stations
        if not self.has_target:
            shape = (len(np.arange(len(self.station_ids))[rows]), len(self.times[start:stop]))
            return np.full(shape, np.nan, np.float32)
        return self._series(self.dataset.isel(station=rows, time=slice(start, stop)), self.metadata.target)

    def ungauged_stations(self, window: StationData, start: int, issue: int) -> tuple[str, ...]:
        """Stations with no observed target on any grid step up to ``issue`` (none read after it);
        see :meth:`newest_observations`."""
        newest = self.newest_observations(window, start, issue)
        return tuple(station for station, step in zip(self.station_ids, newest, strict=True) if step < 0)

    def newest_observations(self, window: StationData, start: int, issue: int) -> np.ndarray:
        """Per station, the file's grid index of its newest observed target at or before ``issue`` (-1: none).

        ``window`` holds the steps from ``start`` on (:meth:`read`); only the stations without an
        observation there are read further back, a block of steps at a time, newest first.
        """
        newest = np.where(np.isfinite(window.target[:, :issue - start + 1]), np.arange(issue - start + 1), -1)
        newest = np.where(newest.max(axis=1, initial=-1) >= 0, start + newest.max(axis=1, initial=-1), -1)
        rows = np.flatnonzero(newest < 0) if self.has_target else np.zeros(0, np.int64)
        block = max(1, UNGAUGED_BLOCK_VALUES // max(1, len(rows)))
        stop = start
        while rows.size and stop > 0:
            first = max(0, stop - block)
            steps = np.where(np.isfinite(self.read_target(first, stop, rows)), np.arange(stop - first), -1).max(axis=1)
            newest[rows[steps >= 0]] = first + steps[steps >= 0]
            rows, stop = rows[steps < 0], first
        return newest

    def _series(self, window: xr.Dataset, name: str) -> np.ndarray:
        variable = window[name]
        if set(variable.dims) != {"station", "time"}:
            raise InputDataError(self.path, f"variable {name!r} has dims {variable.dims}, expected (station, time)")
        return np.asarray(variable.transpose("station", "time").values, dtype=np.float32)

    def info(self) -> StationInfo:
        """Station names, positions and areas, the target's units and names and the dataset checksum."""
        data = self.dataset
        target = (data[self.metadata.target].attrs if self.has_target
                  else {"units": self.metadata.input_units.get(self.metadata.target, "")})
        names = tuple(str(v) for v in data["station_name"].values) if "station_name" in data.variables else None
        return StationInfo(
            names=names,
            lats=np.asarray(data["lat"].values, np.float64) if "lat" in data.variables else None,
            lons=np.asarray(data["lon"].values, np.float64) if "lon" in data.variables else None,
            areas=np.asarray(data["area_km2"].values, np.float64) if "area_km2" in data.variables else None,
            target_units=str(target.get("units", "")),
            target_long_name=str(target.get("long_name", self.metadata.target)),
            target_standard_name=str(target.get("standard_name", "")),
            dataset_checksum=str(data.attrs.get("dataset_checksum", "")),
        )


def model_variables(metadata: ExportMetadata) -> list[str]:
    """The variables ``metadata``'s model reads: dynamic inputs, the target, the weather-forecast inputs and the
    static attributes, once each."""
    names = [*metadata.dynamic_inputs, metadata.target, *(item.variable for item in metadata.forecast_input_specs),
             *metadata.static_inputs]
    return list(dict.fromkeys(names))
