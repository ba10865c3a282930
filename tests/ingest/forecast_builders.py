"""Forecast product files for the tests: a station layout like pipelines/make_forecast_product.py
writes, and a gridded file with exactly the names and attributes cfgrib gives an ECMWF product."""

from __future__ import annotations

from pathlib import Path

import netCDF4
import numpy as np
import pandas as pd

EPOCH = pd.Timestamp("1970-01-01")


def write_station_product(path: Path, references: pd.DatetimeIndex, step_hours: np.ndarray, station_ids: list[str],
                          variables: dict[str, tuple[np.ndarray, dict[str, str]]], valid_time: bool = True) -> Path:
    """A product ``name(time, step, station)``; ``variables`` maps name -> (values, attributes)."""
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("time", len(references))
        ds.createDimension("step", len(step_hours))
        ds.createDimension("station", len(station_ids))
        time = ds.createVariable("time", "i8", ("time",))
        time.units, time.standard_name = "seconds since 1970-01-01", "forecast_reference_time"
        time[:] = ((references - EPOCH) // pd.Timedelta(seconds=1)).to_numpy()
        step = ds.createVariable("step", "f8", ("step",))
        step.units, step.standard_name = "hours", "forecast_period"
        step[:] = step_hours
        ids = ds.createVariable("station", str, ("station",))
        for position, station_id in enumerate(station_ids):
            ids[position] = station_id
        if valid_time:
            valid = ds.createVariable("valid_time", "i8", ("time", "step"))
            valid.units = "seconds since 1970-01-01"
            valid[:] = time[:][:, None] + (np.asarray(step_hours) * 3600).astype(np.int64)[None, :]
        for name, (values, attrs) in variables.items():
            variable = ds.createVariable(name, "f8", ("time", "step", "station"), fill_value=np.nan)
            variable.setncatts(attrs)
            variable[:] = values
    return path


def write_cfgrib_grid(path: Path, reference: pd.Timestamp, step_hours: np.ndarray, lats: np.ndarray,
                      lons: np.ndarray, tp_m: np.ndarray, t2m_k: np.ndarray) -> Path:
    """One ECMWF run as ``cfgrib`` + ``to_netcdf`` write it: ``time`` a scalar coordinate, ``step``
    a timedelta in hours, ``valid_time(step)``, ``latitude`` descending, ``tp`` (m, accumulated
    since the reference time) and ``t2m`` (K, instantaneous) with their GRIB_* attributes."""
    with netCDF4.Dataset(path, "w") as ds:
        ds.setncatts({"GRIB_edition": 1, "GRIB_centre": "ecmf", "GRIB_centreDescription":
                      "European Centre for Medium-Range Weather Forecasts", "GRIB_subCentre": 0,
                      "Conventions": "CF-1.7", "institution": "European Centre for Medium-Range Weather Forecasts",
                      "history": "cfgrib-0.9.14 ... (test fixture)"})
        ds.createDimension("step", len(step_hours))
        ds.createDimension("latitude", len(lats))
        ds.createDimension("longitude", len(lons))
        number = ds.createVariable("number", "i8", ())
        number.long_name, number.standard_name, number.units = "ensemble member numerical id", "realization", "1"
        number.assignValue(0)
        time = ds.createVariable("time", "i8", ())
        time.setncatts({"long_name": "initial time of forecast", "standard_name": "forecast_reference_time",
                        "units": "seconds since 1970-01-01", "calendar": "proleptic_gregorian"})
        time.assignValue(int((reference - EPOCH) // pd.Timedelta(seconds=1)))
        step = ds.createVariable("step", "f8", ("step",))
        step.setncatts({"long_name": "time since forecast_reference_time", "standard_name": "forecast_period",
                        "units": "hours"})
        step[:] = step_hours
        surface = ds.createVariable("surface", "f8", ())
        surface.setncatts({"long_name": "original GRIB coordinate for key: level(surface)", "units": "1",
                           "positive": "up", "stored_direction": "increasing", "standard_name": "surface"})
        surface.assignValue(0.0)
        for name, values, attrs in (("latitude", lats, {"units": "degrees_north", "standard_name": "latitude",
                                                         "long_name": "latitude", "stored_direction": "decreasing"}),
                                    ("longitude", lons, {"units": "degrees_east", "standard_name": "longitude",
                                                          "long_name": "longitude"})):
            variable = ds.createVariable(name, "f8", (name,))
            variable.setncatts(attrs)
            variable[:] = values
        valid = ds.createVariable("valid_time", "i8", ("step",))
        valid.setncatts({"standard_name": "time", "long_name": "time", "units": "seconds since 1970-01-01",
                         "calendar": "proleptic_gregorian"})
        valid[:] = time.getValue() + (np.asarray(step_hours) * 3600).astype(np.int64)
        common = {"GRIB_gridType": "regular_ll", "GRIB_NV": 0, "GRIB_Nx": len(lons), "GRIB_Ny": len(lats),
                  "GRIB_cfVarName": "", "GRIB_dataType": "fc", "GRIB_numberOfPoints": len(lats) * len(lons),
                  "GRIB_typeOfLevel": "surface", "coordinates": "number time surface valid_time"}
        for name, values, attrs in (
                ("tp", tp_m, {"GRIB_paramId": 228, "GRIB_cfName": "unknown", "GRIB_cfVarName": "tp",
                              "GRIB_name": "Total precipitation", "GRIB_shortName": "tp", "GRIB_stepType": "accum",
                              "GRIB_units": "m", "long_name": "Total precipitation", "units": "m",
                              "standard_name": "unknown"}),
                ("t2m", t2m_k, {"GRIB_paramId": 167, "GRIB_cfName": "unknown", "GRIB_cfVarName": "t2m",
                                "GRIB_name": "2 metre temperature", "GRIB_shortName": "2t",
                                "GRIB_stepType": "instant", "GRIB_units": "K", "long_name": "2 metre temperature",
                                "units": "K", "standard_name": "unknown", "GRIB_typeOfLevel": "heightAboveGround"})):
            variable = ds.createVariable(name, "f4", ("step", "latitude", "longitude"), fill_value=np.float32(np.nan))
            variable.setncatts({**common, **attrs})
            variable[:] = values
    return path


CARAVAN_STATIONS = ["01022500", "01052500"]


def caravan_window(folder: Path, data_dir: Path, product: Path, rows: int = 40, **forecast: object) -> dict:
    """An ingest config of two real Caravan basins cut to their first ``rows`` days, with one
    station-layout forecast source reading ``product`` (tp in m since the reference, t2m in K)."""
    (folder / "src").mkdir(parents=True, exist_ok=True)
    for station in CARAVAN_STATIONS:
        lines = (data_dir / "daily_caravan_camels_us" / f"{station}.csv").read_text().splitlines()[: rows + 1]
        (folder / "src" / f"{station}.csv").write_text("\n".join(lines) + "\n")
    table = (data_dir / "stations" / "caravan_camels_us.csv").read_text().splitlines()
    kept = [table[0]] + [line for line in table[1:] if line.split(",")[0] in CARAVAN_STATIONS]
    (folder / "stations.csv").write_text("\n".join(kept) + "\n")
    last = (pd.Timestamp("1981-01-01") + pd.Timedelta(days=rows - 2)).date()
    return {
        "stations": {"path": str(folder / "stations.csv")},
        "sources": [{"path": str(folder / "src" / "*.csv"), "format": "caravan_csv", "frequency": "1D",
                     "timestamp": "interval_start", "timezone": "station_standard", "time_format": "%Y-%m-%d",
                     "variables": {"total_precipitation_sum": {"source": "total_precipitation_sum",
                                                               "units": "mm/d", "aggregation": "sum"},
                                   "temperature_2m_mean": {"source": "temperature_2m_mean", "units": "degC"}}}],
        "grid": {"frequency": "1D", "timezone": "Etc/GMT+8", "start": "1981-01-01", "end": str(last)},
        "forecast_sources": [{
            "name": "test product", "path": str(product), "layout": "station", "latency": "6h",
            "issue_frequency": "1D", "horizon": 3,
            "variables": {"precipitation_forecast": {"source": "tp", "units": "m", "aggregation": "sum",
                                                     "accumulation": "since_reference"},
                          "temperature_forecast": {"source": "t2m", "units": "K"}}, **forecast}],
    }


def caravan_product(path: Path, references: pd.DatetimeIndex, step_hours: np.ndarray | None = None,
                    seed: int = 0, **overrides: object) -> Path:
    """A station-layout product for :func:`caravan_window`'s basins; ``overrides`` replace a
    variable's (values, attributes) or pass ``valid_time``."""
    hours = np.array([6.0, 30.0, 54.0, 78.0]) if step_hours is None else step_hours
    rng = np.random.default_rng(seed)
    shape = (len(references), len(hours), len(CARAVAN_STATIONS))
    per_step = rng.gamma(0.5, 4.0, shape) / 1000.0
    variables = {"tp": (np.cumsum(per_step, axis=1), {"units": "m", "GRIB_stepType": "accum"}),
                 "t2m": (rng.normal(275.0, 5.0, shape), {"units": "K", "GRIB_stepType": "instant"})}
    variables.update({name: value for name, value in overrides.items() if name in variables})  # type: ignore[misc]
    return write_station_product(path, references, hours, CARAVAN_STATIONS, variables,
                                 valid_time=bool(overrides.get("valid_time", True)))
