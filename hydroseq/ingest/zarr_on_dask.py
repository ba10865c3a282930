"""``hydroseq ingest --workers/--scheduler`` into a Zarr store: the workers write the station rows.

The client writes the store's template (coordinates, static variables, the metadata of the
observed ones) into the staged store, the tasks write their stations' rows into it
(:func:`hydroseq.ingest.distributed.grid_stations_into_store`) and return report rows only. The
client then drops the rows of stations that failed (``on_bad_station: skip``; ``fail`` raises and
writes nothing), grids and adds the forecast variables as the serial ingest does, and sets the
global attributes with the ``dataset_checksum`` read back one chunk of stations at a time. No
process holds more than a task's chunk of the observed variables; the store is the serial one's,
value for value, attribute for attribute, checksum included.
"""

from __future__ import annotations

from pathlib import Path

import dask.array
import numpy as np
import pandas as pd
import xarray as xr

from hydroseq.config import IngestConfig
from hydroseq.fileio import manifest_path, publish_set
from hydroseq.ingest.distributed import grid_stations_into_store
from hydroseq.ingest.forecast_grid import grid_forecast_source
from hydroseq.ingest.output import (
    forecast_dataset,
    global_attrs,
    observed_names,
    observed_variables,
    static_variables,
    station_coords,
)
from hydroseq.ingest.report import IngestReport, nothing_ingested, save_report
from hydroseq.ingest.station import SourcePlan
from hydroseq.ingest.stations import Station
from hydroseq.ingest.timegrid import TimeGrid
from hydroseq.ingest.zarr_output import (
    add_variables,
    finish_store,
    keep_stations,
    stations_per_chunk,
    write_template,
)


def ingest_zarr_on_dask(config: IngestConfig, out: Path, grid: TimeGrid, stations: list[Station],
                        plans: dict[str, list[SourcePlan]], files: list[Path], dropped: dict[str, str], *,
                        workers: int | None, scheduler: str | None, show_progress: bool) -> IngestReport:
    """Ingest ``stations`` (those left after planning; ``dropped`` holds the others and their reason)
    into the Zarr store ``out`` and its report files, published as one set like the serial ingest's.

    Raises
    ------
    InputDataError
        The first bad station in table order under ``on_bad_station: fail``, or no station could be ingested.
    """
    horizon = max((source.horizon for source in config.forecast_sources), default=0)
    per_chunk = stations_per_chunk(config, len(grid), horizon)
    with publish_set(manifest_path(out)) as staged:
        store = staged.folder(out)
        write_template(_template(config, grid, stations, per_chunk), store, per_chunk)
        chunks = grid_stations_into_store(stations, plans, grid, config, store, per_chunk, workers=workers,
                                          scheduler=scheduler, show_progress=show_progress)
        failures = {chunk.start + position: failure for chunk in chunks for position, failure in chunk.failures.items()}
        for position in sorted(failures):
            if config.on_bad_station == "fail":
                raise failures[position].error()
            dropped.setdefault(stations[position].id, str(failures[position].error()))
        kept = [position for position in range(len(stations)) if position not in failures]
        if not kept:
            raise nothing_ingested(out, dropped)
        if failures:
            keep_stations(store, kept, per_chunk)
        stations_done = [stations[position] for position in kept]
        forecasts = tuple(grid_forecast_source(source, stations_done, grid) for source in config.forecast_sources)
        files += [path for forecast in forecasts for path in forecast.files if path not in files]
        if forecasts:
            add_variables(forecast_dataset(forecasts), store, per_chunk)
        finish_store(store, global_attrs(config, grid, files, len(stations_done)), per_chunk)
        rows = [row for chunk in chunks for row in chunk.rows]
        records = {station: runs for chunk in chunks for station, runs in chunk.records.items()}
        report = IngestReport(out, pd.DataFrame(rows), dict(dropped), records)
        save_report(report, {kind: staged.path(path) for kind, path in report.paths.items()})
    return report


def _template(config: IngestConfig, grid: TimeGrid, stations: list[Station], per_chunk: int) -> xr.Dataset:
    """The dataset of ``stations`` with its observed variables as lazy placeholders (dask, all NaN)."""
    placeholder = dask.array.full((len(stations), len(grid)), np.nan, dtype=np.float32, chunks=(per_chunk, -1))
    observed = observed_variables(config, dict.fromkeys(observed_names(config), placeholder))
    template = xr.Dataset({**observed, **static_variables(config, stations)}, coords=station_coords(stations, grid))
    template.attrs = grid.spec.to_attrs()
    return template

