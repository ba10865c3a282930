"""Station-parallel ingestion on a ``dask.distributed`` cluster (``hydroseq ingest --workers/--scheduler``).

The stations are cut into contiguous chunks; each chunk is one task that runs the same pure
per-station function as the serial ingest (:func:`hydroseq.ingest.ingest_station`) and returns only
the gridded arrays, never the raw series. The client collects the results in station-table order
and writes the output once, so the file is bit-identical to a serial run.

Limits: the workers of an existing cluster (``--scheduler``) must see the source files at the same
paths, relative ones resolved from the worker's working directory. A source file that holds every
station (a long-format CSV, a multi-station NetCDF) is read whole by every worker that needs it.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tqdm import tqdm

from hydroseq.errors import ConfigError, InputDataError, UnavailableError
from hydroseq.ingest.station import SourcePlan, StationResult, ingest_station
from hydroseq.ingest.stations import Station
from hydroseq.ingest.timegrid import TimeGrid

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


def station_chunks(items: Sequence[WorkItem], n_slots: int, grid_bytes_per_station: int) -> list[list[WorkItem]]:
    """Contiguous chunks of stations: about ``CHUNKS_PER_WORKER`` per worker slot, and each small
    enough that its gridded output stays under ``CHUNK_BYTES``."""
    if not items:
        return []
    by_memory = max(1, CHUNK_BYTES // max(grid_bytes_per_station, 1))
    by_balance = math.ceil(len(items) / (CHUNKS_PER_WORKER * max(n_slots, 1)))
    size = max(1, min(by_memory, by_balance))
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


def grid_stations_on_dask(stations: Sequence[Station], plans: dict[str, list[SourcePlan]], grid: TimeGrid, *,
                          workers: int | None = None, scheduler: str | None = None,
                          show_progress: bool = True) -> list[StationResult | InputDataError]:
    """Grid ``stations`` on a dask cluster; one outcome per station, in the order given.

    An outcome is the station's :class:`StationResult`, or the :class:`InputDataError` the serial
    ingest would have raised for it (the caller applies ``on_bad_station``). Results are collected
    as tasks finish and their futures released at once, so the cluster never holds them twice.
    """
    items = [(station, plans[station.id]) for station in stations]
    n_variables = sum(len(plan.source.variables) for plan in next(iter(plans.values()), []))
    with dask_client(workers, scheduler) as client:
        return _run_chunks(client, items, grid, 4 * len(grid) * max(n_variables, 1), show_progress)


def _run_chunks(client: Client, items: list[WorkItem], grid: TimeGrid, bytes_per_station: int,
                show_progress: bool) -> list[StationResult | InputDataError]:
    from distributed import as_completed

    n_slots = sum(info["nthreads"] for info in client.scheduler_info(n_workers=-1)["workers"].values())
    chunks = station_chunks(items, n_slots, bytes_per_station)
    grid_on_cluster = client.scatter(grid, broadcast=True)
    futures = client.map(grid_chunk, chunks, grid=grid_on_cluster, pure=False)
    chunk_of = {future.key: position for position, future in enumerate(futures)}
    collected: list[list[StationOutcome]] = [[] for _ in chunks]
    bar = tqdm(total=len(items), desc=f"gridding on dask ({n_slots} workers)", unit="station",
               disable=None if show_progress else True)  # None: only on a terminal, not in logs
    with bar:
        for future, outcomes in as_completed(futures, with_results=True):
            collected[chunk_of[future.key]] = outcomes
            future.release()
            bar.update(len(outcomes))
    del futures
    return [o.error() if isinstance(o, StationFailure) else o for chunk in collected for o in chunk]


__all__ = ["StationFailure", "dask_client", "grid_chunk", "grid_stations_on_dask", "station_chunks"]
