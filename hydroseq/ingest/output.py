"""The ingested dataset: CF-1.8 NetCDF4 as described in ``docs/dataset-format.md``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import xarray as xr

from hydroseq import __version__
from hydroseq.config import IngestConfig, dump_config
from hydroseq.config.ingest import SourceConfig
from hydroseq.config.variables import VariableSpec
from hydroseq.fileio import atomic_path, sha256_file
from hydroseq.grid import GridSpec
from hydroseq.ingest import units
from hydroseq.ingest.forecast_grid import ForecastOnGrid
from hydroseq.ingest.station import StationResult
from hydroseq.ingest.timegrid import TimeGrid

# float64 minutes: CF-1.8 has no 64-bit integers; whole minutes are exact over all of datetime64[ns]
TIME_ENCODING = {"units": "minutes since 1970-01-01 00:00:00", "calendar": "proleptic_gregorian", "dtype": "float64"}
_TIME_BOUNDS = "time_bnds"
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
    coords = {
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
    data_vars: dict[str, tuple[str | tuple[str, ...], np.ndarray, dict[str, str]]] = {}
    for source in config.sources:
        for name, spec in source.variables.items():
            stacked = np.stack([result.values[name] for result in results]).astype(np.float32)
            data_vars[name] = (("station", "time"), stacked, _dynamic_attrs(name, spec, source))
            data_vars[f"coverage_{name}"] = ("station", np.mean(np.isfinite(stacked), axis=1).astype(np.float32),
                                             {"long_name": f"fraction of grid steps with a valid {name}",
                                              "units": "1", "hydroseq_role": "coverage"})
    static_units = config.stations.static_units
    for attribute in config.stations.static_attributes:
        units_attr = {"units": static_units[attribute]} if attribute in static_units else {}
        data_vars[attribute] = ("station", np.array([s.static[attribute] for s in stations], dtype=np.float32),
                                {"long_name": attribute, **units_attr, "hydroseq_role": "static"})
    if forecasts:
        horizon = max(forecast.source.horizon for forecast in forecasts)
        coords["lead"] = ("lead", np.arange(1, horizon + 1, dtype=np.int32),
                          {"long_name": "lead time in grid steps: lead l of issue t covers "
                                        "(t + (l-1) step, t + l step]", "units": "1"})
        for forecast in forecasts:
            data_vars.update(_forecast_variables(forecast, horizon))
    ds = xr.Dataset(data_vars, coords=coords)
    ds.attrs = _global_attrs(config, grid, source_files, len(stations))
    ds.attrs["dataset_checksum"] = dataset_checksum(ds)
    return ds


def write_dataset(ds: xr.Dataset, out: str | Path) -> None:
    """Write ``ds`` to ``out`` atomically (temporary file beside it, then rename), with the
    interval of each time label as CF cell bounds (``time_bnds``, derived from the grid step)."""
    ds = _with_time_bounds(ds)
    encoding: dict[str, dict] = {str(name): {"_FillValue": np.float32(np.nan)} for name in ds.data_vars
                                 if ds[name].dtype == np.float32}
    encoding["time"] = encoding[_TIME_BOUNDS] = {**TIME_ENCODING, "_FillValue": None}
    for name in ("station", "station_name"):
        encoding[name] = {"dtype": str}
    for variable in ds.data_vars.values():
        if variable.dtype.kind == "M" and variable.name != _TIME_BOUNDS:
            encoding[str(variable.name)] = {**TIME_ENCODING, "_FillValue": np.nan}
    with atomic_path(out) as tmp:
        ds.to_netcdf(tmp, engine="netcdf4", format="NETCDF4", encoding=encoding)


def dataset_checksum(ds: xr.Dataset) -> str:
    """SHA-256 over every variable's and coordinate's name and values (not attributes), cell
    bounds excepted (they follow from the labels and the grid step).

    Values are canonicalised (text as UTF-8, times as int64 ns, NaN as one bit pattern) so the
    digest is the same before writing and after reading the file back, whatever the writer.
    """
    bounds = {str(ds[name].attrs["bounds"]) for name in ds.variables if "bounds" in ds[name].attrs}
    digest = hashlib.sha256()
    for name in sorted(set(map(str, ds.variables)) - bounds):
        values = np.asarray(ds[name].values)
        digest.update(name.encode() + b"\0" + str(values.shape).encode() + b"\0")
        digest.update(_canonical_bytes(values))
    return digest.hexdigest()


def history_line(command: str, labels: np.ndarray, n_stations: int) -> str:
    """One line of the CF ``history``: what ``command`` wrote, without a clock time (reproducible)."""
    first, last = (np.datetime_as_string(np.asarray(labels)[i].astype("datetime64[m]")) for i in (0, -1))
    return f"hydroseq {__version__} {command}: {n_stations} stations, grid labels {first}Z..{last}Z"


def _with_time_bounds(ds: xr.Dataset) -> xr.Dataset:
    """A shallow copy of ``ds`` with ``time_bnds(time, nv)``: ``(t - step, t]`` for each label ``t``."""
    step = np.timedelta64(GridSpec.from_attrs(ds.attrs).step.value, "ns")
    labels = ds["time"].values.astype("datetime64[ns]")
    bounded = ds.assign({_TIME_BOUNDS: (("time", "nv"), np.stack([labels - step, labels], axis=1))})
    bounded["time"].attrs = {**ds["time"].attrs, "bounds": _TIME_BOUNDS}
    return bounded


def _canonical_bytes(values: np.ndarray) -> bytes:
    if values.dtype.kind in "OUS":
        items = [item.decode() if isinstance(item, bytes) else str(item) for item in values.ravel().tolist()]
        return "\x1f".join(items).encode()
    if values.dtype.kind == "M":
        return values.astype("datetime64[ns]").view(np.int64).tobytes()
    if values.dtype.kind == "f":
        canonical = np.where(np.isnan(values), np.nan, values).astype(values.dtype)
        return values.dtype.str.encode() + np.ascontiguousarray(canonical).tobytes()
    return values.dtype.str.encode() + np.ascontiguousarray(values).tobytes()


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
        padded = np.full((*values.shape[:2], horizon), np.nan, dtype=np.float32)
        padded[..., :values.shape[2]] = values
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
        }
        standard_name = spec.standard_name or _guess_standard_name(name, spec.resolved_output_units)
        if standard_name:
            attrs["standard_name"] = standard_name
        variables[name] = (("station", "time", "lead"), padded, attrs)
        variables[f"{name}_reference_time"] = (("station", "time"), forecast.reference_time, {
            "long_name": f"reference time of the {source.label} product used for {name} at each issue (UTC)",
            "hydroseq_role": "forecast_reference_time", "forecast_variable": name})
    return variables


def _guess_standard_name(name: str, output_units: str) -> str | None:
    for fragment, unit, standard_name in _STANDARD_NAMES:
        if fragment in name and unit == output_units:
            return standard_name
    return None


def _global_attrs(config: IngestConfig, grid: TimeGrid, source_files: list[Path], n_stations: int) -> dict[str, str]:
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
