"""Reading a forecast or hindcast NetCDF file back: the inverse of :mod:`hydroseq.forecast.writers.netcdf`."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import netCDF4
import numpy as np
import pandas as pd

from hydroseq.errors import InputDataError
from hydroseq.forecast.result import ForecastResult
from hydroseq.scoring.thresholds import StationThresholds

# Global attributes the writer derives itself; everything else goes back into ForecastResult.attributes.
_WRITER_ATTRIBUTES = {"Conventions", "featureType", "title", "source", "history", "grid_step_seconds",
                      "skipped_stations", "ungauged_stations", "stale_stations", "max_observation_age_hours"}


def read_forecast_netcdf(path: str | Path) -> ForecastResult:
    """The :class:`ForecastResult` that ``hydroseq forecast`` wrote to ``path`` (one issue time or a hindcast).

    Values, quantiles, members and exceedance probabilities come back in the target's units, with the
    stations' names, positions and areas, the thresholds, the skipped, ungauged and stale stations and
    the provenance attributes (model run, input file, grid). Values in m³/s are not read: they follow from
    the values and the areas (:func:`hydroseq.config.units.to_m3s`).

    Raises
    ------
    InputDataError
        Naming the file: it is missing, not NetCDF (or truncated), or not a hydroseq forecast file.
    """
    path = Path(path)
    if not path.is_file():
        raise InputDataError(path, "no such file" if not path.exists() else "not a file")
    try:
        dataset = netCDF4.Dataset(path, "r")
    except OSError as error:
        raise InputDataError(path, f"not a readable NetCDF file ({error.strerror or error})") from None
    try:
        dataset.set_auto_mask(False)
        return _read(path, dataset)
    except (KeyError, ValueError, IndexError, TypeError, RuntimeError) as error:
        raise InputDataError(path, f"not a hydroseq forecast file ({error})") from None
    finally:
        dataset.close()


def _read(path: Path, nc: netCDF4.Dataset) -> ForecastResult:
    attributes = {name: nc.getncattr(name) for name in nc.ncattrs()}
    if not str(attributes.get("title", "")).startswith("hydroseq ") or "forecast_reference_time" not in nc.variables:
        raise InputDataError(path, "not a hydroseq forecast file (no hydroseq title or forecast_reference_time)")
    variable = str(attributes["title"]).removeprefix("hydroseq ").removesuffix(" forecast")
    if variable not in nc.variables:
        raise InputDataError(path, f"the forecast variable {variable!r} its title names is missing")
    stations = tuple(_text_ids(nc, "station"))
    issue_times = _times(nc["forecast_reference_time"]).reshape(-1)
    single = nc["forecast_reference_time"].ndim == 0

    def field(name: str) -> np.ndarray | None:
        if name not in nc.variables:
            return None
        values = np.asarray(nc[name][...], dtype=np.float32)
        return values[None] if single else values

    values = field(variable)
    assert values is not None
    leads = np.asarray(nc["lead"][:], dtype=np.int64)
    step = pd.Timedelta(seconds=int(attributes["grid_step_seconds"]))
    levels = tuple(float(level) for level in nc["quantile"][:]) if "quantile" in nc.variables else None
    thresholds, exceedance = _thresholds(nc, stations, variable, field)
    max_age = attributes.get("max_observation_age_hours")
    return ForecastResult(
        issue_times=issue_times, stations=stations, leads=leads, step=step, values=values, variable=variable,
        units=str(nc[variable].getncattr("units")), long_name=str(getattr(nc[variable], "long_name", "")),
        standard_name=str(getattr(nc[variable], "standard_name", "")),
        attributes={name: str(value) for name, value in attributes.items() if name not in _WRITER_ATTRIBUTES},
        skipped=json.loads(attributes.get("skipped_stations", "{}")),
        station_names=(tuple(str(name) for name in nc["station_name"][:]) if "station_name" in nc.variables
                       else None),
        lats=_station_floats(nc, "lat"), lons=_station_floats(nc, "lon"), area_km2=_station_floats(nc, "area_km2"),
        observation_age_hours=field("observation_age"),
        ungauged=tuple(json.loads(attributes.get("ungauged_stations", "[]"))),
        forecast_input_age_hours=field("forecast_input_age"),
        quantiles=field(f"{variable}_quantile"), quantile_levels=levels, members=field(f"{variable}_member"),
        thresholds=thresholds, exceedance=exceedance,
        max_observation_age_hours=None if max_age is None or math.isnan(float(max_age)) else float(max_age),
        stale=json.loads(attributes.get("stale_stations", "{}")))


def _text_ids(nc: netCDF4.Dataset, name: str) -> list[str]:
    """A CF character array ``name(name, name_length)`` as text."""
    variable = nc[name]
    variable.set_auto_chartostring(True)
    return [str(value).rstrip("\x00") for value in np.atleast_1d(variable[:])]


def _times(variable: netCDF4.Variable) -> np.ndarray:
    """A CF time variable (``seconds since 1970-01-01``) as naive UTC ``datetime64[ns]``."""
    units = str(variable.getncattr("units"))
    if not units.startswith("seconds since 1970-01-01"):
        raise ValueError(f"{variable.name} in {units!r}, not seconds since 1970-01-01")
    seconds = np.asarray(variable[...], dtype=np.float64)
    return (seconds.astype(np.int64) * 1_000_000_000).astype("datetime64[ns]")


def _station_floats(nc: netCDF4.Dataset, name: str) -> np.ndarray | None:
    return np.asarray(nc[name][:], dtype=np.float64) if name in nc.variables else None


def _thresholds(nc: netCDF4.Dataset, stations: tuple[str, ...], variable: str,
                field: object) -> tuple[StationThresholds | None, np.ndarray | None]:
    if "threshold_discharge" not in nc.variables:
        return None, None
    levels = tuple(_text_ids(nc, "threshold"))
    source = str(getattr(nc["threshold"], "source", ""))
    confidence = getattr(nc["threshold"], "confidence_level", None)
    fit: dict[str, Any] = {"labels": tuple(str(text) for text in nc["threshold_label"][:])
                           if "threshold_label" in nc.variables else ()}
    for key, name in (("lower", "threshold_discharge_lower"), ("upper", "threshold_discharge_upper"),
                      ("years", "threshold_years")):
        if name in nc.variables:
            fit[key] = np.asarray(nc[name][:], np.int64 if key == "years" else np.float64)
    if "threshold_note" in nc.variables:
        fit["notes"] = tuple(str(text) for text in nc["threshold_note"][:])
    thresholds = StationThresholds(levels, stations, np.asarray(nc["threshold_discharge"][:], np.float64), source,
                                   confidence=None if confidence is None else float(confidence), **fit)
    exceedance = field(f"{variable}_exceedance_probability")  # type: ignore[operator]
    return thresholds, exceedance
