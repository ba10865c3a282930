"""Reading issued forecast products: GRIB2 run files, or NetCDF files in the layout cfgrib writes.

The reader of the source's ``format`` (:data:`hydroseq.ingest.readers.FORECAST_READERS`) opens a file into
the NetCDF layout (GRIB2: :mod:`hydroseq.ingest.readers.grib`, which checks every message and every
member's fields), so every format shares what follows. A file holds one or more reference times (``time``, a dimension
or a scalar coordinate), a lead dimension ``step`` (a duration in ``hours``, ``minutes``,
``seconds`` or ``days``), optionally a ``valid_time`` coordinate that must equal ``time + step``,
and per variable either a station dimension or a ``latitude``/``longitude`` grid (extracted at
the stations with the code of the ``netcdf_grid`` observations), and for an ensemble
(``members``) a member dimension. Every product becomes a :class:`Product`: its per-step values
at the stations (and members), in canonical units, each standing for the interval
``(r + step_{k-1}, r + step_k]`` (``step_0`` = the reference time ``r``). Accumulations
``since_reference`` are differenced to per-step amounts here (the step-0 value, if present, is
the baseline; else 0); a step 0 of any
other variable is dropped (its interval is empty).

Checks (:mod:`hydroseq.ingest.forecast_checks`), each an :class:`~hydroseq.errors.InputDataError`
naming the file and the reference time (and the variable): steps not strictly increasing,
``valid_time`` not ``time + step``, a ``units`` attribute that disagrees with the declared units,
a ``GRIB_stepType`` that contradicts the declared accumulation (``accum`` for sums, ``instant`` or
``avg`` for means), values that are not finite or outside ``valid_min .. valid_max`` (after
differencing, in the source units), a step the
config's ``steps`` lists that the run lacks, a member count other than ``members``.
"""

from __future__ import annotations

import glob
import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

import hydroseq.ingest.forecast_checks as forecast_checks
import hydroseq.ingest.units as units
from hydroseq.config.forecast_source import ForecastSourceConfig, ForecastVariableSpec
from hydroseq.errors import InputDataError
from hydroseq.ingest.readers import forecast_reader
from hydroseq.ingest.readers.gridded import extract_at_station
from hydroseq.ingest.readers.netcdf import _decode_times, mask_default_fill
from hydroseq.ingest.stations import Station

STEP_UNITS = {"days": "D", "day": "D", "d": "D", "hours": "h", "hour": "h", "h": "h", "minutes": "min",
              "minute": "min", "min": "min", "seconds": "s", "second": "s", "s": "s", "nanoseconds": "ns"}
PACKING_TOLERANCE_MM = 0.05  # per-step amount below 0 taken as the packing's rounding (see _to_per_step)


@dataclass(frozen=True)
class Product:
    """One issued forecast at the stations.

    ``ends`` are the step ends in ns after the reference time (strictly increasing, > 0);
    ``values`` maps output names to ``(step, column)`` float64 per-step values in canonical units
    (mm per step for amounts), NaN where missing; the columns are the stations, and for an
    ensemble each station's ``members`` members in turn (station-major).
    """

    path: Path
    reference: np.datetime64
    ends: np.ndarray
    values: dict[str, np.ndarray]
    members: int = 1


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
    with forecast_reader(source).open_run(source, path) as ds:
        return _products(source, path, ds, stations, published_by)


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
    if source.steps is not None:
        forecast_checks.check_expected_steps(source, path, steps, first)
    forecast_checks.check_valid_time(source, path, ds, references, steps, used)
    members = forecast_checks.member_count(source, path, ds, first)
    dims = _dims(source, ds)
    station_index = _station_index(source, path, ds, stations) if source.layout == "station" else None
    per_step: dict[str, np.ndarray] = {}
    for name, spec in source.variables.items():
        raw = _field(path, ds, spec, name, dims, first)[used]  # (reference, step, member, station | lat, lon)
        if station_index is not None:
            at_stations = raw[..., station_index]
        else:
            lats = _variable(path, ds, source.latitude_variable).values.astype(np.float64)
            lons = _variable(path, ds, source.longitude_variable).values.astype(np.float64)
            extracted = [extract_at_station(path, lats, lons, {name: raw}, station, source.extraction,
                                            source.weights_path)[name] for station in stations]
            at_stations = np.stack(extracted, axis=-1)
        forecast_checks.check_covered(source, path, at_stations, stations, name, first)
        columns = np.swapaxes(at_stations, 2, 3).reshape(*at_stations.shape[:2], -1)  # station-major
        forecast_checks.check_accumulated(path, columns, references, steps, name, spec, stations, members,
                                          PACKING_TOLERANCE_MM)
        per_step[name] = _to_per_step(columns, steps, spec)
        forecast_checks.check_plausible(path, per_step[name], references, steps, name, spec, stations, members)
        per_step[name] = units.to_canonical(per_step[name], spec, None)
    keep = steps > 0
    return [Product(path, np.datetime64(reference, "ns"), steps[keep],
                    {name: values[position] for name, values in per_step.items()}, members)
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


def _dims(source: ForecastSourceConfig, ds: xr.Dataset) -> list[str | None]:
    """The dimension names, in the order the reader wants: reference, step, member, then station or
    lat, lon (a reference time, step or member that is a scalar coordinate, or a deterministic
    product's member, has no dimension: ``None``)."""
    def dim_of(name: str) -> str | None:
        return str(ds[name].dims[0]) if name in ds.variables and ds[name].ndim == 1 else None
    member = source.member_dim if source.member_dim in ds.dims and source.members is not None else None
    if source.layout == "station":
        return [dim_of(source.reference_time_variable), dim_of(source.step_variable), member, source.station_dim]
    return [dim_of(source.reference_time_variable), dim_of(source.step_variable), member,
            dim_of(source.latitude_variable), dim_of(source.longitude_variable)]


def _field(path: Path, ds: xr.Dataset, spec: ForecastVariableSpec, name: str, dims: list[str | None],
           where: str) -> np.ndarray:
    variable = _variable(path, ds, spec.source)
    forecast_checks.check_attributes(path, variable, spec, name, where)
    wanted = [dim for dim in dims if dim is not None]
    extra = [dim for dim in variable.dims if dim not in wanted]
    if any(variable.sizes[dim] != 1 for dim in extra) or any(dim not in variable.dims for dim in wanted):
        raise InputDataError(path, f"variable {spec.source!r} (for {name}) has dimensions {variable.dims}; "
                             f"expected {tuple(wanted)}", where)
    values = variable.squeeze(extra).transpose(*wanted).values.astype(np.float64)
    values = mask_default_fill(variable, values)
    for axis, dim in enumerate(dims[:3]):
        if dim is None:
            values = np.expand_dims(values, axis)
    return values


def _to_per_step(values: np.ndarray, steps: np.ndarray, spec: ForecastVariableSpec) -> np.ndarray:
    """``(reference, step>0, column)`` per-step values in the source units.

    Differenced accumulations are set to 0 where they fall below 0 by less than
    :data:`PACKING_TOLERANCE_MM`: the packing of an accumulated field (GRIB's 16 bits over the
    run's largest total) rounds two equal totals apart; a larger drop is left to the plausibility check.
    """
    keep = steps > 0
    if spec.accumulation != "since_reference":
        return values[:, keep]
    baseline = values[:, :1] if not keep[0] else np.zeros_like(values[:, :1])
    per_step = np.diff(np.concatenate([baseline, values[:, keep]], axis=1), axis=1)
    tolerance = PACKING_TOLERANCE_MM / float(units.to_canonical(np.ones(1), spec, None)[0])
    with np.errstate(invalid="ignore"):
        return np.where((per_step < 0) & (per_step >= -tolerance), 0.0, per_step)


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
