"""The ingested dataset as a Zarr store: the NetCDF's variables, attributes and checksum, chunked by station.

Chosen by the output path: ``hydroseq ingest --out data/ingested.zarr``. The store is written in
Zarr format 2 with consolidated metadata (``.zmetadata``): consolidation is part of the v2
specification (not yet of v3, for which zarr-python warns), v2 stores are read by zarr-python 2
and 3, by netCDF-C (NCZarr) and by older xarray, and text (station ids) is stored as
variable-length UTF-8, whose v3 encoding zarr-python still calls unstable.

Every variable along ``station`` is chunked into :func:`stations_per_chunk` stations x all of its
other axes (a training or forecast read takes a few stations' whole series); coordinates along
``time`` and ``lead`` are one chunk each.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import dask
import xarray as xr
import zarr
import zarr.core.sync

from hydroseq.config import IngestConfig
from hydroseq.errors import OutputPathError
from hydroseq.fileio import atomic_folder
from hydroseq.ingest.checksum import dataset_checksum
from hydroseq.ingest.output import cf_encoding, with_time_bounds

ZARR_SUFFIX = ".zarr"
ZARR_FORMAT: Literal[2] = 2
CHUNK_BYTES = 4 * 2**20  # uncompressed bytes of one chunk of the largest variable, by default
_STORE_MARKERS = (".zgroup", ".zmetadata", "zarr.json")
SETTLE_SECONDS = 120.0  # the longest wait for a failed write's other chunk writes to end


def is_zarr_path(path: str | Path) -> bool:
    """Whether ``path`` names a Zarr store (its suffix is ``.zarr``)."""
    return Path(path).suffix.lower() == ZARR_SUFFIX


def is_zarr_store(path: str | Path) -> bool:
    """Whether the folder ``path`` holds Zarr metadata at its root."""
    return any((Path(path) / marker).is_file() for marker in _STORE_MARKERS)


def stations_per_chunk(config: IngestConfig, n_times: int, horizon: int = 0) -> int:
    """``output.zarr_stations_per_chunk``, else the stations whose series of the largest variable
    (float32, ``n_times`` steps x ``horizon`` leads for forecasts) fill about :data:`CHUNK_BYTES`."""
    if config.output.zarr_stations_per_chunk is not None:
        return config.output.zarr_stations_per_chunk
    return max(1, CHUNK_BYTES // (4 * max(n_times, 1) * max(horizon, 1)))


def check_replaceable(out: Path) -> None:
    """Refuse an output path that is a file, or a folder that is not a Zarr store (it would be replaced).

    Raises
    ------
    OutputPathError
        Naming ``out`` and why it is not written.
    """
    if out.exists() and not out.is_dir():
        raise OutputPathError(out, "is a file; a .zarr output is a folder (a Zarr store)")
    if out.is_dir() and any(out.iterdir()) and not is_zarr_store(out):
        raise OutputPathError(out, "is a folder but not a Zarr store: refusing to replace it")


def zarr_encoding(ds: xr.Dataset, per_chunk: int) -> dict[str, dict]:
    """:func:`~hydroseq.ingest.output.cf_encoding` with the chunks: ``per_chunk`` stations x the
    whole of every other axis."""
    encoding = {name: value for name, value in cf_encoding(ds).items() if name in ds.variables}
    for name, variable in ds.variables.items():
        chunks = tuple(min(per_chunk, size) if dim == "station" else size
                       for dim, size in zip(variable.dims, variable.shape, strict=True))
        encoding[str(name)] = {**encoding.get(str(name), {}), "chunks": chunks}
    return encoding


@contextlib.contextmanager
def settled_writes() -> Iterator[None]:
    """On an error, wait until every chunk write zarr started has ended before the error goes on.

    zarr gathers a write's chunk writes on its I/O event loop and does not cancel the others when one
    fails (``zarr.core.common.concurrent_map``): they go on in the background, and a half-written store
    removed meanwhile got files back (a full disk left a ``.tmp`` store under load).
    """
    try:
        yield
    except BaseException:
        loop = zarr.core.sync.loop[0]
        if loop is not None and loop.is_running():
            asyncio.run_coroutine_threadsafe(_all_other_tasks_done(), loop).result(SETTLE_SECONDS)
        raise


async def _all_other_tasks_done() -> None:
    others = asyncio.all_tasks() - {asyncio.current_task()}
    if others:
        await asyncio.wait(others, timeout=SETTLE_SECONDS)


def write_zarr(ds: xr.Dataset, store: Path, per_chunk: int) -> None:
    """Write the in-memory dataset ``ds`` (with its ``dataset_checksum``) into the empty folder ``store``."""
    ds = with_time_bounds(ds)
    with settled_writes():
        ds.to_zarr(store, mode="w", zarr_format=ZARR_FORMAT, consolidated=True, encoding=zarr_encoding(ds, per_chunk))


def write_template(ds: xr.Dataset, store: Path, per_chunk: int) -> None:
    """Write ``ds``'s metadata, and the values of its numpy-backed variables, into ``store``;
    its dask-backed variables are left for region writes (:func:`write_region`)."""
    ds = with_time_bounds(ds)
    with settled_writes():
        ds.to_zarr(store, mode="w", zarr_format=ZARR_FORMAT, consolidated=False, compute=False,
                   encoding=zarr_encoding(ds, per_chunk))


def write_region(ds: xr.Dataset, store: Path, start: int) -> None:
    """Write the station rows ``start ..`` of the variables of ``ds`` (along ``station``, no coordinates)."""
    with settled_writes():
        ds.to_zarr(store, region={"station": slice(start, start + ds.sizes["station"])}, mode="r+",
                   zarr_format=ZARR_FORMAT, consolidated=False)


def add_variables(ds: xr.Dataset, store: Path, per_chunk: int) -> None:
    """Add the variables of ``ds`` (e.g. the forecasts, with a new ``lead`` axis) to ``store``."""
    with settled_writes():
        ds.to_zarr(store, mode="a", zarr_format=ZARR_FORMAT, consolidated=False, encoding=zarr_encoding(ds, per_chunk))


def keep_stations(store: Path, positions: list[int], per_chunk: int) -> None:
    """Rewrite ``store`` with only the stations at ``positions``, copying one chunk at a time."""
    with atomic_folder(store) as compacted, xr.open_zarr(store, consolidated=False) as full:
        kept = full.isel(station=positions).chunk({"station": per_chunk})
        for name, variable in list(kept.variables.items()):
            variable.encoding = {}
            if variable.dtype.kind == "T":  # variable-length text reads back as numpy's StringDType
                kept[name] = variable.copy(data=variable.values.astype(object))
        with dask.config.set(scheduler="threads"), settled_writes():
            kept.to_zarr(compacted, mode="w", zarr_format=ZARR_FORMAT, consolidated=False,
                         encoding=zarr_encoding(kept, per_chunk))


def finish_store(store: Path, attrs: dict[str, str], per_chunk: int) -> str:
    """Set the global ``attrs`` and the ``dataset_checksum`` (read back ``per_chunk`` stations at a
    time), consolidate the metadata; return the checksum."""
    with xr.open_dataset(store, engine="zarr", consolidated=False, chunks=None) as written:
        checksum = dataset_checksum(written, per_chunk)
    group = zarr.open_group(store, mode="r+", zarr_format=ZARR_FORMAT)
    group.attrs.update({**attrs, "dataset_checksum": checksum})
    zarr.consolidate_metadata(store, zarr_format=ZARR_FORMAT)
    return checksum


__all__ = ["CHUNK_BYTES", "ZARR_FORMAT", "ZARR_SUFFIX", "add_variables", "check_replaceable",
           "finish_store", "is_zarr_path", "is_zarr_store", "keep_stations", "stations_per_chunk",
           "write_region", "write_template", "write_zarr"]
