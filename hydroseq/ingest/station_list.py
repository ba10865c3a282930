"""Where an ingest's stations come from: a station table or a published dataset's attribute tables."""

from __future__ import annotations

from hydroseq.config.ingest import StationsConfig
from hydroseq.ingest.outlines import with_outlines
from hydroseq.ingest.published import published_stations
from hydroseq.ingest.stations import Station, table_stations


def load_stations(config: StationsConfig) -> list[Station]:
    """Read and check the stations, restricted to ``config.ids`` when given.

    A published dataset (``config.dataset``) is read by :func:`hydroseq.ingest.published.published_stations`,
    a table (``config.path``) by :func:`hydroseq.ingest.stations.table_stations`; both raise
    :class:`~hydroseq.errors.InputDataError` naming the file and the row of what is wrong. With
    ``config.outlines`` each station gets its basin outline (:func:`hydroseq.ingest.outlines.with_outlines`).
    """
    stations = published_stations(config) if config.path is None else table_stations(config)
    return stations if config.outlines is None else with_outlines(stations, config.outlines)
