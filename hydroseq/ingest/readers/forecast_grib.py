"""Forecast products as GRIB2 run files (``format: grib2``): the fields the source names, opened by
:func:`hydroseq.ingest.readers.grib.open_grib_run` into the NetCDF products' layout (a grid)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import xarray as xr

from hydroseq.config.forecast_source import ForecastSourceConfig
from hydroseq.ingest.readers.grib import open_grib_run

LAYOUTS = ("grid",)


@contextlib.contextmanager
def open_run(source: ForecastSourceConfig, path: Path) -> Iterator[xr.Dataset]:
    """The run's messages of the source's variables (their GRIB ``shortName``), every member as ``member_dim``."""
    parameters = list(dict.fromkeys(spec.source for spec in source.variables.values()))
    with open_grib_run(path, parameters, source.member_dim) as ds:
        yield ds
