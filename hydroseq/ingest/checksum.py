"""``dataset_checksum``: one SHA-256 over an ingested dataset's values, the same for every writer.

The digest is fed variable by variable (sorted by name) and, within a variable, block by block of
station rows, so a dataset too large for memory (a Zarr store written by dask workers) is hashed
by reading one chunk of stations at a time and gets the digest of the whole dataset in memory.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import numpy as np
import xarray as xr

_TEXT_SEPARATOR = "\x1f"


def dataset_checksum(ds: xr.Dataset, stations_per_read: int | None = None) -> str:
    """SHA-256 over every variable's and coordinate's name and values (not attributes), cell
    bounds excepted (they follow from the labels and the grid step).

    Values are canonicalised (text as UTF-8, times as int64 ns, NaN as one bit pattern) so the
    digest is the same before writing and after reading the file or store back, whatever the
    writer. ``stations_per_read`` reads the variables along ``station`` that many stations at a
    time (a lazily opened dataset then never loads more); the digest does not depend on it.
    """
    bounds = {str(ds[name].attrs["bounds"]) for name in ds.variables if "bounds" in ds[name].attrs}
    digest = hashlib.sha256()
    for name in sorted(set(map(str, ds.variables)) - bounds):
        variable = ds.variables[name]
        digest.update(name.encode() + b"\0" + str(variable.shape).encode() + b"\0")
        for position, block in enumerate(_station_blocks(variable, stations_per_read)):
            digest.update(_canonical_bytes(block, first=position == 0))
    return digest.hexdigest()


def _station_blocks(variable: xr.Variable, stations_per_read: int | None) -> Iterator[np.ndarray]:
    """The values of ``variable`` whole, or in consecutive blocks along a leading ``station`` axis."""
    if stations_per_read is None or not variable.dims or variable.dims[0] != "station":
        yield np.asarray(variable.values)
        return
    for start in range(0, max(variable.shape[0], 1), stations_per_read):
        yield np.asarray(variable[start:start + stations_per_read].values)


def _canonical_bytes(values: np.ndarray, first: bool = True) -> bytes:
    """The canonical bytes of ``values``, a block of a variable: a numeric dtype tag opens the
    first block only and text blocks are joined by the separator, so the blocks' bytes concatenate
    to those of the whole variable."""
    if values.dtype.kind in "OUST":
        items = [item.decode() if isinstance(item, bytes) else str(item) for item in values.ravel().tolist()]
        return ("" if first else _TEXT_SEPARATOR).encode() + _TEXT_SEPARATOR.join(items).encode()
    if values.dtype.kind == "M":
        return values.astype("datetime64[ns]").view(np.int64).tobytes()
    tag = values.dtype.str.encode() if first else b""
    if values.dtype.kind == "f":
        canonical = np.where(np.isnan(values), np.nan, values).astype(values.dtype)
        return tag + np.ascontiguousarray(canonical).tobytes()
    return tag + np.ascontiguousarray(values).tobytes()
