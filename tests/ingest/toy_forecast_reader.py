"""A forecast-product reader that only the test suite knows: a CSV of one row per run, step and station
(``reference_time, step_hours, station, <variables>``), opened into the NetCDF products' layout."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import xarray as xr

from hydroseq.config.forecast_source import ForecastSourceConfig

LAYOUTS = ("station",)


@contextlib.contextmanager
def open_run(source: ForecastSourceConfig, path: Path) -> Iterator[xr.Dataset]:
    """The table as ``(time, step, station)`` variables; times in seconds since 1970, steps in hours."""
    table = pd.read_csv(path, dtype={"station": str})
    table["reference_time"] = (pd.to_datetime(table["reference_time"]) - pd.Timestamp("1970-01-01")) // pd.Timedelta(
        seconds=1)
    cube = table.set_index(["reference_time", "step_hours", "station"]).to_xarray()
    ds = cube.rename(reference_time="time", step_hours="step")
    ds["time"].attrs["units"] = "seconds since 1970-01-01"
    ds["step"].attrs["units"] = "hours"
    yield ds
