"""CF-NetCDF forecast files: dimensions station and lead, reproducible to the byte."""

from __future__ import annotations

import json
from pathlib import Path

import netCDF4
import numpy as np
import pandas as pd

from hydroseq import __version__
from hydroseq.config.units import M3S_STANDARD_NAME, M3S_UNITS, is_volume_rate, to_m3s
from hydroseq.fileio import atomic_path
from hydroseq.forecast.discharge import M3S_SUFFIX
from hydroseq.forecast.result import ForecastResult

TIME_UNITS = "seconds since 1970-01-01 00:00:00"
CALENDAR = "proleptic_gregorian"


def _epoch_seconds(times: np.ndarray) -> np.ndarray:
    """float64 (CF-1.8 has no 64-bit integers; whole seconds are exact far beyond any forecast)."""
    return np.asarray(times, dtype="datetime64[s]").astype(np.int64).astype(np.float64)


def write_forecast_netcdf(result: ForecastResult, path: str | Path) -> Path:
    """Write ``result`` as CF-1.8 NetCDF4, atomically.

    One issue time gives ``value(station, lead)`` with a scalar ``forecast_reference_time`` (a CF
    ``timeSeries`` per station along the valid times); several (hindcast) give
    ``value(forecast_reference_time, station, lead)``, the issue time being the unlimited (record)
    dimension. ``forecast_period`` (hours) is an auxiliary coordinate of ``lead`` and the valid time
    ``time`` one of (issue time, lead); ``forecast_period_bnds`` and, for one issue time,
    ``time_bnds`` are the grid intervals they end.

    Each station carries its id (``station``, a CF character array: xarray reads it as the text index of
    the ``station`` dimension, and CF-1.8's numeric coordinate variables are not broken by text), its name
    and its catchment area ``area_km2``; every forecast quantity comes also in m³/s (``<name>_m3s``,
    :mod:`hydroseq.forecast.discharge`) when the target is a discharge as a depth rate or a volume rate.

    Nothing time-dependent is written (no creation date; ``history`` names the software, the model
    run, the input and the issue times), so the same result always gives the same bytes with the
    same library versions.
    """
    path = Path(path)
    with atomic_path(path) as tmp, netCDF4.Dataset(tmp, "w", format="NETCDF4") as nc:
        _write_global_attributes(nc, result)
        _write_station_and_lead(nc, result)
        issue_dims = _write_issue_time(nc, result)
        _write_valid_time(nc, result, issue_dims)
        _write_values(nc, result, issue_dims)
        _write_forecast_input_use(nc, result, issue_dims)
        _write_quantiles(nc, result, issue_dims)
        _write_members(nc, result, issue_dims)
        _write_exceedance(nc, result, issue_dims)
    return path


def write_text_ids(nc: netCDF4.Dataset, name: str, values: tuple[str, ...] | list[str]) -> netCDF4.Variable:
    """``name(name, <name>_length)``: text ids as a CF character array (UTF-8), which xarray reads back as
    the text index of dimension ``name``; a 1-D text ``name(name)`` would be a CF coordinate variable,
    which must be numeric and monotonic."""
    encoded = [str(value).encode("utf-8") for value in values]
    width = max([1, *(len(text) for text in encoded)])
    nc.createDimension(name, len(encoded))
    nc.createDimension(f"{name}_length", width)
    variable = nc.createVariable(name, "S1", (name, f"{name}_length"))
    variable.setncattr("_Encoding", "utf-8")
    variable[:] = np.array([str(value) for value in values], dtype=f"U{width}")  # netCDF4 encodes it (_Encoding)
    return variable


def _write_m3s(nc: netCDF4.Dataset, result: ForecastResult, name: str, dims: tuple[str, ...], values: np.ndarray,
               long_name: str) -> None:
    """``<name>_m3s``: ``values`` (``[issue, station, ...]`` or ``[station, ...]`` when ``dims`` start with
    station) in m³/s, when the target converts; written for a single issue time without the issue axis."""
    station_axis = dims.index("station")
    converted = to_m3s(values, result.units, result.step, result.area_km2,
                       station_axis=1 if values.ndim > len(dims) else station_axis)
    if converted is None:
        return
    variable = nc.createVariable(f"{name}{M3S_SUFFIX}", "f4", dims, fill_value=np.float32(np.nan))
    variable[...] = converted[0] if values.ndim > len(dims) else converted
    attrs = {"long_name": long_name, "standard_name": M3S_STANDARD_NAME, "units": M3S_UNITS}
    if "coordinates" in nc.variables[name].ncattrs():
        attrs["coordinates"] = nc.variables[name].getncattr("coordinates")
    if not is_volume_rate(result.units):
        attrs["comment"] = f"{name} ({result.units}) times area_km2, in m3 s-1 (missing where area_km2 is)"
    variable.setncatts(attrs)


def _write_global_attributes(nc: netCDF4.Dataset, result: ForecastResult) -> None:
    nc.setncattr("Conventions", "CF-1.8")
    if len(result.issue_times) == 1:
        nc.setncattr("featureType", "timeSeries")
    nc.setncattr("title", f"hydroseq {result.variable} forecast")
    nc.setncattr("source", f"hydroseq {__version__}")
    nc.setncattr("history", _history(result))
    nc.setncattr("grid_step_seconds", np.int64(result.step.total_seconds()))
    for key in sorted(result.attributes):
        nc.setncattr(key, str(result.attributes[key]))
    nc.setncattr("skipped_stations", json.dumps(result.skipped, sort_keys=True))
    if result.observation_age_hours is not None:
        nc.setncattr("ungauged_stations", json.dumps(sorted(result.ungauged)))
    if result.max_observation_age_hours is not None:
        nc.setncattr("max_observation_age_hours", np.float64(result.max_observation_age_hours))
        nc.setncattr("stale_stations", json.dumps(result.stale, sort_keys=True))


def _history(result: ForecastResult) -> str:
    first, last = (np.datetime_as_string(result.issue_times[i].astype("datetime64[m]")) for i in (0, -1))
    command = "forecast" if len(result.issue_times) == 1 else "forecast (hindcast)"
    inputs = ", ".join(f"{key} {result.attributes[key]}" for key in ("model_run_id", "input_file",
                                                                     "input_dataset_checksum")
                       if key in result.attributes)
    return f"hydroseq {__version__} {command}: issue times {first}Z..{last}Z" + (f"; {inputs}" if inputs else "")


def _write_station_and_lead(nc: netCDF4.Dataset, result: ForecastResult) -> None:
    station = write_text_ids(nc, "station", result.stations)
    station.setncatts({"long_name": "station id", "cf_role": "timeseries_id"})
    nc.createDimension("lead", len(result.leads))
    if result.station_names is not None:
        names = nc.createVariable("station_name", str, ("station",))
        names[:] = np.array(result.station_names, dtype=object)
        names.setncattr("long_name", "station name")
    for name, values, standard_name, units in (("lat", result.lats, "latitude", "degrees_north"),
                                               ("lon", result.lons, "longitude", "degrees_east")):
        if values is not None:
            variable = nc.createVariable(name, "f8", ("station",))
            variable[:] = np.asarray(values, dtype=np.float64)
            variable.setncatts({"standard_name": standard_name, "units": units})
    if result.area_km2 is not None:
        area = nc.createVariable("area_km2", "f8", ("station",), fill_value=np.nan)
        area[:] = np.asarray(result.area_km2, dtype=np.float64)
        area.setncatts({"long_name": "catchment area (turns the discharge as a depth rate into m3 s-1)",
                        "units": "km2"})
    lead = nc.createVariable("lead", "i4", ("lead",))
    lead[:] = np.asarray(result.leads, dtype=np.int32)
    lead.setncatts({"long_name": "lead time in grid steps", "units": "1"})
    period = nc.createVariable("forecast_period", "f8", ("lead",))
    period[:] = result.forecast_period_hours
    period.setncatts({"standard_name": "forecast_period", "long_name": "lead time (end of the grid interval)",
                      "units": "hours", "bounds": "forecast_period_bnds"})
    nc.createDimension("nv", 2)
    period_bounds = nc.createVariable("forecast_period_bnds", "f8", ("lead", "nv"))
    period_bounds[:] = np.stack([result.forecast_period_hours - result.step / pd.Timedelta(hours=1),
                                 result.forecast_period_hours], axis=-1)


def _write_issue_time(nc: netCDF4.Dataset, result: ForecastResult) -> tuple[str, ...]:
    single = len(result.issue_times) == 1
    dims: tuple[str, ...] = () if single else ("forecast_reference_time",)
    if not single:
        nc.createDimension("forecast_reference_time", None)
    reference = nc.createVariable("forecast_reference_time", "f8", dims)
    seconds = _epoch_seconds(result.issue_times)
    reference[...] = seconds[0] if single else seconds
    reference.setncatts({"standard_name": "forecast_reference_time", "long_name": "issue time",
                         "units": TIME_UNITS, "calendar": CALENDAR})
    return dims


def _write_valid_time(nc: netCDF4.Dataset, result: ForecastResult, issue_dims: tuple[str, ...]) -> None:
    valid = nc.createVariable("time", "f8", (*issue_dims, "lead"))
    seconds = _epoch_seconds(result.valid_times)
    valid[...] = seconds[0] if not issue_dims else seconds
    valid.setncatts({"standard_name": "time", "long_name": "valid time (end of the grid interval)",
                     "units": TIME_UNITS, "calendar": CALENDAR})
    if not issue_dims:  # CF bounds of a 2-D time(issue, lead) would be 2-D cells: forecast_period_bnds say it
        valid.setncattr("bounds", "time_bnds")
        bounds = nc.createVariable("time_bnds", "f8", ("lead", "nv"))
        bounds[:] = np.stack([seconds[0] - result.step.total_seconds(), seconds[0]], axis=-1)


def _write_values(nc: netCDF4.Dataset, result: ForecastResult, issue_dims: tuple[str, ...]) -> None:
    dims = (*issue_dims, "station", "lead")
    variable = nc.createVariable(result.variable, "f4", dims, fill_value=np.float32(np.nan))
    values = np.asarray(result.values, dtype=np.float32)
    variable[...] = values[0] if not issue_dims else values
    coordinates = ["forecast_reference_time", "forecast_period", "time"]
    coordinates += [name for name in ("station_name", "lat", "lon", "area_km2") if name in nc.variables]
    standard_name = {"standard_name": result.standard_name} if result.standard_name else {}
    variable.setncatts({"long_name": result.long_name or f"forecast {result.variable}", **standard_name,
                        "units": result.units, "coordinates": " ".join(coordinates)})
    _write_m3s(nc, result, result.variable, dims, values, f"{result.long_name or result.variable} as a discharge")
    if result.observation_age_hours is not None:
        age = nc.createVariable("observation_age", "f4", (*issue_dims, "station"), fill_value=np.float32(np.nan))
        ages = np.asarray(result.observation_age_hours, dtype=np.float32)
        age[...] = ages[0] if not issue_dims else ages
        age.setncatts({"long_name": f"time from the newest observed {result.variable} to the issue time "
                                    "(the model read it as not observed after that)", "units": "hours"})
    if result.forecast_input_age_hours is not None:
        age = nc.createVariable("forecast_input_age", "f4", (*issue_dims, "station"), fill_value=np.float32(np.nan))
        ages = np.asarray(result.forecast_input_age_hours, dtype=np.float32)
        age[...] = ages[0] if not issue_dims else ages
        age.setncatts({"long_name": "time from the reference time of the oldest weather forecast the model read "
                                    "to the issue time (missing: it read none, every input fell back to no "
                                    "forecast); per input: forecast_input_age_by_input",
                       "units": "hours"})


def _write_forecast_input_use(nc: netCDF4.Dataset, result: ForecastResult, issue_dims: tuple[str, ...]) -> None:
    """Per station and weather-forecast input: whether the model read a forecast of it, and the product's age."""
    if result.forecast_input_read is None:
        return
    names = write_text_ids(nc, "forecast_input", result.forecast_inputs)
    names.setncattr("long_name", "weather-forecast input of the model")
    dims = (*issue_dims, "station", "forecast_input")
    read = nc.createVariable("forecast_input_read", "i1", dims)
    flags = np.asarray(result.forecast_input_read, dtype=np.int8)
    read[...] = flags[0] if not issue_dims else flags
    read.setncatts({"long_name": "the model read a forecast of the input (a value at some lead); else it fell back "
                                 "to its no-forecast input", "flag_values": np.array([0, 1], dtype=np.int8),
                    "flag_meanings": "fell_back_to_no_forecast read_a_forecast"})
    if result.forecast_input_ages is not None:
        age = nc.createVariable("forecast_input_age_by_input", "f4", dims, fill_value=np.float32(np.nan))
        ages = np.asarray(result.forecast_input_ages, dtype=np.float32)
        age[...] = ages[0] if not issue_dims else ages
        age.setncatts({"long_name": "time from the reference time of the product each input was read from to the "
                                    "issue time (missing: the input fell back to no forecast, or has no product)",
                       "units": "hours"})


def _write_quantiles(nc: netCDF4.Dataset, result: ForecastResult, issue_dims: tuple[str, ...]) -> None:
    """``<variable>_quantile(..., station, lead, quantile)`` with the levels as the ``quantile`` coordinate."""
    if result.quantiles is None or result.quantile_levels is None:
        return
    nc.createDimension("quantile", len(result.quantile_levels))
    level = nc.createVariable("quantile", "f8", ("quantile",))
    level[:] = np.asarray(result.quantile_levels, dtype=np.float64)
    level.setncatts({"long_name": "probability of not exceeding the quantile", "units": "1"})
    variable = nc.createVariable(f"{result.variable}_quantile", "f4", (*issue_dims, "station", "lead", "quantile"),
                                 fill_value=np.float32(np.nan))
    values = np.asarray(result.quantiles, dtype=np.float32)
    variable[...] = values[0] if not issue_dims else values
    variable.setncatts({"long_name": f"quantiles of the predictive distribution of the {result.variable} forecast "
                                    f"(the median is {result.variable})",
                        "units": result.units, "coordinates": nc.variables[result.variable].getncattr("coordinates")})
    _write_m3s(nc, result, variable.name, (*issue_dims, "station", "lead", "quantile"), values,
               f"quantiles of the predictive distribution of the {result.variable} forecast as a discharge")


def _write_members(nc: netCDF4.Dataset, result: ForecastResult, issue_dims: tuple[str, ...]) -> None:
    """An ensemble's members as ``<variable>_member(..., station, lead, realization)`` (CF ``realization``)."""
    if result.members is None:
        return
    nc.createDimension("realization", result.members.shape[-1])
    realization = nc.createVariable("realization", "i4", ("realization",))
    realization[:] = np.arange(result.members.shape[-1], dtype=np.int32)
    realization.setncatts({"standard_name": "realization", "long_name": "ensemble member", "units": "1"})
    variable = nc.createVariable(f"{result.variable}_member", "f4", (*issue_dims, "station", "lead", "realization"),
                                 fill_value=np.float32(np.nan))
    values = np.asarray(result.members, dtype=np.float32)
    variable[...] = values[0] if not issue_dims else values
    variable.setncatts({"long_name": f"{result.variable} forecast of each ensemble member (its median)",
                        "units": result.units, "coordinates": nc.variables[result.variable].getncattr("coordinates")})
    _write_m3s(nc, result, variable.name, (*issue_dims, "station", "lead", "realization"), values,
               f"{result.variable} forecast of each ensemble member as a discharge")


def _write_exceedance(nc: netCDF4.Dataset, result: ForecastResult, issue_dims: tuple[str, ...]) -> None:
    """Each station's thresholds (in words, with a derived fit's interval, water years and notes) and
    ``<variable>_exceedance_probability(..., station, lead, threshold)``."""
    if result.thresholds is None or result.exceedance is None:
        return
    thresholds = result.thresholds.for_stations(result.stations)
    name = write_text_ids(nc, "threshold", thresholds.levels)
    name.setncatts({"long_name": "threshold level id", "source": thresholds.source,
                    **({"confidence_level": thresholds.confidence} if thresholds.confidence is not None else {})})
    labels = nc.createVariable("threshold_label", str, ("threshold",))
    labels[:] = np.array(thresholds.labels, dtype=object)
    labels.setncattr("long_name", "threshold level in words")
    interval = f"{thresholds.confidence * 100:g} % confidence interval of" if thresholds.confidence else ""
    bounds = [(f"threshold_discharge_{bound}", values, f"the {bound} bound of the {interval} each station's threshold")
              for bound, values in (("lower", thresholds.lower), ("upper", thresholds.upper)) if interval]
    for variable_name, values, what in [("threshold_discharge", thresholds.values, "each station's threshold"),
                                        *bounds]:
        discharge = nc.createVariable(variable_name, "f4", ("station", "threshold"), fill_value=np.float32(np.nan))
        discharge[:] = values.astype(np.float32)
        discharge.setncatts({"long_name": f"{result.variable} of {what}", "units": result.units})
        _write_m3s(nc, result, variable_name, ("station", "threshold"), values, f"discharge of {what}")
    if thresholds.years.any() or any(thresholds.notes):
        years = nc.createVariable("threshold_years", "i4", ("station", "threshold"))
        years[:] = thresholds.years.astype(np.int32)
        years.setncatts({"long_name": "water-year maxima a return-period threshold was fitted to (0: another kind "
                                      "of threshold)", "units": "1"})
        notes = nc.createVariable("threshold_note", str, ("station",))
        notes[:] = np.array(thresholds.notes, dtype=object)
        notes.setncattr("long_name", "why the station has no return-period threshold (empty: it has)")
    variable = nc.createVariable(f"{result.variable}_exceedance_probability", "f4",
                                 (*issue_dims, "station", "lead", "threshold"), fill_value=np.float32(np.nan))
    values = np.asarray(result.exceedance, dtype=np.float32)
    variable[...] = values[0] if not issue_dims else values
    variable.setncatts({"long_name": f"probability that {result.variable} exceeds threshold_discharge",
                        "units": "1", "coordinates": nc.variables[result.variable].getncattr("coordinates")})
