"""GRIB2 forecast runs, as agencies receive them, opened into the layout the NetCDF products have.

A run file (ECMWF open data, NOAA GFS/GEFS, a national service's feed) holds one message per
field: a parameter (``shortName``: ``tp``, ``2t``, ...), a reference time, a step and, for an
ensemble, a member (``number``; the control forecast, ``dataType`` ``cf``, is member 0 and the
perturbed ones, ``pf``, 1..N) on a regular latitude/longitude grid. ecCodes decodes each message;
this module arranges the parameters the config names as ``(time, number, step, latitude, longitude)``
in one :class:`xarray.Dataset` with the names, dimensions and attributes cfgrib gives them
(``time`` and ``valid_time`` in seconds since 1970, ``step`` in hours, ``number``, ``latitude``,
``longitude`` in -180..180 ascending, ``units`` and ``GRIB_stepType`` per variable, values float32),
so that both formats go through one reader (:mod:`hydroseq.ingest.forecast_products`) and its checks.
``tests/ingest/test_grib2.py`` checks the result against cfgrib's own layout of the same runs.

The messages are read with ecCodes directly rather than through cfgrib: cfgrib indexes every message
with dozens of keys first, 2.3 s for a 180-message ensemble run here against 0.44 s (measured on the
example runs; a full ECMWF ENS run holds about 6,600 messages). Most of that 0.44 s was ecCodes matching
each message's ``shortName``, ``units`` and ``stepType`` against its concept tables (0.3-2 ms a key and
message); they are functions of the keys that identify the product (``_IDENTITY_KEYS``: centre,
tables, discipline, parameter, template, surfaces, statistical processing, ...), so each is evaluated
once per combination of those keys in a process and reused (GRIB1 messages: every time). A message then
costs about 0.5 ms, most of it ecCodes making its handle.

Checks, each an :class:`~hydroseq.errors.InputDataError` naming the file: a message whose lengths do not fit
(:mod:`~hydroseq.ingest.readers.grib_structure`, before ecCodes reads any), or that ecCodes cannot read (a
truncated or corrupt file), a grid that is not regular latitude/longitude or
differs between messages, a message that appears twice, a file with no message of a parameter the
config names, and a field absent for some member or step that the others have (a lost message).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from hydroseq.errors import InputDataError
from hydroseq.ingest.readers.grib_structure import check_messages

TIME_ATTRS = {"units": "seconds since 1970-01-01T00:00:00", "calendar": "proleptic_gregorian"}
ENSEMBLE_TYPES = ("cf", "pf")  # control and perturbed forecasts
_GRID_KEYS = ("gridType", "Ni", "Nj", "latitudeOfFirstGridPointInDegrees", "longitudeOfFirstGridPointInDegrees",
              "latitudeOfLastGridPointInDegrees", "longitudeOfLastGridPointInDegrees", "iScansNegatively",
              "jPointsAreConsecutive")
# The GRIB2 keys the parameter concepts (shortName, paramId, units) and stepType are matched on, ECMWF's local
# ones included: messages that agree on all of them have the same concepts. Those of sections 0 and 1 and the
# template number are in every GRIB2 message (the template number last); which of the others a message has
# depends on its product definition template (asking ecCodes whether an absent key is defined takes 30-60 us).
_ALWAYS_DEFINED = ("centre", "subCentre", "tablesVersion", "localTablesVersion", "productionStatusOfProcessedData",
                   "typeOfProcessedData", "discipline", "parameterCategory", "parameterNumber",
                   "productDefinitionTemplateNumber")
_BY_TEMPLATE = ("typeOfGeneratingProcess", "typeOfFirstFixedSurface", "scaleFactorOfFirstFixedSurface",
                "scaledValueOfFirstFixedSurface", "typeOfSecondFixedSurface", "scaleFactorOfSecondFixedSurface",
                "scaledValueOfSecondFixedSurface", "typeOfStatisticalProcessing", "lengthOfTimeRange",
                "indicatorOfUnitForTimeRange", "constituentType", "aerosolType", "typeOfWavelengthInterval",
                "percentileValue", "probabilityType")
_IDENTITY_KEYS = (*_ALWAYS_DEFINED, *_BY_TEMPLATE)
_DEFINED_BY_TEMPLATE: dict[int, tuple[str, ...]] = {}


@dataclass(frozen=True)
class _Concepts:
    short_name: str
    units: str
    step_type: str
    has_member: bool  # the message has a "number" (an ensemble template)


_CONCEPTS: dict[tuple[int, ...], _Concepts] = {}  # identity -> its concepts
_CONCEPTS_KEPT = 4096
STEP_UNITS_HOURS = 1  # ecCodes' code of hours for stepUnits


@dataclass(frozen=True)
class _Field:
    parameter: str
    reference: int  # seconds since 1970, UTC
    member: int
    ensemble: bool
    step_hours: float
    grid: tuple[Any, ...]
    units: str
    step_type: str
    values: np.ndarray  # (lat, lon) float32, NaN where the bitmap masks a point


def open_grib_run(path: Path, parameters: list[str], member_dim: str = "number") -> xr.Dataset:
    """The ``parameters`` (GRIB ``shortName``) of a run file as a dataset in the NetCDF products' layout.

    Times stay encoded (``seconds since 1970-01-01``) and steps are in hours, as
    ``xr.open_dataset(..., decode_times=False)`` gives them for a NetCDF product. Each variable is
    named by its ``shortName``.

    Raises
    ------
    InputDataError
        See the module.
    """
    fields: dict[str, list[_Field]] = {parameter: [] for parameter in parameters}
    found: set[str] = set()
    for field in _messages(path, set(parameters), found):
        fields[field.parameter].append(field)
    missing = [parameter for parameter in parameters if not fields[parameter]]
    if missing:
        raise InputDataError(path, f"no GRIB message of parameter {missing[0]!r} (the file has "
                             f"{', '.join(sorted(found)) or 'none'})")
    grids = {field.grid for parameter in parameters for field in fields[parameter]}
    if len(grids) > 1:
        raise InputDataError(path, "the messages lie on different grids; a run file holds one grid")
    (grid,) = grids
    arrays = {parameter: _hypercube(path, parameter, fields[parameter], member_dim) for parameter in parameters}
    first = arrays[parameters[0]]
    for parameter, array in arrays.items():
        for dim in ("time", member_dim, "step"):
            if dim in first.coords and not np.array_equal(np.atleast_1d(array[dim].values),
                                                          np.atleast_1d(first[dim].values)):
                raise InputDataError(path, f"the parameters have different {dim} values: {parameters[0]} has "
                                     f"{_listed(first[dim].values)}; {parameter} has {_listed(array[dim].values)}")
    latitudes, longitudes = _axes(grid)
    dataset = xr.Dataset({name: array for name, array in arrays.items()})
    dataset = dataset.assign_coords(latitude=("latitude", latitudes), longitude=("longitude", longitudes))
    times, steps = dataset["time"].values, dataset["step"].values * 3600.0
    if "time" in dataset.dims:
        valid = xr.Variable(("time", "step"), times[:, None] + steps[None, :], dict(TIME_ATTRS))
    else:
        valid = xr.Variable(("step",), times + steps, dict(TIME_ATTRS))
    dataset = dataset.assign_coords(valid_time=valid)
    return _conventional(dataset)


def _messages(path: Path, wanted: set[str], found: set[str] | None = None) -> Iterator[_Field]:
    """Every message of ``path`` (its parameter in ``wanted`` decoded, the others only counted)."""
    import eccodes  # the GRIB library, loaded only for GRIB sources

    check_messages(path)  # lengths ecCodes would trust (it can stop the process on a corrupt one)
    count = 0
    with path.open("rb") as handle:
        while True:
            try:
                message = eccodes.codes_grib_new_from_file(handle)
            except eccodes.CodesInternalError as error:
                raise InputDataError(path, f"GRIB message {count + 1} is truncated or corrupt "
                                     f"({str(error).strip()})") from None
            if message is None:
                break
            count += 1
            try:
                try:
                    concepts = _concepts(eccodes, message)
                    field = _decoded(path, eccodes, message, concepts, count) if concepts.short_name in wanted \
                        else None
                except (eccodes.CodesInternalError, ValueError) as error:  # a key or the values unreadable
                    raise InputDataError(path, f"GRIB message {count} is corrupt: ecCodes cannot read it "
                                         f"({type(error).__name__}: {str(error).strip()})") from None
                if found is not None:
                    found.add(concepts.short_name)
                if field is not None:
                    yield field
            finally:
                eccodes.codes_release(message)
    if count == 0:
        raise InputDataError(path, "no GRIB message in the file")


def _concepts(eccodes: Any, message: Any) -> _Concepts:
    """The message's ``shortName``, ``units``, ``stepType`` and whether it has a member number, evaluated once per
    identity (see the module)."""
    identity = _identity(eccodes, message)
    if identity is None:
        return _evaluated_concepts(eccodes, message)
    concepts = _CONCEPTS.get(identity)
    if concepts is None:
        if len(_CONCEPTS) >= _CONCEPTS_KEPT:
            _CONCEPTS.clear()
        concepts = _CONCEPTS[identity] = _evaluated_concepts(eccodes, message)
    return concepts


def _identity(eccodes: Any, message: Any) -> tuple[int, ...] | None:
    """The values of :data:`_IDENTITY_KEYS` the message has (None: not GRIB2, or a key is not where its template
    said it would be: its concepts are then evaluated without the cache)."""
    if eccodes.codes_get_long(message, "edition") != 2:
        return None
    try:
        always = tuple(eccodes.codes_get_long(message, key) for key in _ALWAYS_DEFINED)
        template = always[-1]
        defined = _DEFINED_BY_TEMPLATE.get(template)
        if defined is None:
            defined = _DEFINED_BY_TEMPLATE[template] = tuple(key for key in _BY_TEMPLATE
                                                             if eccodes.codes_is_defined(message, key))
        present = tuple(_BY_TEMPLATE.index(key) for key in defined)
        return (*always, *present, *(eccodes.codes_get_long(message, key) for key in defined))
    except eccodes.GribInternalError:
        return None


def _evaluated_concepts(eccodes: Any, message: Any) -> _Concepts:
    return _Concepts(str(eccodes.codes_get(message, "shortName")), str(eccodes.codes_get(message, "units")),
                     str(eccodes.codes_get(message, "stepType")), bool(eccodes.codes_is_defined(message, "number")))


def _decoded(path: Path, eccodes: Any, message: Any, concepts: _Concepts, count: int) -> _Field:
    parameter = concepts.short_name
    get = lambda key: eccodes.codes_get(message, key)  # noqa: E731
    grid = tuple(get(key) for key in _GRID_KEYS)
    if grid[0] != "regular_ll" or grid[7] != 0 or grid[8] != 0:
        raise InputDataError(path, f"GRIB message {count} ({parameter}) is on a {grid[0]} grid scanned "
                             f"(iScansNegatively {grid[7]}, jPointsAreConsecutive {grid[8]}); a regular "
                             "latitude/longitude grid scanned west to east in rows is read")
    if eccodes.codes_get_long(message, "stepUnits") != STEP_UNITS_HOURS:  # setting it costs as much as a decode
        eccodes.codes_set_long(message, "stepUnits", STEP_UNITS_HOURS)
    date, time = int(get("dataDate")), int(get("dataTime"))
    reference = _reference_seconds(date, time)
    values = eccodes.codes_get_values(message).astype(np.float64)
    if int(get("bitmapPresent")):
        values[values == float(get("missingValue"))] = np.nan
    data_type = str(get("dataType"))
    member = eccodes.codes_get_long(message, "number") if concepts.has_member else 0  # absent: deterministic
    return _Field(parameter, reference, member, data_type in ENSEMBLE_TYPES,
                  float(get("endStep")), grid, concepts.units, concepts.step_type,
                  values.reshape(int(grid[2]), int(grid[1])).astype(np.float32))


@functools.lru_cache(maxsize=4096)
def _reference_seconds(date: int, time: int) -> int:
    """Seconds since 1970 (UTC) of a GRIB ``dataDate`` (yyyymmdd) and ``dataTime`` (hhmm)."""
    reference = pd.Timestamp(f"{date:08d}") + pd.Timedelta(hours=time // 100, minutes=time % 100)
    return int(reference.value // 10**9)


def _hypercube(path: Path, parameter: str, fields: list[_Field], member_dim: str) -> xr.DataArray:
    """One parameter's fields as ``(time, number, step, latitude, longitude)``, the single-valued reference
    time (and a deterministic product's member) as scalar coordinates, as cfgrib arranges them."""
    references = sorted({field.reference for field in fields})
    members = sorted({field.member for field in fields})
    steps = sorted({field.step_hours for field in fields})
    ensemble = any(field.ensemble for field in fields) or len(members) > 1
    shape = (len(references), len(members), len(steps), *fields[0].values.shape)
    cube = np.full(shape, np.nan, dtype=np.float32)
    filled = np.zeros(shape[:3], dtype=bool)
    for field in fields:
        at = (references.index(field.reference), members.index(field.member), steps.index(field.step_hours))
        if filled[at]:
            raise InputDataError(path, f"the field of {parameter!r} at reference time {_when(field.reference)}, "
                                 f"member {field.member}, step {field.step_hours:g}h appears twice")
        filled[at] = True
        cube[at] = field.values
    if not filled.all():
        r, m, s = (int(index[0]) for index in np.nonzero(~filled))
        where = [f"reference time {_when(references[r])}"] if len(references) > 1 else []
        where += [f"member {members[m]}"] if ensemble else []
        where.append(f"step {steps[s]:g}h")
        raise InputDataError(path, f"the field of {parameter!r} is missing for {', '.join(where)} (the other "
                             f"{'members and ' if ensemble else ''}steps have it): a lost message")
    dims: list[str] = ["time", member_dim, "step", "latitude", "longitude"]
    coords: dict[str, Any] = {"time": ("time", np.array(references, dtype=np.int64), dict(TIME_ATTRS)),
                              member_dim: (member_dim, np.array(members, dtype=np.int64)),
                              "step": ("step", np.array(steps, dtype=np.float64), {"units": "hours"})}
    array = xr.DataArray(cube, dims=dims, coords=coords,
                         attrs={"units": fields[0].units, "GRIB_stepType": fields[0].step_type,
                                "GRIB_shortName": parameter})
    if len(references) == 1:
        array = array.squeeze("time")
    if not ensemble:
        array = array.squeeze(member_dim)
    return array


def _axes(grid: tuple[Any, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The cell-centre latitudes and longitudes of a regular grid, in the order of the values."""
    ni, nj, lat_first, lon_first, lat_last, lon_last = (grid[1], grid[2], *grid[3:7])
    if lon_last < lon_first:  # across the 0/360 meridian
        lon_last += 360.0
    return np.linspace(lat_first, lat_last, int(nj)), np.linspace(lon_first, lon_last, int(ni))


def _conventional(dataset: xr.Dataset) -> xr.Dataset:
    """Longitudes in -180..180 (GFS and GEFS write 0..360), ascending."""
    longitudes = dataset["longitude"]
    wrapped = ((longitudes.values + 180.0) % 360.0) - 180.0
    return dataset.assign_coords(longitude=(longitudes.dims, wrapped, longitudes.attrs)).sortby("longitude")


def _listed(values: np.ndarray, shown: int = 3) -> str:
    """The values, or a run of many as its count and its first and last ``shown`` (a message stays one short line)."""
    text = [f"{float(value):g}" for value in np.atleast_1d(values)]
    if len(text) <= 2 * shown + 1:
        return ", ".join(text)
    return f"{', '.join(text[:shown])}, ..., {', '.join(text[-shown:])} ({len(text)} values)"


def _when(seconds: int) -> str:
    return f"{pd.Timestamp(seconds, unit='s'):%Y-%m-%dT%H:%M}"
