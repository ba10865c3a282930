"""Station-parallel ingestion on a ``dask.distributed`` cluster (``hydroseq ingest --workers/--scheduler``).

The stations are cut into contiguous chunks; each chunk is one task that runs the same pure
per-station function as the serial ingest (:func:`hydroseq.ingest.ingest_station`). For a NetCDF
output a task returns only the gridded arrays, never the raw series; the client collects them in
station-table order and writes the output once, so the file is bit-identical to a serial run. For a
Zarr output (:func:`grid_stations_into_store`) a task writes its stations' rows into the store
itself and returns only their report rows; its chunk of stations is a whole number of the store's
chunks, so no two tasks write one Zarr chunk.

Limits: the workers of an existing cluster (``--scheduler``) must see the source files at the same
paths, relative ones resolved from the worker's working directory, and for a Zarr output the
store's folder. A source file that holds every
station (a long-format CSV, a multi-station NetCDF) is read whole by every worker that needs it.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr
from tqdm import tqdm

from hydroseq.config import IngestConfig
from hydroseq.errors import ConfigError, InputDataError, UnavailableError
from hydroseq.ingest.output import observed_names, observed_variables
from hydroseq.ingest.report import report_rows
from hydroseq.ingest.station import SourcePlan, StationResult, ingest_station
from hydroseq.ingest.stations import Station
from hydroseq.ingest.timegrid import TimeGrid
from hydroseq.ingest.zarr_output import write_region

if TYPE_CHECKING:
    from distributed import Client

CHUNK_BYTES = 64 * 2**20  # gridded output per task; bounds what a worker holds before returning
CHUNKS_PER_WORKER = 4  # several chunks per worker so that a slow chunk does not idle the others
CONNECT_TIMEOUT_S = 30


@dataclass(frozen=True)
class StationFailure:
    """A station whose input is unusable, as a plain record (an :class:`InputDataError` with its
    keyword-only constructor does not survive pickling between processes)."""

    station_id: str
    path: str
    problem: str
    where: str | None

    def error(self) -> InputDataError:
        """The error the serial ingest would have raised for this station."""
        return InputDataError(self.path, self.problem, self.where)


StationOutcome = StationResult | StationFailure
WorkItem = tuple[Station, list[SourcePlan]]


@dataclass(frozen=True)
class StoredChunk:
    """What a task that wrote its stations into a Zarr store returns: the report rows and record
    lengths of the stations written, and the stations that failed by their position in the chunk
    (their rows in the store are NaN, to be dropped or to fail the run); ``start`` is the position
    of the chunk's first station in the store."""

    start: int
    rows: list[dict[str, object]]
    records: dict[str, list[int]]
    failures: dict[int, StationFailure]


@contextlib.contextmanager
def dask_client(workers: int | None = None, scheduler: str | None = None) -> Iterator[Client]:
    """A ``distributed.Client``: on a new local cluster of ``workers`` processes, or on ``scheduler``.

    The local cluster has one thread per worker process (the per-station work holds the GIL in
    pandas/numpy most of the time, so processes, not threads, give the parallelism) and is shut down
    when the block ends.

    Raises
    ------
    ConfigError
        Both or neither of ``workers`` and ``scheduler`` given, or ``workers < 1``.
    UnavailableError
        The scheduler cannot be reached within 30 s.
    """
    import dask
    from distributed import Client, LocalCluster

    if (workers is None) == (scheduler is None):
        raise ConfigError("ingest: give either --workers N (a local dask cluster) or --scheduler ADDRESS, not both")
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT_S)
        except OSError as error:
            raise UnavailableError(f"ingest --scheduler {scheduler}: cannot connect to the dask scheduler "
                                f"({error})") from None
        with client:
            yield client
        return
    assert workers is not None  # exactly one of workers and scheduler is given
    if workers < 1:
        raise ConfigError(f"ingest --workers must be at least 1, got {workers}")
    # dask's default MALLOC_TRIM_THRESHOLD_=65536 made the per-station gridding 1.5-1.8x slower
    # (measured, docs/scale-out.md): glibc's own adaptive threshold is used instead.
    with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}), \
            LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                         dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        yield client


def station_chunks(items: Sequence[WorkItem], n_slots: int, grid_bytes_per_station: int,
                   multiple_of: int = 1) -> list[list[WorkItem]]:
    """Contiguous chunks of stations: about ``CHUNKS_PER_WORKER`` per worker slot, and each small
    enough that its gridded output stays under ``CHUNK_BYTES``; with ``multiple_of`` (the stations
    of a Zarr chunk) every chunk but the last has a multiple of that many stations."""
    if not items:
        return []
    by_memory = max(1, CHUNK_BYTES // max(grid_bytes_per_station, 1))
    by_balance = math.ceil(len(items) / (CHUNKS_PER_WORKER * max(n_slots, 1)))
    size = math.ceil(max(1, min(by_memory, by_balance)) / multiple_of) * multiple_of
    return [list(items[start:start + size]) for start in range(0, len(items), size)]


def grid_chunk(items: list[WorkItem], grid: TimeGrid) -> list[StationOutcome]:
    """The task a worker runs: grid every station of the chunk, recording unusable input per station."""
    outcomes: list[StationOutcome] = []
    for station, plans in items:
        try:
            outcomes.append(ingest_station(station, plans, grid))
        except InputDataError as error:
            outcomes.append(StationFailure(station.id, error.path, error.problem, error.where))
    return outcomes


def grid_chunk_into_store(items: list[WorkItem], start: int, grid: TimeGrid, config: IngestConfig,
                          store: Path) -> StoredChunk:
    """The task of a Zarr output: grid the chunk, write its rows ``start ..`` into ``store``, return the report rows."""
    outcomes = grid_chunk(items, grid)
    results = [outcome for outcome in outcomes if isinstance(outcome, StationResult)]
    failures = {position: outcome for position, outcome in enumerate(outcomes) if isinstance(outcome, StationFailure)}
    missing = np.full(len(grid), np.nan, dtype=np.float32)
    stacked = {name: np.stack([outcome.values[name] if isinstance(outcome, StationResult) else missing
                               for outcome in outcomes]) for name in observed_names(config)}
    chunk = xr.Dataset(observed_variables(config, stacked))
    write_region(chunk, store, start)
    if not results:
        return StoredChunk(start, [], {}, failures)
    written = chunk.isel(station=[position for position in range(len(outcomes)) if position not in failures])
    written = written.assign_coords(station=[result.station.id for result in results], time=grid.labels.to_numpy())
    rows, records = report_rows(written, {result.station.id: result.marked_missing for result in results})
    return StoredChunk(start, rows, records, failures)


def grid_stations_on_dask(stations: Sequence[Station], plans: dict[str, list[SourcePlan]], grid: TimeGrid, *,
                          workers: int | None = None, scheduler: str | None = None,
                          show_progress: bool = True) -> list[StationResult | InputDataError]:
    """Grid ``stations`` on a dask cluster; one outcome per station, in the order given.

    An outcome is the station's :class:`StationResult`, or the :class:`InputDataError` the serial
    ingest would have raised for it (the caller applies ``on_bad_station``). Results are collected
    as tasks finish and their futures released at once, so the cluster never holds them twice.
    """
    items = [(station, plans[station.id]) for station in stations]
    with dask_client(workers, scheduler) as client:
        n_slots = _slots(client)
        chunks = station_chunks(items, n_slots, _grid_bytes_per_station(plans, grid))
        collected = _map_chunks(client, grid_chunk, chunks, [], n_slots, show_progress, grid=grid)
    return [o.error() if isinstance(o, StationFailure) else o for chunk in collected for o in chunk]


def grid_stations_into_store(stations: Sequence[Station], plans: dict[str, list[SourcePlan]], grid: TimeGrid,
                             config: IngestConfig, store: Path, per_chunk: int, *, workers: int | None = None,
                             scheduler: str | None = None, show_progress: bool = True) -> list[StoredChunk]:
    """Grid ``stations`` on a dask cluster into the Zarr ``store`` (its template written, chunked
    by ``per_chunk`` stations, the rows in the order given); the tasks' summaries, in that order."""
    items = [(station, plans[station.id]) for station in stations]
    with dask_client(workers, scheduler) as client:
        n_slots = _slots(client)
        chunks = station_chunks(items, n_slots, _grid_bytes_per_station(plans, grid), multiple_of=per_chunk)
        starts = [sum(len(chunk) for chunk in chunks[:position]) for position in range(len(chunks))]
        return _map_chunks(client, grid_chunk_into_store, chunks, starts, n_slots, show_progress,
                           grid=grid, config=config, store=store.resolve())


def _slots(client: Client) -> int:
    return sum(info["nthreads"] for info in client.scheduler_info(n_workers=-1)["workers"].values())


def _grid_bytes_per_station(plans: dict[str, list[SourcePlan]], grid: TimeGrid) -> int:
    n_variables = sum(len(plan.source.variables) for plan in next(iter(plans.values()), []))
    return 4 * len(grid) * max(n_variables, 1)


def _map_chunks(client: Client, task: Callable[..., Any], chunks: list[list[WorkItem]], starts: list[int],
                n_slots: int, show_progress: bool, **shared: object) -> list[Any]:
    """Run ``task(chunk[, start], **shared)`` for every chunk (``shared`` sent to every worker once);
    the results in the chunks' order."""
    from distributed import as_completed

    on_cluster = {name: client.scatter(value, broadcast=True) for name, value in shared.items()}
    futures = client.map(task, chunks, *([starts] if starts else []), **on_cluster, pure=False)
    chunk_of = {future.key: position for position, future in enumerate(futures)}
    collected: list[Any] = [None] * len(chunks)
    bar = tqdm(total=sum(map(len, chunks)), desc=f"gridding on dask ({n_slots} workers)", unit="station",
               disable=None if show_progress else True)  # None: only on a terminal, not in logs
    with bar:
        for future, result in as_completed(futures, with_results=True):
            position = chunk_of[future.key]
            collected[position] = result
            future.release()
            bar.update(len(chunks[position]))
    del futures
    return collected


__all__ = ["StationFailure", "StoredChunk", "dask_client", "grid_chunk", "grid_chunk_into_store",
           "grid_stations_into_store", "grid_stations_on_dask", "station_chunks"]
