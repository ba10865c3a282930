"""GRIB2 test inputs: the project's example runs (data/forecast_grib2/), copied, cut or altered message by
message with ecCodes, and an ingest config of a few real basins that reads them."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import xarray as xr

STATIONS = ["01022500", "08066300", "14325000"]  # Maine, Texas, Oregon: far apart on the example grid
ENS_RUNS = ["2014092100", "2014092200", "2014092300", "2014092400", "2014092500"]
HRES_RUNS = ["2014092100", "2014092112", "2014092200", "2014092212", "2014092300"]

Message = dict[str, object]


def copy_runs(data_dir: Path, kind: str, runs: list[str], folder: Path) -> list[Path]:
    """Copy the example runs ``runs`` (``yyyymmddHH``) of ``kind`` (``ens`` or ``hres``) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    copied = []
    for run in runs:
        (source,) = (data_dir / "forecast_grib2" / kind).glob(f"{run}0000-*.grib2")
        copied.append(Path(shutil.copy(source, folder / source.name)))
    return copied


def rewrite(path: Path, keep: Callable[[Message], bool] = lambda _: True,
            change: Callable[[Message, np.ndarray], np.ndarray] | None = None) -> int:
    """Rewrite the GRIB file ``path`` in place, message by message: drop those ``keep`` refuses, and
    replace the values of the others by ``change(keys, values)``. Returns the messages dropped."""
    import eccodes

    dropped = 0
    tmp = path.with_suffix(".tmp")
    with path.open("rb") as source, tmp.open("wb") as target:
        while (gid := eccodes.codes_grib_new_from_file(source)) is not None:
            keys: Message = {key: eccodes.codes_get(gid, key) if eccodes.codes_is_defined(gid, key) else None
                             for key in ("shortName", "step", "number", "dataDate", "dataTime", "dataType")}
            if not keep(keys):
                dropped += 1
            else:
                if change is not None:
                    values = eccodes.codes_get_values(gid)
                    missing = values == eccodes.codes_get(gid, "missingValue")
                    changed = np.where(missing, values, change(keys, values))
                    eccodes.codes_set_values(gid, changed)
                eccodes.codes_write(gid, target)
            eccodes.codes_release(gid)
    tmp.replace(path)
    return dropped


def as_cfgrib_netcdf(grib: Path, out: Path, parameters: list[str]) -> Path:
    """The run as cfgrib opens it (control and perturbed members put together along ``number``, variables named
    by their shortName, longitudes in -180..180), written as a NetCDF product (the layout of ``format: netcdf``):
    an arrangement of the messages independent of hydroseq's own ecCodes reader."""
    import cfgrib

    parts = cfgrib.open_datasets(str(grib), backend_kwargs={"indexpath": ""}, decode_times=False,
                                 decode_timedelta=False)
    variables = {}
    for parameter in parameters:
        arrays = [array for part in parts for array in part.data_vars.values()
                  if array.attrs.get("GRIB_shortName") == parameter]
        if len(arrays) > 1:  # control (number a scalar) and perturbed members
            arrays = [array if "number" in array.dims else array.expand_dims("number") for array in arrays]
            variables[parameter] = xr.concat(arrays, dim="number").sortby("number")
        else:
            variables[parameter] = arrays[0]
    dataset = xr.Dataset(variables).drop_vars(["surface", "heightAboveGround"], errors="ignore")
    wrapped = ((dataset["longitude"].values + 180.0) % 360.0) - 180.0
    dataset = dataset.assign_coords(longitude=("longitude", wrapped, dataset["longitude"].attrs)).sortby("longitude")
    dataset.load().to_netcdf(out)
    return out


def grib_ingest_config(data_dir: Path, runs_glob: str, members: int | None,
                       steps: list[str], latency: str = "8h", horizon: int = 7, **forecast: object) -> dict:
    """An ingest config of :data:`STATIONS` (their real Caravan series) on a daily grid around the
    example runs, with one GRIB2 forecast source reading ``runs_glob`` (leads 1..``horizon``, a week by
    default, as the example runs' 240 h allow)."""
    source: dict[str, object] = {
        "name": "example runs", "path": runs_glob, "format": "grib2", "layout": "grid", "steps": steps,
        "latency": latency, "issue_frequency": "1D", "horizon": horizon, "on_missing_product": "use_previous",
        "variables": {"precipitation_forecast": {"source": "tp", "units": "m", "aggregation": "sum",
                                                 "accumulation": "since_reference"},
                      "temperature_forecast": {"source": "2t", "units": "K"}}}
    if members is not None:
        source["members"] = members
    source.update(forecast)
    return {
        "stations": {"path": str(data_dir / "stations" / "caravan_camels_us.csv"), "ids": STATIONS,
                     "outlines": {"path": str(data_dir / "stations" / "caravan_camels_us_outlines.geojson")}},
        "sources": [{"path": str(data_dir / "daily_caravan_camels_us" / "[0-9]*.csv"), "format": "caravan_csv",
                     "frequency": "1D", "timestamp": "interval_start", "timezone": "station_standard",
                     "time_format": "%Y-%m-%d",
                     "variables": {"total_precipitation_sum": {"source": "total_precipitation_sum",
                                                               "units": "mm/d", "aggregation": "sum"},
                                   "temperature_2m_mean": {"source": "temperature_2m_mean", "units": "degC"}}}],
        "grid": {"frequency": "1D", "timezone": "Etc/GMT+8", "start": "2014-09-15", "end": "2014-10-05"},
        "forecast_sources": [source],
    }
