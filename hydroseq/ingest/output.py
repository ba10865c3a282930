"""The ingested dataset: CF-1.8 NetCDF4 as ``docs/dataset-format.md`` describes it (Zarr: :mod:`.zarr_output`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

import hydroseq.ingest.units as units
from hydroseq import __version__
from hydroseq.config import IngestConfig, dump_config
from hydroseq.config.ingest import SourceConfig
from hydroseq.config.variables import VariableSpec
from hydroseq.fileio import atomic_path, sha256_file
from hydroseq.grid import GridSpec
from hydroseq.ingest.checksum import dataset_checksum
from hydroseq.ingest.forecast_grid import ForecastOnGrid
from hydroseq.ingest.station import StationResult
from hydroseq.ingest.stations import Station
from hydroseq.ingest.timegrid import TimeGrid

# float64 minutes: CF-1.8 has no 64-bit integers; whole minutes are exact over all of datetime64[ns]
TIME_ENCODING = {"units": "minutes since 1970-01-01 00:00:00", "calendar": "proleptic_gregorian", "dtype": "float64"}
_TIME_BOUNDS = "time_bnds"
# The ids as a CF character array station(station, station_id_length): xarray reads it back as the text index
# of the station dimension (ds.sel(station="01022500")), and, having two dimensions, it is no CF coordinate
# variable, which CF-1.8 wants numeric and monotonic (the checker's monotonicity test fails on text).
STATION_ID_ENCODING = {"dtype": "S1", "char_dim_name": "station_id_length"}
_STANDARD_NAMES = (  # (name fragment, output unit) -> CF standard name, when the config gives none
    ("precipitation", "mm", "lwe_thickness_of_precipitation_amount"),
    ("precipitation", "mm/d", "lwe_precipitation_rate"),
    ("precipitation", "mm/h", "lwe_precipitation_rate"),
    ("temperature", "degC", "air_temperature"),
    ("temperature", "K", "air_temperature"),
    ("streamflow", "m3/s", "water_volume_transport_in_river_channel"),
    ("discharge", "m3/s", "water_volume_transport_in_river_channel"),
)


def build_dataset(config: IngestConfig, grid: TimeGrid, results: list[StationResult],
                  source_files: list[Path], forecasts: tuple[ForecastOnGrid, ...] = ()) -> xr.Dataset:
    """Assemble the dataset (in memory) from the per-station results and the forecast sources on
    the grid, with every attribute of the contract including ``dataset_checksum``."""
    stations = [result.station for result in results]
    stacked = {name: np.stack([result.values[name] for result in results]) for name in observed_names(config)}
    ds = xr.Dataset({**observed_variables(config, stacked), **static_variables(config, stations)},
                    coords=station_coords(stations, grid))
    if forecasts:
        ds = ds.merge(forecast_dataset(forecasts))
    ds.attrs = global_attrs(config, grid, source_files, len(stations))
    ds.attrs["dataset_checksum"] = dataset_checksum(ds)
    return ds


def station_coords(stations: list[Station], grid: TimeGrid) -> dict[str, tuple[str, np.ndarray, dict[str, str]]]:
    """The ``station`` and ``time`` coordinates and the per-station ones (name, position, area)."""
    return {
        "station": ("station", np.array([s.id for s in stations], dtype=object),
                    {"long_name": "station id", "cf_role": "timeseries_id"}),
        "time": ("time", grid.labels.to_numpy(),
                 {"long_name": "end of the grid interval (UTC)", "standard_name": "time", "axis": "T"}),
        "station_name": ("station", np.array([s.name for s in stations], dtype=object), {"long_name": "station name"}),
        "lat": ("station", np.array([s.lat for s in stations]),
                {"standard_name": "latitude", "units": "degrees_north"}),
        "lon": ("station", np.array([s.lon for s in stations]),
                {"standard_name": "longitude", "units": "degrees_east"}),
        "area_km2": ("station", np.array([s.area_km2 for s in stations]),
                     {"long_name": "catchment area", "units": "km2"}),
    }


def observed_names(config: IngestConfig) -> list[str]:
    """The dynamic variables of ``config``'s sources, in config order."""
    return [name for source in config.sources for name in source.variables]


def observed_variables(config: IngestConfig,
                       stacked: Mapping[str, Any]) -> dict[str, tuple[Any, Any, dict[str, str]]]:
    """Each dynamic variable (``stacked[name]``, station x time) as float32, followed by its coverage.

    ``stacked`` may hold numpy or dask arrays (a lazy template of the variables, see
    :mod:`hydroseq.ingest.zarr_output`)."""
    variables: dict[str, tuple[Any, Any, dict[str, str]]] = {}
    for source in config.sources:
        for name, spec in source.variables.items():
            values = stacked[name].astype(np.float32)
            variables[name] = (("station", "time"), values, _dynamic_attrs(name, spec, source))
            variables[f"coverage_{name}"] = ("station", np.mean(np.isfinite(values), axis=1).astype(np.float32),
                                             {"long_name": f"fraction of grid steps with a valid {name}",
                                              "units": "1", "hydroseq_role": "coverage"})
    return variables


def static_variables(config: IngestConfig,
                     stations: list[Station]) -> dict[str, tuple[str, np.ndarray, dict[str, str]]]:
    """The station attributes of the stations table that the config names, as float32 ``(station,)``."""
    static_units = config.stations.static_units
    variables = {}
    for attribute in config.stations.static_attributes:
        units_attr = {"units": static_units[attribute]} if attribute in static_units else {}
        variables[attribute] = ("station", np.array([s.static[attribute] for s in stations], dtype=np.float32),
                                {"long_name": attribute, **units_attr, "hydroseq_role": "static"})
    return variables


def forecast_dataset(forecasts: tuple[ForecastOnGrid, ...]) -> xr.Dataset:
    """The forecast variables ``(station, time, lead)`` (an ensemble's ``(station, time, lead, member)``),
    their reference times and the ``lead`` (and ``member``) coordinates."""
    horizon = max(forecast.source.horizon for forecast in forecasts)
    coords: dict[str, tuple] = {"lead": ("lead", np.arange(1, horizon + 1, dtype=np.int32),
                                         {"long_name": "lead time in grid steps: lead l of issue t covers "
                                                       "(t + (l-1) step, t + l step]", "units": "1"})}
    sizes = {forecast.source.members for forecast in forecasts if forecast.source.members is not None}
    assert len(sizes) <= 1, "validated by IngestConfig"
    if sizes:
        coords["member"] = ("member", np.arange(sizes.pop(), dtype=np.int32),
                            {"long_name": "ensemble member: 0 is the control forecast", "standard_name": "realization",
                             "units": "1"})
    variables = {}
    for forecast in forecasts:
        variables.update(_forecast_variables(forecast, horizon))
    return xr.Dataset(variables, coords=coords)


def cf_encoding(ds: xr.Dataset) -> dict[str, dict]:
    """The encoding every writer uses: NaN as float32 fill value, times as :data:`TIME_ENCODING`."""
    encoding: dict[str, dict] = {str(name): {"_FillValue": np.float32(np.nan)} for name in ds.data_vars
                                 if ds[name].dtype == np.float32}
    encoding["time"] = encoding[_TIME_BOUNDS] = {**TIME_ENCODING, "_FillValue": None}
    for variable in ds.data_vars.values():
        if variable.dtype.kind == "M" and variable.name != _TIME_BOUNDS:
            encoding[str(variable.name)] = {**TIME_ENCODING, "_FillValue": np.nan}
    return encoding


def write_dataset(ds: xr.Dataset, out: str | Path) -> None:
    """Write ``ds`` to ``out`` atomically (temporary file beside it, then rename), with the
    interval of each time label as CF cell bounds (``time_bnds``, derived from the grid step)."""
    ds = with_time_bounds(ds)
    encoding = cf_encoding(ds)
    encoding["station"] = dict(STATION_ID_ENCODING)
    encoding["station_name"] = {"dtype": str}
    with atomic_path(out) as tmp:
        ds.to_netcdf(tmp, engine="netcdf4", format="NETCDF4", encoding=encoding)


def history_line(command: str, labels: np.ndarray, n_stations: int) -> str:
    """One line of the CF ``history``: what ``command`` wrote, without a clock time (reproducible)."""
    first, last = (np.datetime_as_string(np.asarray(labels)[i].astype("datetime64[m]")) for i in (0, -1))
    return f"hydroseq {__version__} {command}: {n_stations} stations, grid labels {first}Z..{last}Z"


def with_time_bounds(ds: xr.Dataset) -> xr.Dataset:
    """A shallow copy of ``ds`` with ``time_bnds(time, nv)``: ``(t - step, t]`` for each label ``t``."""
    step = np.timedelta64(GridSpec.from_attrs(ds.attrs).step.value, "ns")
    labels = ds["time"].values.astype("datetime64[ns]")
    bounded = ds.assign({_TIME_BOUNDS: (("time", "nv"), np.stack([labels - step, labels], axis=1))})
    bounded["time"].attrs = {**ds["time"].attrs, "bounds": _TIME_BOUNDS}
    return bounded


def _dynamic_attrs(name: str, spec: VariableSpec, source: SourceConfig) -> dict[str, str]:
    method = f"time: {spec.aggregation}"
    method += f" (source step {source.frequency}, stamps {source.timestamp.replace('_', ' ')})"
    attrs = {
        "units": units.cf_units(spec),
        "long_name": spec.long_name or name.replace("_", " "),
        "cell_methods": method,
        "hydroseq_role": "dynamic",
        "hydroseq_source": source.label,
    }
    standard_name = spec.standard_name or _guess_standard_name(name, spec.resolved_output_units)
    if standard_name:
        attrs["standard_name"] = standard_name
    return attrs


def _forecast_variables(forecast: ForecastOnGrid,
                        horizon: int) -> dict[str, tuple[tuple[str, ...], np.ndarray, dict[str, str]]]:
    source = forecast.source
    variables: dict[str, tuple[tuple[str, ...], np.ndarray, dict[str, str]]] = {}
    for name, spec in source.variables.items():
        values = forecast.values[name]
        padded = np.full((*values.shape[:2], horizon, *values.shape[3:]), np.nan, dtype=np.float32)
        padded[:, :, :values.shape[2]] = values
        attrs = {
            "units": units.cf_units(spec),
            "long_name": spec.long_name or name.replace("_", " "),
            "cell_methods": f"lead: {spec.aggregation} over the lead's grid interval",
            "hydroseq_role": "forecast",
            "forecast_source": source.label,
            "forecast_latency": source.latency,
            "forecast_issue_frequency": source.issue_frequency,
            "forecast_horizon": str(source.horizon),
            "forecast_on_missing_product": source.on_missing_product,
            "accumulation": spec.accumulation or "none",
            "forecast_format": source.format,
        }
        if source.members is not None:
            attrs["forecast_members"] = str(source.members)
        standard_name = spec.standard_name or _guess_standard_name(name, spec.resolved_output_units)
        if standard_name:
            attrs["standard_name"] = standard_name
        dims = ("station", "time", "lead", "member") if source.members is not None else ("station", "time", "lead")
        variables[name] = (dims, padded, attrs)
        variables[f"{name}_reference_time"] = (("station", "time"), forecast.reference_time, {
            "long_name": f"reference time of the {source.label} product used for {name} at each issue (UTC)",
            "hydroseq_role": "forecast_reference_time", "forecast_variable": name})
    return variables


def _guess_standard_name(name: str, output_units: str) -> str | None:
    for fragment, unit, standard_name in _STANDARD_NAMES:
        if fragment in name and unit == output_units:
            return standard_name
    return None


def global_attrs(config: IngestConfig, grid: TimeGrid, source_files: list[Path], n_stations: int) -> dict[str, str]:
    """The global attributes of the contract, ``dataset_checksum`` excepted."""
    return {
        "Conventions": "CF-1.8",
        "featureType": "timeSeries",
        "title": config.title or "hydroseq ingested dataset",
        "history": history_line("ingest", grid.labels.to_numpy(), n_stations),
        "hydroseq_version": __version__,
        **grid.spec.to_attrs(),
        "source_files": json.dumps([{"path": str(path), "sha256": sha256_file(path)} for path in source_files]),
        "ingest_config": dump_config(config),
    }
