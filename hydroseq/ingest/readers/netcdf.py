"""NetCDF with a station dimension (also Caravan NetCDF).

Handles: a CF time coordinate (``days since ...``) or a numeric time variable in plain ``ns``
since 1970 that may vary per station (NextGen forcing files: ``Time(catchment-id, time)``);
station ids in a variable or coordinate, as text or bytes, with an optional prefix to strip
(Caravan: ``camels_01022500``); single-station files without a station dimension (name the
station with ``station:``, or ``station_from_filename`` for one file per station, as Caravan's
``timeseries/netcdf/<source>/<source>_<basin>.nc``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import netCDF4
import numpy as np
import pandas as pd
import xarray as xr

from hydroseq.config.ingest import SourceConfig
from hydroseq.errors import InputDataError
from hydroseq.ingest.readers.base import RawSeries, cached_per_file
from hydroseq.ingest.readers.integrity import check_complete

TIME_NAMES = ("time", "date", "Time")
CARAVAN_STATION_DIM = "basin_id"


@dataclass(frozen=True)
class _Loaded:
    ids: list[str]
    times: np.ndarray            # datetime64[ns]: (time,) or (station, time)
    values: dict[str, np.ndarray]  # variable -> (station, time) float64
    utc_offset: int | None       # ns, when the CF reference time gives one (times are then UTC)


def station_ids(source: SourceConfig, path: Path) -> list[str]:
    """The station ids in the file (after stripping ``station_id_prefix``)."""
    return list(_load(path, source).ids)


def read(source: SourceConfig, path: Path, station_id: str) -> RawSeries:
    """One station's series from a NetCDF file."""
    loaded = _load(path, source)
    position = loaded.ids.index(station_id)
    times = loaded.times if loaded.times.ndim == 1 else loaded.times[position]
    stamps = pd.DatetimeIndex(times).as_unit("ns")
    if stamps.isna().any():
        raise InputDataError(path, "the time variable has missing values",
                             f"station {station_id}, time index {int(np.argmax(stamps.isna()))}")
    values = {name: loaded.values[name][position] for name in source.variables}
    offsets = None if loaded.utc_offset is None else np.full(len(stamps), loaded.utc_offset, dtype=np.int64)
    return RawSeries(path, stamps, values, None, offsets)


@cached_per_file(maxsize=4)
def _load(path: Path, source: SourceConfig) -> _Loaded:
    check_complete(path)
    try:
        with xr.open_dataset(path, decode_times=False, engine="netcdf4") as ds:
            return _extract(path, ds, source)
    except (OSError, ValueError, RuntimeError, KeyError) as error:
        if isinstance(error, InputDataError):
            raise
        raise InputDataError(path, f"not a readable NetCDF file ({type(error).__name__}: {error})") from None


def _extract(path: Path, ds: xr.Dataset, source: SourceConfig) -> _Loaded:
    time_name = _time_name(path, ds, source)
    time_dim = str(ds[time_name].dims[-1])
    station_dim = _station_dim(ds, source, time_dim)
    ids = _ids(path, ds, source, station_dim)
    times = _decode_times(path, ds[time_name])
    if times.ndim == 2 and times.shape[0] != len(ids):
        times = times.T
    values = {}
    for name, spec in source.variables.items():
        if spec.source not in ds.variables:
            raise InputDataError(path, f"variable {spec.source!r} (for {name}) is not in the file; it has "
                                 f"{', '.join(map(str, ds.data_vars))}")
        variable = ds[spec.source]
        values[name] = mask_default_fill(variable, _station_by_time(path, variable, station_dim, time_dim))
    return _Loaded(ids, times, values, reference_offset(path, ds[time_name]))


def _time_name(path: Path, ds: xr.Dataset, source: SourceConfig) -> str:
    names = [source.time_variable] if source.time_variable else list(TIME_NAMES)
    for name in names:
        if name in ds.variables:
            return name
    raise InputDataError(path, f"no time variable (looked for {', '.join(names)}); set time_variable")


def _station_dim(ds: xr.Dataset, source: SourceConfig, time_dim: str) -> str | None:
    if source.station_dim:
        return source.station_dim
    if source.format == "caravan_netcdf" and CARAVAN_STATION_DIM in ds.dims:
        return CARAVAN_STATION_DIM
    others = [str(dim) for dim in ds.dims if dim != time_dim and ds.sizes[dim] > 1]
    return others[0] if len(others) == 1 and source.station is None else None


def _ids(path: Path, ds: xr.Dataset, source: SourceConfig, station_dim: str | None) -> list[str]:
    if source.station is not None:
        return [source.station]
    if station_dim is None:
        if not source.station_from_filename:
            raise InputDataError(path, "the file has no station dimension: name its station with `station:` "
                                 "or set station_from_filename")
        ids = [path.stem]
    else:
        ids = _ids_along(path, ds, source, station_dim)
    prefix = source.station_id_prefix
    stripped = [i.strip()[len(prefix):] if prefix and i.strip().startswith(prefix) else i.strip() for i in ids]
    return [source.station_map.get(i, i) for i in stripped]


def _ids_along(path: Path, ds: xr.Dataset, source: SourceConfig, station_dim: str) -> list[str]:
    if station_dim not in ds.dims:
        raise InputDataError(path, f"no dimension {station_dim!r}; dimensions are {', '.join(map(str, ds.dims))}")
    name = source.station_id_variable or (station_dim if station_dim in ds.variables else None)
    if name is None:
        name = next((v for v in ("ids", "station_id", "basin_id") if v in ds.variables), None)
    if name is None:
        raise InputDataError(path, f"no variable holds the ids along {station_dim!r}; set station_id_variable")
    return [item.decode() if isinstance(item, bytes) else str(item) for item in ds[name].values.tolist()]


def reference_offset(path: Path, variable: xr.DataArray) -> int | None:
    """The UTC offset (ns) written in a CF time unit (``hours since 2015-01-01 00:00 -05:00``), or
    ``None``. xarray has already converted such times to UTC with it."""
    units = str(variable.attrs.get("units", ""))
    if " since " not in units:
        return None
    try:
        reference = pd.Timestamp(units.split(" since ", 1)[1].strip())
    except (ValueError, TypeError):
        return None  # a reference xarray decodes but pandas cannot parse carries no offset we know
    offset = reference.utcoffset()
    return None if offset is None else int(offset.total_seconds()) * 10**9


def mask_default_fill(variable: xr.DataArray, values: np.ndarray) -> np.ndarray:
    """Values equal to the netCDF default fill value of the variable's stored type as NaN, when it
    declares no ``_FillValue`` (the netCDF convention: unwritten values then hold the default)."""
    encoding = variable.encoding
    if "_FillValue" in encoding or "_FillValue" in variable.attrs or "dtype" not in encoding:
        return values
    default = netCDF4.default_fillvals.get(np.dtype(encoding["dtype"]).str[1:])
    if default is None:
        return values
    return np.where(values == np.float64(np.asarray(default, dtype=encoding["dtype"])), np.nan, values)


def _decode_times(path: Path, variable: xr.DataArray) -> np.ndarray:
    units = str(variable.attrs.get("units", ""))
    if units == "ns":
        raw = variable.values.astype(np.float64)
        decoded = np.full(raw.shape, np.datetime64("NaT"), dtype="datetime64[ns]")
        finite = np.isfinite(raw)
        decoded[finite] = raw[finite].astype(np.int64).astype("datetime64[ns]")
        return decoded
    if " since " not in units:
        raise InputDataError(path, f"time variable {variable.name!r} has units {units!r}; expected "
                             "CF '<unit> since <date>' or 'ns'")
    wrapped = xr.Dataset({"t": (variable.dims, variable.values, dict(variable.attrs))})
    try:
        decoded = xr.decode_cf(wrapped)["t"].values
    except (ValueError, OverflowError) as error:
        raise InputDataError(path, f"cannot decode time variable {variable.name!r}: {error}") from None
    if decoded.dtype.kind != "M":
        raise InputDataError(path, f"time variable {variable.name!r} uses a non-standard calendar")
    return decoded.astype("datetime64[ns]")


def _station_by_time(path: Path, variable: xr.DataArray, station_dim: str | None, time_dim: str) -> np.ndarray:
    extra = [d for d in variable.dims if d not in (station_dim, time_dim)]
    if time_dim not in variable.dims or any(variable.sizes[d] != 1 for d in extra):
        raise InputDataError(path, f"variable {variable.name!r} has dimensions {variable.dims}; expected "
                             f"({station_dim}, {time_dim})")
    data = variable.squeeze(extra) if extra else variable
    if station_dim is None or station_dim not in data.dims:
        return data.transpose(time_dim).values.astype(np.float64)[np.newaxis, :]
    return data.transpose(station_dim, time_dim).values.astype(np.float64)
