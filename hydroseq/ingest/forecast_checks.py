"""The checks of an issued forecast product, each an :class:`~hydroseq.errors.InputDataError` naming the file
and the reference time (and the variable): :mod:`hydroseq.ingest.forecast_products` calls them on every run it
reads, GRIB2 or NetCDF."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

import hydroseq.ingest.plausibility as plausibility
import hydroseq.ingest.units as units
from hydroseq.config.forecast_source import ForecastSourceConfig, ForecastVariableSpec, expected_step_hours
from hydroseq.config.units import same_units
from hydroseq.errors import InputDataError
from hydroseq.ingest.readers.netcdf import _decode_times
from hydroseq.ingest.stations import Station

UNIT_ALIASES = {"kg m**-2": "kg m-2", "kg m^-2": "kg m-2", "kg m**-2 s**-1": "kg m-2 s-1", "m s**-1": "m/s",
                "m s-1": "m/s", "mm d-1": "mm/d", "mm day-1": "mm/d", "mm h-1": "mm/h", "mm s-1": "mm/s",
                "kelvin": "K", "celsius": "degC", "degrees_celsius": "degC", "deg_c": "degC", "c": "degC",
                "fahrenheit": "degF", "metre": "m", "meter": "m", "millimetre": "mm", "millimeter": "mm"}
STEP_TYPES = {"sum": ("accum",), "mean": ("instant", "avg")}
RAIN_ENVELOPE_MM, RAIN_ENVELOPE_EXPONENT = 422.0, 0.475  # the world's greatest point rainfalls: 422 D^0.475 mm


def check_valid_time(source: ForecastSourceConfig, path: Path, ds: xr.Dataset, references: np.ndarray,
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


def check_expected_steps(source: ForecastSourceConfig, path: Path, steps: np.ndarray, where: str) -> None:
    """Every step the config's ``steps`` lists is in the run."""
    assert source.steps is not None
    hours = np.round(steps / 3.6e12, 6)
    missing = [hour for hour in expected_step_hours(source.steps) if not np.isclose(hours, hour).any()]
    if missing:
        listed = ", ".join(f"{hour:g}h" for hour in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise InputDataError(path, f"step(s) {listed} missing (the config's steps: {', '.join(source.steps)} hours; "
                             f"the file has {len(steps)} steps up to {hours[-1]:g}h)", where)


def member_count(source: ForecastSourceConfig, path: Path, ds: xr.Dataset, where: str) -> int:
    """The run's members: ``members`` of an ensemble source, 1 for a deterministic one."""
    dim = source.member_dim
    found = ds.sizes[dim] if dim in ds.dims else None
    if source.members is None:
        if found is not None and found > 1:
            raise InputDataError(path, f"the file holds {found} ensemble members ({dim!r}); set members: {found} "
                                 f"in forecast source {source.label!r} to keep them", where)
        return 1
    if found != source.members:
        raise InputDataError(path, f"the run holds {found or 1} member(s), forecast source {source.label!r} "
                             f"expects {source.members}", where)
    return source.members


def check_attributes(path: Path, variable: xr.DataArray, spec: ForecastVariableSpec, name: str, where: str) -> None:
    """The ``units`` and ``GRIB_stepType`` attributes agree with the declared units and aggregation."""
    declared = spec.units
    written = variable.attrs.get("units")
    if written is not None and spec.convert and not _units_agree(str(written), declared):
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


def _units_agree(written: str, declared: str) -> bool:
    """The file's ``units`` attribute names the declared unit: the same text after the aliases GRIB files use,
    or the same unit to the units library (``mm day-1`` and ``mm/d``, ``ft^3/s`` and ``cfs``)."""
    first, second = _normalised(written), _normalised(declared)
    return first == second or same_units(first, second)


def check_covered(source: ForecastSourceConfig, path: Path, values: np.ndarray, stations: list[Station],
                   name: str, where: str) -> None:
    """A station whose cells hold no value at any step of the run: the grid does not cover its basin."""
    if source.layout != "grid":
        return
    empty = np.isnan(values).all(axis=(0, 1, 2))
    if empty.any():
        station = stations[int(np.argmax(empty))]
        raise InputDataError(path, f"the grid holds no value of {name} ({source.variables[name].source}) for station "
                             f"{station.id} at ({station.lat}, {station.lon}): its cells are masked or missing", where)


def largest_rain_mm(hours: np.ndarray) -> np.ndarray:
    """The most rain a point on Earth has had in ``hours`` (mm): the envelope of the world's greatest observed
    point rainfalls, ``422 D^0.475`` mm in ``D`` hours (Jennings 1950; the WMO's PMP manual, 2009), within the
    default bound of a water amount. A forecast field (a cell's mean) stays below it."""
    return np.minimum(RAIN_ENVELOPE_MM * np.power(np.maximum(hours, 0.0), RAIN_ENVELOPE_EXPONENT),
                      plausibility.DEFAULT_BOUNDS["depth"][1])


def check_accumulated(path: Path, values: np.ndarray, references: np.ndarray, ends: np.ndarray, name: str,
                      spec: ForecastVariableSpec, stations: list[Station], members: int, tolerance_mm: float) -> None:
    """An amount accumulated since the reference time (``values``: ``(reference, step, column)`` as the file gives
    it, ``ends`` each step's end in ns) no larger than :func:`largest_rain_mm` over the time since the reference
    (nothing at step 0), ``tolerance_mm`` allowed for the packing; not checked where the config sets
    ``valid_max``. A total that is too large from some step on would otherwise pass as amounts of 0 per step."""
    if spec.accumulation != "since_reference" or spec.valid_max is not None or spec.kind != "depth":
        return
    hours = ends / 3.6e12
    per_mm = units.from_canonical_rate(1.0, spec)
    largest = (largest_rain_mm(hours) + tolerance_mm) * per_mm
    with np.errstate(invalid="ignore"):
        bad = values > largest[None, :, None]
    if bad.any():
        row, step, column = np.unravel_index(int(np.argmax(bad)), bad.shape)
        value, where = float(values[row, step, column]), _column(stations, members, int(column))
        why = (f"more rain than ever observed in {hours[step]:g} h" if hours[step] > 0
               else "where nothing has accumulated yet")
        raise InputDataError(path, f"variable {name} ({spec.source}): {value:g} {spec.units} accumulated by step "
                             f"{hours[step]:g}h ({where}) is above {largest[step]:.3g} {spec.units}, {why} (set "
                             "valid_max of the variable)", f"reference time {_when(references[row])}")


def check_plausible(path: Path, values: np.ndarray, references: np.ndarray, ends: np.ndarray, name: str,
                    spec: ForecastVariableSpec, stations: list[Station], members: int) -> None:
    """Per-step values (``(reference, step, column)`` for the steps ``ends`` > 0, in ns) finite and within the
    variable's ``valid_min .. valid_max`` (source units); a water amount summed over the steps, without a
    ``valid_max``, at most :func:`largest_rain_mm` over each step's length."""
    low, high = plausibility.bounds(spec)
    kept = ends[ends > 0] / 3.6e12
    starts = np.concatenate([[0.0], kept[:-1]])
    highs = np.full(len(kept), high)
    envelope = spec.kind == "depth" and spec.aggregation == "sum" and spec.valid_max is None
    if envelope:
        highs = np.minimum(highs, largest_rain_mm(kept - starts) * units.from_canonical_rate(1.0, spec))
    with np.errstate(invalid="ignore"):
        bad = np.isinf(values) | (values < low) | (values > highs[None, :, None])
    if not bad.any():
        return
    row, step, column = np.unravel_index(int(np.argmax(bad)), bad.shape)
    value = float(values[row, step, column])
    kind = "per-step value" if spec.accumulation == "since_reference" else "value"
    unit = "" if spec.kind == "other" else f" {spec.units}"
    if not np.isfinite(value):
        why = "is not finite"
    elif value < low:
        why = f"is below valid_min {low:g}{unit} (set valid_min of the variable)"
    elif envelope and highs[step] < high:
        why = (f"is above {highs[step]:.3g}{unit}, more rain than ever observed in {kept[step] - starts[step]:g} h "
               "(set valid_max of the variable)")
    else:
        why = f"is above valid_max {high:g}{unit} (set valid_max of the variable)"
    raise InputDataError(path, f"variable {name} ({spec.source}): {kind} {value:g}{unit} over step "
                         f"({starts[step]:g}h, {kept[step]:g}h] ({_column(stations, members, int(column))}) {why}",
                         f"reference time {_when(references[row])}")


def _column(stations: list[Station], members: int, column: int) -> str:
    """The station (and member) of a column of the station-major ``(station, member)`` columns."""
    station = stations[column // members].id if column // members < len(stations) else f"column {column}"
    return f"station {station}" + (f", member {column % members}" if members > 1 else "")


def _when(stamp: np.datetime64) -> str:
    return str(pd.Timestamp(stamp))
