"""Opening an ingested dataset: the contract of ``docs/dataset-format.md`` is checked here, once.

Every stage that reads an ingested NetCDF file or Zarr store (dataset, export, forecast, the
appending ingest, the daily pipeline) opens it with :func:`open_ingested` and gets its
:class:`GridSpec` with it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr

from hydroseq.errors import InputDataError
from hydroseq.grid import GridSpec


def open_ingested(path: str | Path) -> tuple[xr.Dataset, GridSpec]:
    """Open ``path`` lazily and check that it is an ingested hydroseq dataset.

    ``path`` is a NetCDF file, or a folder holding a Zarr store with consolidated metadata (as
    ``hydroseq ingest --out NAME.zarr`` writes it). Checked: it opens, has ``station`` and ``time``
    coordinates, a regular and increasing time grid, and readable grid attributes. Either way the
    variables are read lazily (no dask), and text comes with the same dtypes. The caller
    closes the dataset. The time bounds (``time_bnds``) are left out: they follow from the labels
    and the grid step.

    Returns
    -------
    The open dataset and its grid.

    Raises
    ------
    InputDataError
        Naming the file and what is wrong with it.
    """
    path = Path(path)
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
        return xr.open_dataset(path)
    except (OSError, ValueError) as error:
        raise InputDataError(path, f"cannot open as NetCDF ({error})") from None


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
        if coord not in dataset.coords:
            raise InputDataError(path, f"has no {coord!r} coordinate; is it an ingested hydroseq file?")
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
