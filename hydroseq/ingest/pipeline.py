"""``hydroseq ingest``: plan which files hold which station, grid every station, write, report."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from tqdm import tqdm

from hydroseq.config import IngestConfig
from hydroseq.errors import ConfigError, InputDataError
from hydroseq.fileio import manifest_path, publish_set
from hydroseq.ingest.append import append_to_existing
from hydroseq.ingest.forecast_grid import grid_forecast_source
from hydroseq.ingest.output import build_dataset, write_dataset
from hydroseq.ingest.readers import READERS, forecast_reader, source_files
from hydroseq.ingest.report import IngestReport, build_report, nothing_ingested, save_report
from hydroseq.ingest.station import SourcePlan, StationResult, ingest_station
from hydroseq.ingest.station_list import load_stations
from hydroseq.ingest.stations import Station
from hydroseq.ingest.timegrid import TimeGrid, build_grid
from hydroseq.ingest.zarr_output import check_replaceable, is_zarr_path, stations_per_chunk, write_zarr


def ingest(config: IngestConfig, out: str | Path, workers: int | None = None, scheduler: str | None = None,
           append: bool = False, show_progress: bool = True) -> IngestReport:
    """Resample every configured source onto the grid and write one NetCDF dataset, or a Zarr store
    when ``out`` ends in ``.zarr`` (:mod:`hydroseq.ingest.zarr_output`; not with ``append``).

    Writes ``out`` and the report files beside it as one set under ``<out stem>.manifest.json``
    (:func:`hydroseq.fileio.publish_set`: all of them or none) and returns the
    :class:`~hydroseq.ingest.report.IngestReport`. With ``on_bad_station: skip`` a station whose
    input is unusable is left out and reported; with ``fail`` its error stops the run and nothing
    is written. Forecast sources (``forecast_sources``) are gridded after the observations, in this
    process, at the stations ingested (:mod:`hydroseq.ingest.forecast_grid`). ``workers`` (a new
    local dask cluster of that many processes) or ``scheduler`` (an existing one) grid the stations
    in parallel; the file is the same as a serial run's (a Zarr store is written by the workers,
    :mod:`hydroseq.ingest.zarr_on_dask`).
    ``append`` adds the grid steps of this config to the existing ``out`` (see
    :mod:`hydroseq.ingest.append`; ``report.appended`` says what was added). Steps past the file's
    end without any value are not appended, and when that leaves the values as they were nothing
    is written. ``show_progress`` draws a progress bar on a terminal.
    """
    out = Path(out)
    zarr_output = is_zarr_path(out)
    if zarr_output and append:
        raise ConfigError(f"ingest --append writes NetCDF only, not a Zarr store ({out}): append to a .nc "
                          "file, or run a full ingest into the store")
    if zarr_output:
        check_replaceable(out)
    for source in config.forecast_sources:
        forecast_reader(source)  # a format or layout no reader reads stops the ingest before any file is read
    grid = build_grid(config.grid)
    stations = load_stations(config.stations)
    plans, files, dropped = plan_sources(config, stations)
    on_dask = workers is not None or scheduler is not None
    if zarr_output and on_dask:
        from hydroseq.ingest.zarr_on_dask import ingest_zarr_on_dask

        todo = [station for station in stations if station.id not in dropped]
        if not todo:
            raise nothing_ingested(out, dropped)
        return ingest_zarr_on_dask(config, out, grid, todo, plans, files, dropped, workers=workers,
                                   scheduler=scheduler, show_progress=show_progress)
    results: list[StationResult] = []
    if on_dask:
        results = _grid_on_dask(config, stations, plans, grid, dropped, workers, scheduler, show_progress)
    else:
        # disable=None: the bar is drawn on a terminal only, so logs and piped stderr hold just the errors
        for station in tqdm(stations, desc="reading sources", unit="station", disable=None if show_progress else True):
            if station.id in dropped:
                continue
            try:
                results.append(ingest_station(station, plans[station.id], grid))
            except InputDataError as error:
                _skip_or_raise(config, dropped, station.id, error)
    if not results:
        raise nothing_ingested(out, dropped)
    stations_done = [result.station for result in results]
    forecasts = tuple(grid_forecast_source(source, stations_done, grid) for source in config.forecast_sources)
    files += [path for forecast in forecasts for path in forecast.files if path not in files]
    ds = build_dataset(config, grid, results, files, forecasts)
    appended = None
    if append:
        ds, appended = append_to_existing(out, ds, grid.spec)
    marked_missing = {result.station.id: result.marked_missing for result in results}
    report = build_report(ds, out, dropped, marked_missing)
    report.appended = appended
    if appended is not None and not appended.written:  # nothing new: the dataset and its report stay as they were
        return report
    with publish_set(manifest_path(out)) as staged:  # the dataset and its report appear together
        if zarr_output:
            write_zarr(ds, staged.folder(out), stations_per_chunk(config, ds.sizes["time"], ds.sizes.get("lead", 0)))
        else:
            write_dataset(ds, staged.path(out))
        save_report(report, {kind: staged.path(path) for kind, path in report.paths.items()})
    return report


def plan_sources(config: IngestConfig,
                 stations: list[Station]) -> tuple[dict[str, list[SourcePlan]], list[Path], dict[str, str]]:
    """Which files of each source hold each station.

    Returns the plans per station id, every file used (for provenance), and the stations dropped
    while planning (``on_bad_station: skip``): no data in a source. A file holding a station that
    is not in the table is an error unless ``stations.ids`` or ``stations.exclude_ids`` restricts the run.
    """
    known = {station.id for station in stations}
    plans: dict[str, list[SourcePlan]] = defaultdict(list)
    used: list[Path] = []
    dropped: dict[str, str] = {}
    for source in config.sources:
        by_station: dict[str, list[Path]] = defaultdict(list)
        for path in source_files(source):
            ids = READERS[source.format].station_ids(source, path)
            for station_id in (known if ids is None else ids):
                if station_id in known:
                    by_station[station_id].append(path)
                elif config.stations.ids is None and config.stations.exclude_ids is None:
                    error = InputDataError(path, f"station {station_id!r} is not in {config.stations.label}")
                    _skip_or_raise(config, dropped, station_id, error)
        for station in stations:
            if station.id not in by_station:
                error = InputDataError(source.path, f"source {source.label!r} has no data for station {station.id}")
                _skip_or_raise(config, dropped, station.id, error)
            else:
                plans[station.id].append(SourcePlan(source, tuple(by_station[station.id])))
                used.extend(path for path in by_station[station.id] if path not in used)
    return dict(plans), used, dropped


def _skip_or_raise(config: IngestConfig, dropped: dict[str, str], station_id: str, error: InputDataError) -> None:
    if config.on_bad_station == "fail":
        raise error
    dropped.setdefault(station_id, str(error))


def _grid_on_dask(config: IngestConfig, stations: list[Station], plans: dict[str, list[SourcePlan]], grid: TimeGrid,
                  dropped: dict[str, str], workers: int | None, scheduler: str | None,
                  show_progress: bool) -> list[StationResult]:
    """The per-station loop above, run on a dask cluster (see :mod:`hydroseq.ingest.distributed`)."""
    from hydroseq.ingest.distributed import grid_stations_on_dask

    todo = [station for station in stations if station.id not in dropped]
    outcomes = grid_stations_on_dask(todo, plans, grid, workers=workers, scheduler=scheduler,
                                    show_progress=show_progress)
    results = []
    for station, outcome in zip(todo, outcomes, strict=True):
        if isinstance(outcome, InputDataError):
            _skip_or_raise(config, dropped, station.id, outcome)
        else:
            results.append(outcome)
    return results


__all__ = ["ingest", "plan_sources"]
