"""Ingestion: raw station and gridded sources onto one leakage-free time grid (NetCDF or Zarr).

Public API: :func:`ingest` (what ``hydroseq ingest`` calls); :func:`ingest_station` (the pure
per-station step, mappable over stations) with what it needs, :func:`load_stations` (the station
table), :func:`plan_sources` and :func:`build_grid`; :func:`dask_client` (the local cluster that
``hydroseq ingest --workers N`` starts, or a client of a running scheduler);
:func:`dataset_checksum`.
"""

from hydroseq.ingest.checksum import dataset_checksum
from hydroseq.ingest.distributed import dask_client
from hydroseq.ingest.pipeline import ingest, plan_sources
from hydroseq.ingest.report import IngestReport
from hydroseq.ingest.station import SourcePlan, StationResult, ingest_station
from hydroseq.ingest.station_list import load_stations
from hydroseq.ingest.stations import Station
from hydroseq.ingest.timegrid import TimeGrid, build_grid

__all__ = ["IngestReport", "SourcePlan", "Station", "StationResult", "TimeGrid", "build_grid", "dask_client",
           "dataset_checksum", "ingest", "ingest_station", "load_stations", "plan_sources"]
