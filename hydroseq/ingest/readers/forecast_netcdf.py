"""Forecast products as NetCDF files in the layout cfgrib writes (``format: netcdf``), station or grid layout."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import xarray as xr

from hydroseq.config.forecast_source import ForecastSourceConfig
from hydroseq.errors import InputDataError
from hydroseq.ingest.readers.integrity import check_complete

LAYOUTS = ("station", "grid")


@contextlib.contextmanager
def open_run(source: ForecastSourceConfig, path: Path) -> Iterator[xr.Dataset]:
    """The file, its times and steps left encoded; a truncated file, or one that fails while it is read (in
    the ``with`` block too), is an :class:`InputDataError` naming it."""
    check_complete(path)
    try:
        with xr.open_dataset(path, decode_times=False, decode_timedelta=False, engine="netcdf4") as ds:
            yield ds
    except InputDataError:
        raise
    except (OSError, ValueError, RuntimeError, KeyError) as error:
        raise InputDataError(path, f"not a readable NetCDF file ({type(error).__name__}: {error})") from None
