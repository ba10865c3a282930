"""Reading issued forecast products: NetCDF files in the layout cfgrib writes.

A file holds one or more reference times (``time``, a dimension or a scalar coordinate), a lead
dimension ``step`` (a duration in ``hours``, ``minutes``, ``seconds`` or ``days``), optionally a
``valid_time`` coordinate that must equal ``time + step``, and per variable either a station
dimension or a ``latitude``/``longitude`` grid (extracted at the stations with the code of the
``netcdf_grid`` observations). Every product becomes a :class:`Product`: its per-step values at
the stations, in canonical units, each standing for the interval ``(r + step_{k-1}, r + step_k]``
(``step_0`` = the reference time ``r``). Accumulations ``since_reference`` are differenced to
per-step amounts here (the step-0 value, if present, is the baseline; else 0); a step 0 of any
other variable is dropped (its interval is empty).

Checks, each an :class:`~hydroseq.errors.InputDataError` naming the file and the reference time
(and the variable): steps not strictly increasing, ``valid_time`` not ``time + step``, a ``units``
attribute that disagrees with the declared units, a ``GRIB_stepType`` that contradicts the
declared accumulation (``accum`` for sums, ``instant`` or ``avg`` for means), values that are not
finite or outside ``valid_min .. valid_max`` (after differencing, in the source units).
"""

from __future__ import annotations

import glob
import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

import hydroseq.ingest.plausibility as plausibility
import hydroseq.ingest.units as units
from hydroseq.config.forecast_source import ForecastSourceConfig, ForecastVariableSpec
from hydroseq.config.units import same_units
from hydroseq.errors import InputDataError
from hydroseq.ingest.readers.gridded import extract_at_station
from hydroseq.ingest.readers.integrity import check_complete
from hydroseq.ingest.readers.netcdf import _decode_times, mask_default_fill
from hydroseq.ingest.stations import Station

STEP_UNITS = {"days": "D", "day": "D", "d": "D", "hours": "h", "hour": "h", "h": "h", "minutes": "min",
              "minute": "min", "min": "min", "seconds": "s", "second": "s", "s": "s", "nanoseconds": "ns"}
UNIT_ALIASES = {"kg m**-2": "kg m-2", "kg m^-2": "kg m-2", "kg m**-2 s**-1": "kg m-2 s-1", "m s**-1": "m/s",
                "m s-1": "m/s", "mm d-1": "mm/d", "mm day-1": "mm/d", "mm h-1": "mm/h", "mm s-1": "mm/s",
                "kelvin": "K", "celsius": "degC", "degrees_celsius": "degC", "deg_c": "degC", "c": "degC",
                "fahrenheit": "degF", "metre": "m", "meter": "m", "millimetre": "mm", "millimeter": "mm"}
STEP_TYPES = {"sum": ("accum",), "mean": ("instant", "avg")}


@dataclass(frozen=True)
class Product:
    """One issued forecast at the stations.

    ``ends`` are the step ends in ns after the reference time (strictly increasing, > 0);
    ``values`` maps output names to ``(step, station)`` float64 per-step values in canonical units
    (mm per step for amounts), NaN where missing.
    """

    path: Path
    reference: np.datetime64
    ends: np.ndarray
    values: dict[str, np.ndarray]


def read_products(source: ForecastSourceConfig, stations: list[Station],
                  published_by: np.datetime64 | None = None) -> list[Product]:
    """Every product of ``source`` at ``stations``, sorted by reference time.

    ``published_by`` (a forecast at forecast time: its last issue label) leaves out, unread and
    unchecked, the products published after it (reference time + latency later): they are never
    used for an issue up to it, so a bad one must not fail that forecast. A file left with none
    is not checked at all.

    Raises
    ------
    InputDataError
        If no file matches, a file is unusable (see the module), or a reference time occurs twice.
    """
    paths = sorted(path for path in map(Path, glob.glob(source.path)) if path.is_file())
    if not paths:
        raise InputDataError(source.path, f"no file matches the path of forecast source {source.label!r}")
    products = sorted((p for path in paths for p in _read_file(source, path, stations, published_by)),
                      key=lambda p: p.reference)
    for earlier, later in itertools.pairwise(products):
        if earlier.reference == later.reference:
            raise InputDataError(later.path, f"reference time {_when(later.reference)} is also in {earlier.path}",
                                 f"reference time {_when(later.reference)}")
    return products


def _read_file(source: ForecastSourceConfig, path: Path, stations: list[Station],
               published_by: np.datetime64 | None) -> list[Product]:
    check_complete(path)
    try:
        with xr.open_dataset(path, decode_times=False, decode_timedelta=False, engine="netcdf4") as ds:
            return _products(source, path, ds, stations, published_by)
    except InputDataError:
        raise
    except (OSError, ValueError, RuntimeError, KeyError) as error:
        raise InputDataError(path, f"not a readable NetCDF file ({type(error).__name__}: {error})") from None


def _products(source: ForecastSourceConfig, path: Path, ds: xr.Dataset, stations: list[Station],
              published_by: np.datetime64 | None) -> list[Product]:
    references = np.atleast_1d(_decode_times(path, _variable(path, ds, source.reference_time_variable)))
    if np.isnat(references).any():
        raise InputDataError(path, "the reference time variable has missing values")
    used = np.ones(len(references), dtype=bool)
    if published_by is not None:
        used = references.astype("datetime64[ns]") + np.timedelta64(source.latency_step.value, "ns") <= published_by
        if not used.any():
            return []
    references = references[used]
    first = f"reference time {_when(references[0])}"
    steps = np.atleast_1d(_steps(path, _variable(path, ds, source.step_variable), first))
    _check_valid_time(source, path, ds, references, steps, used)
    dims = _dims(source, ds)
    station_index = _station_index(source, path, ds, stations) if source.layout == "station" else None
    per_step: dict[str, np.ndarray] = {}
    for name, spec in source.variables.items():
        raw = _field(path, ds, spec, name, dims, first)[used]  # (reference, step, station | lat, lon)
        if station_index is not None:
            at_stations = raw[..., station_index]
        else:
            lats = _variable(path, ds, source.latitude_variable).values.astype(np.float64)
            lons = _variable(path, ds, source.longitude_variable).values.astype(np.float64)
            extracted = [extract_at_station(path, lats, lons, {name: raw}, station, source.extraction,
                                            source.weights_path)[name] for station in stations]
            at_stations = np.stack(extracted, axis=-1)
        per_step[name] = _to_per_step(at_stations, steps, spec)
        _check_plausible(path, per_step[name], references, name, spec)
        per_step[name] = units.to_canonical(per_step[name], spec, None)
    keep = steps > 0
    return [Product(path, np.datetime64(reference, "ns"), steps[keep],
                    {name: values[position] for name, values in per_step.items()})
            for position, reference in enumerate(references)]


def _variable(path: Path, ds: xr.Dataset, name: str) -> xr.DataArray:
    if name not in ds.variables:
        raise InputDataError(path, f"no variable {name!r}; the file has {', '.join(map(str, ds.variables))}")
    return ds[name]


def _steps(path: Path, variable: xr.DataArray, where: str) -> np.ndarray:
    """Step ends in ns after the reference time; strictly increasing and not negative."""
    unit = STEP_UNITS.get(str(variable.attrs.get("units", "")).strip().lower())
    if unit is None or variable.ndim > 1:
        raise InputDataError(path, f"step variable {variable.name!r} must be 1-D with units hours, minutes, "
                             f"seconds or days, got units {variable.attrs.get('units')!r}", where)
    raw = variable.values.astype(np.float64)
    if not np.isfinite(raw).all():
        raise InputDataError(path, "the step variable has missing values", where)
    steps = pd.to_timedelta(np.atleast_1d(raw), unit=unit).as_unit("ns").asi8.copy()
    if len(steps) > 1 and not (np.diff(steps) > 0).all():
        bad = int(np.argmax(np.diff(steps) <= 0)) + 1
        raise InputDataError(path, f"steps are not strictly increasing: {pd.Timedelta(steps[bad - 1])} then "
                             f"{pd.Timedelta(steps[bad])}", where)
    if steps[0] < 0:
        raise InputDataError(path, f"negative step {pd.Timedelta(steps[0])}", where)
    return steps


def _check_valid_time(source: ForecastSourceConfig, path: Path, ds: xr.Dataset, references: np.ndarray,
                      steps: np.ndarray, used: np.ndarray) -> None:
    """``valid_time`` of the products ``used`` (a mask over the file's reference times) against ``references``."""
    if source.valid_time_variable not in ds.variables:
        return
    valid = _decode_times(path, ds[source.valid_time_variable]).reshape(len(used), len(steps))[used]
    expected = references.astype("datetime64[ns]")[:, None] + steps.astype("timedelta64[ns]")[None, :]
    wrong = valid != expected
    if wrong.any():
        row, col = np.unravel_index(int(np.argmax(wrong)), wrong.shape)
        raise InputDataError(path, f"{source.valid_time_variable} {_when(valid[row, col])} is not the reference time "
                             f"plus step {pd.Timedelta(int(steps[col]))}", f"reference time {_when(references[row])}")


def _dims(source: ForecastSourceConfig, ds: xr.Dataset) -> list[str | None]:
    """The dimension names, in the order the reader wants: reference, step, then station or lat, lon
    (a reference time or step that is a scalar coordinate has no dimension: ``None``)."""
    def dim_of(name: str) -> str | None:
        return str(ds[name].dims[0]) if name in ds.variables and ds[name].ndim == 1 else None
    if source.layout == "station":
        return [dim_of(source.reference_time_variable), dim_of(source.step_variable), source.station_dim]
    return [dim_of(source.reference_time_variable), dim_of(source.step_variable),
            dim_of(source.latitude_variable), dim_of(source.longitude_variable)]


def _field(path: Path, ds: xr.Dataset, spec: ForecastVariableSpec, name: str, dims: list[str | None],
           where: str) -> np.ndarray:
    variable = _variable(path, ds, spec.source)
    _check_attributes(path, variable, spec, name, where)
    wanted = [dim for dim in dims if dim is not None]
    extra = [dim for dim in variable.dims if dim not in wanted]
    if any(variable.sizes[dim] != 1 for dim in extra) or any(dim not in variable.dims for dim in wanted):
        raise InputDataError(path, f"variable {spec.source!r} (for {name}) has dimensions {variable.dims}; "
                             f"expected {tuple(wanted)}", where)
    values = variable.squeeze(extra).transpose(*wanted).values.astype(np.float64)
    values = mask_default_fill(variable, values)
    for axis, dim in enumerate(dims[:2]):
        if dim is None:
            values = np.expand_dims(values, axis)
    return values


def _check_attributes(path: Path, variable: xr.DataArray, spec: ForecastVariableSpec, name: str, where: str) -> None:
    declared = spec.units
    written = variable.attrs.get("units")
    if written is not None and spec.convert and not _same_units(str(written), declared):
        raise InputDataError(path, f"variable {spec.source!r} (for {name}) has units {written!r} in the file, but "
                             f"the config declares {declared!r}", where)
    step_type = variable.attrs.get("GRIB_stepType")
    if step_type is not None and str(step_type) not in STEP_TYPES[spec.aggregation]:
        declared_as = f"accumulation {spec.accumulation}" if spec.accumulation else "aggregation mean"
        raise InputDataError(path, f"variable {spec.source!r} (for {name}) has GRIB_stepType {step_type!r}, which "
                             f"contradicts its declared {declared_as} (expected "
                             f"{' or '.join(STEP_TYPES[spec.aggregation])})", where)


def _normalised(unit: str) -> str:
    text = unit.strip()
    return UNIT_ALIASES.get(text.lower(), UNIT_ALIASES.get(text, text))


def _same_units(written: str, declared: str) -> bool:
    """The file's ``units`` attribute names the declared unit: the same text after the aliases GRIB files use,
    or the same unit to the units library (``mm day-1`` and ``mm/d``, ``ft^3/s`` and ``cfs``)."""
    first, second = _normalised(written), _normalised(declared)
    return first == second or same_units(first, second)


def _to_per_step(values: np.ndarray, steps: np.ndarray, spec: ForecastVariableSpec) -> np.ndarray:
    """``(reference, step>0, station)`` per-step values in the source units."""
    keep = steps > 0
    if spec.accumulation != "since_reference":
        return values[:, keep]
    baseline = values[:, :1] if not keep[0] else np.zeros_like(values[:, :1])
    return np.diff(np.concatenate([baseline, values[:, keep]], axis=1), axis=1)


def _check_plausible(path: Path, values: np.ndarray, references: np.ndarray, name: str,
                     spec: ForecastVariableSpec) -> None:
    low, high = plausibility.bounds(spec)
    with np.errstate(invalid="ignore"):
        bad = np.isinf(values) | (values < low) | (values > high)
    if bad.any():
        position = np.unravel_index(int(np.argmax(bad)), bad.shape)
        value = float(values[position])
        kind = "per-step " if spec.accumulation == "since_reference" else ""
        raise InputDataError(path, f"variable {name} ({spec.source}): {kind}value {value:g} {spec.units} at step "
                             f"{int(position[1]) + 1} is not finite or outside {low:g} .. {high:g} (set "
                             "valid_min/valid_max of the variable)", f"reference time {_when(references[position[0]])}")


def _station_index(source: ForecastSourceConfig, path: Path, ds: xr.Dataset, stations: list[Station]) -> np.ndarray:
    if source.station_dim not in ds.dims:
        raise InputDataError(path, f"no dimension {source.station_dim!r}; dimensions are "
                             f"{', '.join(map(str, ds.dims))}")
    name = source.station_id_variable or (source.station_dim if source.station_dim in ds.variables else "station_id")
    raw = _variable(path, ds, name).values.tolist()
    prefix = source.station_id_prefix
    ids = [(item.decode() if isinstance(item, bytes) else str(item)).strip() for item in raw]
    ids = [i[len(prefix):] if prefix and i.startswith(prefix) else i for i in ids]
    missing = [station.id for station in stations if station.id not in ids]
    if missing:
        raise InputDataError(path, f"forecast source {source.label!r} has no data for station(s) "
                             f"{', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}")
    return np.array([ids.index(station.id) for station in stations], dtype=np.int64)


def _when(stamp: np.datetime64) -> str:
    return str(pd.Timestamp(stamp))
