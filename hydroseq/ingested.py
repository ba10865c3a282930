"""Opening an ingested dataset: the contract of ``docs/dataset-format.md`` is checked here, once.

Every stage that reads an ingested NetCDF file or Zarr store (dataset, export, forecast, the
appending ingest, the daily pipeline) opens it with :func:`open_ingested` and gets its
:class:`GridSpec` with it, after :func:`verify_ingested` has checked the file against the manifest
its ingest published beside it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import xarray as xr

from hydroseq.errors import InputDataError
from hydroseq.fileio import manifest_path, sha256_path, size_of_path
from hydroseq.grid import GridSpec


def open_ingested(path: str | Path) -> tuple[xr.Dataset, GridSpec]:
    """Open ``path`` lazily and check that it is an ingested hydroseq dataset, unchanged since its ingest.

    ``path`` is a NetCDF file, or a folder holding a Zarr store with consolidated metadata (as
    ``hydroseq ingest --out NAME.zarr`` writes it). Checked: it is the file its ingest published
    (:func:`verify_ingested`), it opens, has ``station`` and ``time`` coordinates, a regular and
    increasing time grid, and readable grid attributes. Either way the variables are read lazily
    (no dask), and text comes with the same dtypes. The caller closes the dataset. The time bounds
    (``time_bnds``) are left out: they follow from the labels and the grid step.

    Returns
    -------
    The open dataset and its grid.

    Raises
    ------
    InputDataError
        Naming the file and what is wrong with it.
    """
    path = Path(path)
    verify_ingested(path)
    dataset = _open_zarr(path) if path.is_dir() else _open_netcdf(path)
    try:
        grid = _check_contract(dataset, path)
    except InputDataError:
        dataset.close()
        raise
    bounds = str(dataset["time"].attrs.pop("bounds", ""))
    if bounds not in dataset.variables:
        return dataset, grid
    without = dataset.drop_vars(bounds)
    without.set_close(dataset.close)
    return without, grid


def _open_netcdf(path: Path) -> xr.Dataset:
    try:
        dataset = xr.open_dataset(path)
    except (OSError, ValueError) as error:
        reason = str(error).split("\n")[0].split(". ")[0] or type(error).__name__  # not xarray's hints that follow
        raise InputDataError(path, f"cannot open as NetCDF ({reason})") from None
    # ids stored as CF character arrays index their dimension as Python objects: fixed-width str, as Zarr gives
    text_indexes = {name: dataset[name].astype(str) for name in dataset.indexes if dataset[name].dtype == object}
    if not text_indexes:
        return dataset
    converted = dataset.assign_coords(text_indexes)
    converted.set_close(dataset.close)
    return converted


def _open_zarr(path: Path) -> xr.Dataset:
    if not (path / ".zmetadata").is_file():
        raise InputDataError(path, "is a folder but not a Zarr store with consolidated metadata (no .zmetadata); "
                             "is it an ingested hydroseq store?")
    try:
        dataset = xr.open_dataset(path, engine="zarr", consolidated=True, chunks=None)
    except (OSError, ValueError, KeyError) as error:
        raise InputDataError(path, f"cannot open as a Zarr store ({error})") from None
    text = [name for name, variable in dataset.variables.items() if variable.dtype.kind == "T"]
    if not text:
        return dataset
    # variable-length text reads back as numpy's StringDType, from NetCDF as fixed-width str: so here too
    converted = dataset.copy()
    for name in text:
        variable = dataset.variables[name]
        converted[name] = variable.copy(data=variable.values.astype(object).astype(str))
    converted.set_close(dataset.close)
    return converted


def _check_contract(dataset: xr.Dataset, path: Path) -> GridSpec:
    for coord in ("station", "time"):
        if coord not in dataset.coords or dataset[coord].dims != (coord,):
            raise InputDataError(path, f"has no {coord!r} coordinate of its own dimension; is it an ingested "
                                       "hydroseq file?")
    times = np.asarray(dataset["time"].values).astype("datetime64[ns]")
    steps = np.diff(times)
    irregular = (steps <= np.timedelta64(0)) | (steps != steps[0]) if len(steps) else np.zeros(0, bool)
    if irregular.any():
        bad = int(np.flatnonzero(irregular)[0]) + 1
        raise InputDataError(path, "time grid is not regular and increasing", where=f"time {times[bad]}")
    try:
        return GridSpec.from_attrs(dataset.attrs)
    except ValueError as error:
        raise InputDataError(path, f"{error}; is it an ingested hydroseq file?", where="global attributes") from None


def verify_ingested(path: str | Path) -> None:
    """Check ``path`` against ``<stem>.manifest.json``, the manifest its ingest (or append) published with it.

    The size and the SHA-256 of the whole file (of every file of a Zarr store) must be those the
    manifest lists: the bytes are then the ones ingest wrote, so the values behind the file's
    ``dataset_checksum`` are too. Hashing the whole file rather than the window a forecast reads
    costs little (SHA-256 runs at about 1 GB/s: some 10 ms for the 31-basin daily file, under 0.1 s
    for the 433-basin one, a fraction of what opening the model costs) and vouches for all of it.
    A file without a manifest beside it listing it (a copy moved on its own, a file written by
    other code) is not checked: there is nothing to check it against.

    Raises
    ------
    InputDataError
        If the file differs from its manifest (edited in place since the ingest), or the manifest
        cannot be read; the message says how to ingest it again.
    """
    path = Path(path)
    manifest = manifest_path(path)
    if not path.exists():
        return  # opening it says so
    for _ in range(3):  # an ingest publishing meanwhile replaces file and manifest: read both again
        recorded = _recorded(path, manifest)
        if recorded is None or (size_of_path(path) == recorded[0] and sha256_path(path) == recorded[1]):
            return
        if _recorded(path, manifest) == recorded:
            break
    raise InputDataError(path, f"changed since it was ingested: its size and SHA-256 are not those in "
                               f"{manifest.name}, which ingest published with it; ingest it again "
                               f"(hydroseq ingest --config <its ingest config> --out {path})")


def _recorded(path: Path, manifest: Path) -> tuple[int, str] | None:
    """``(bytes, sha256)`` that ``manifest`` lists for ``path``; None without a manifest that lists it."""
    try:
        files = json.loads(manifest.read_text())["files"]
        entry = next((item for item in files if item["name"] == path.name), None)
        return None if entry is None else (int(entry["bytes"]), str(entry["sha256"]))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise InputDataError(path, f"its manifest {manifest.name} cannot be read ({error}); ingest it again "
                                   f"(hydroseq ingest --config <its ingest config> --out {path})") from None
