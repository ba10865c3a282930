"""One reader module per source format: observations (:data:`READERS`), each with ``station_ids(source, path)``
and ``read(source, path, station_id) -> RawSeries`` (gridded NetCDF: ``read(source, path, station)``); forecast
products (:data:`FORECAST_READERS`), each with the ``LAYOUTS`` it reads and ``open_run(source, path)``, a context
manager giving the file as an :class:`xarray.Dataset` in cfgrib's NetCDF layout
(:mod:`hydroseq.ingest.forecast_products` reads on from there). A new format is one module and one line here."""

from __future__ import annotations

import glob
from pathlib import Path
from types import ModuleType

from hydroseq.config.forecast_source import ForecastSourceConfig
from hydroseq.config.ingest import SourceConfig
from hydroseq.errors import ConfigError, InputDataError
from hydroseq.ingest.readers import camels, forecast_grib, forecast_netcdf, gridded, netcdf, pi_xml, table
from hydroseq.ingest.readers.base import RawSeries

READERS: dict[str, ModuleType] = {
    "csv": table, "caravan_csv": table,
    "camels_us_streamflow": camels, "camels_us_forcing": camels,
    "caravan_netcdf": netcdf, "netcdf_station": netcdf,
    "netcdf_grid": gridded,
    "pi_xml": pi_xml,
}
FORECAST_READERS: dict[str, ModuleType] = {"netcdf": forecast_netcdf, "grib2": forecast_grib}

__all__ = ["FORECAST_READERS", "READERS", "RawSeries", "forecast_reader", "source_files"]


def source_files(source: SourceConfig) -> list[Path]:
    """The files a source's path or glob names, sorted; raises if there are none."""
    matches = sorted(Path(name) for name in glob.glob(source.path))
    files = [path for path in matches if path.is_file()]
    if not files:
        raise InputDataError(source.path, f"no file matches the path of source {source.label!r}")
    return files


def forecast_reader(source: ForecastSourceConfig) -> ModuleType:
    """The reader of a forecast source's ``format``.

    Raises
    ------
    ConfigError
        If no reader has that name, or the reader does not read the source's ``layout``.
    """
    reader = FORECAST_READERS.get(source.format)
    if reader is None:
        raise ConfigError(f"forecast source {source.label!r}: no reader of format {source.format!r} (one of "
                          f"{', '.join(FORECAST_READERS)})")
    if source.layout not in reader.LAYOUTS:
        raise ConfigError(f"forecast source {source.label!r}: format {source.format} reads layout "
                          f"{' or '.join(reader.LAYOUTS)}, not {source.layout}: set layout: {reader.LAYOUTS[0]}")
    return reader
