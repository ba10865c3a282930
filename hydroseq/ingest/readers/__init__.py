"""One reader module per source format, each with ``station_ids(source, path)`` and
``read(source, path, station_id) -> RawSeries`` (gridded NetCDF: ``read(source, path, station)``)."""

from __future__ import annotations

import glob
from pathlib import Path
from types import ModuleType

from hydroseq.config.ingest import SourceConfig
from hydroseq.errors import InputDataError
from hydroseq.ingest.readers import camels, gridded, netcdf, pi_xml, table
from hydroseq.ingest.readers.base import RawSeries

READERS: dict[str, ModuleType] = {
    "csv": table, "caravan_csv": table,
    "camels_us_streamflow": camels, "camels_us_forcing": camels,
    "caravan_netcdf": netcdf, "netcdf_station": netcdf,
    "netcdf_grid": gridded,
    "pi_xml": pi_xml,
}

__all__ = ["READERS", "RawSeries", "source_files"]


def source_files(source: SourceConfig) -> list[Path]:
    """The files a source's path or glob names, sorted; raises if there are none."""
    matches = sorted(Path(name) for name in glob.glob(source.path))
    files = [path for path in matches if path.is_file()]
    if not files:
        raise InputDataError(source.path, f"no file matches the path of source {source.label!r}")
    return files
