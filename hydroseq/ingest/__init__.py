"""Ingestion: raw station and gridded sources onto one leakage-free time grid (NetCDF).

Public API: :func:`ingest` (what ``hydroseq ingest`` calls); :func:`ingest_station` (the pure
per-station step, mappable over stations); :func:`build_grid`; :func:`dataset_checksum`.
"""

from hydroseq.ingest.output import dataset_checksum
from hydroseq.ingest.pipeline import ingest, plan_sources
from hydroseq.ingest.report import IngestReport
from hydroseq.ingest.station import SourcePlan, StationResult, ingest_station
from hydroseq.ingest.timegrid import TimeGrid, build_grid

__all__ = ["IngestReport", "SourcePlan", "StationResult", "TimeGrid", "build_grid", "dataset_checksum",
           "ingest", "ingest_station", "plan_sources"]
