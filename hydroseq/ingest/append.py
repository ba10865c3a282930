"""``hydroseq ingest --append``: add newly gridded steps to an existing ingested dataset.

The daily job ingests only a short window (its config's grid covers the last few days) and
appends it: the raw history is never read again. The existing file is read back (its arrays, not
the raw sources), the steps the new ones cover (from their first label to their last) are replaced
by them, and the file is rewritten atomically with recomputed coverage and ``dataset_checksum``.
The result is the same dataset, value for value and checksum for checksum, as one ingest over the
whole period. The file's steps after the new ones are kept as they are: a rerun or backfill of a
past day (its window ends before the file's end) replaces that window and nothing else.

Rules: the grid (frequency, time zone, day boundary) and the stations (ids, in order) must be those
of the existing file, and the new steps must continue it without a gap (they may overlap its tail,
so that late or revised observations of the last days replace the earlier values).

Steps after the file's last one that hold no value at all (no observed variable, no forecast
product, at any station: their raw files have not arrived) are not appended when no later step
holds one: the file keeps ending where its data end, and the next run's window, which starts the
day after that end, picks them up once the files come in. Likewise a step the file holds where
the new ingest found no value at any station (a backfill whose raw files are no longer in the
folder) keeps the file's values rather than erasing them. When nothing is appended and the
overlapping steps bring no change, the file is left as it was (:class:`AppendSummary`).

Forecast variables (``hydroseq_role = "forecast"``, dims ``(station, time, lead)``) are appended
the same way, the lead count must be the file's; at an overlapping issue where the new ingest found
no published product (its ``NAME_reference_time`` is NaT: the window's files hold only the newest
products) the file's value and reference time are kept, so appending the newest product never
erases the forecasts of the earlier issues.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from hydroseq.errors import InputDataError
from hydroseq.grid import GridSpec
from hydroseq.ingest.checksum import dataset_checksum
from hydroseq.ingest.output import history_line
from hydroseq.ingest.report import AppendSummary
from hydroseq.ingested import open_ingested


def append_to_existing(out: str | Path, new: xr.Dataset, grid: GridSpec) -> tuple[xr.Dataset, AppendSummary]:
    """The existing dataset at ``out`` extended (and its tail overwritten) by ``new``, gridded on ``grid``,
    and what was added (steps after the file's end without any value are left out, see the module
    docstring; ``written`` is False when the values are the file's: it need not be written).

    Raises
    ------
    InputDataError
        If ``out`` does not exist or cannot be read, or its grid, stations or variables differ from
        ``new``'s, or there is a gap between its last step and the first new one.
    """
    out = Path(out)
    if not out.exists():
        raise InputDataError(out, "--append needs an existing dataset; run the first ingest without --append")
    opened, old_grid = open_ingested(out)
    with opened:
        old = opened.load()
    _check_compatible(out, old, old_grid, new, grid)
    new, without_data = _without_empty_tail(new, old["time"].values[-1])
    if not new.sizes["time"]:  # every step after the file's end, none with a value
        return old, AppendSummary(0, without_data, old["time"].values[-1], written=False)
    new = _keep_published_forecasts(old, _keep_steps_without_values(old, new))
    old_times, new_times = old["time"].values, new["time"].values
    before = old.isel(time=np.flatnonzero(old_times < new_times[0]))
    after = old.isel(time=np.flatnonzero(old_times > new_times[-1]))  # a backfill: the file's later steps
    combined = _combine([before, new, after], new, old.attrs)
    new_steps = combined.sizes["time"] - old.sizes["time"]
    changed = new_steps > 0 or combined.attrs["dataset_checksum"] != old.attrs.get("dataset_checksum")
    return combined, AppendSummary(new_steps, without_data, combined["time"].values[-1], written=changed)


def _without_empty_tail(new: xr.Dataset, old_last: np.datetime64) -> tuple[xr.Dataset, np.ndarray]:
    """``new`` without its steps after ``old_last`` that are followed by no value, and their labels.

    A step holds a value when any observed (``dynamic``) or forecast variable is finite at any station.
    """
    filled = _filled_steps(new)
    times = new["time"].values
    last_kept = max(int(np.searchsorted(times, old_last, side="right")) - 1,
                    int(np.flatnonzero(filled)[-1]) if filled.any() else -1)
    return new.isel(time=slice(0, last_kept + 1)), times[last_kept + 1:]


def _filled_steps(data: xr.Dataset) -> np.ndarray:
    """Per step of ``data``: whether any observed (``dynamic``) or forecast variable is finite at any station."""
    names = [name for name in data.data_vars if data[name].attrs.get("hydroseq_role") in ("dynamic", "forecast")]
    filled = np.zeros(data.sizes["time"], dtype=bool)
    for name in names:
        variable = data[name].transpose("time", ...).values
        filled |= np.isfinite(variable.reshape(len(filled), -1)).any(axis=1)
    return filled


def _keep_steps_without_values(old: xr.Dataset, new: xr.Dataset) -> xr.Dataset:
    """``new`` with the file's values at the steps both hold where ``new`` has no value at any station."""
    old_times, new_times = old["time"].values, new["time"].values
    index = np.clip(np.searchsorted(old_times, new_times), 0, len(old_times) - 1)
    steps = np.flatnonzero((old_times[index] == new_times) & ~_filled_steps(new))
    if not len(steps):
        return new
    new = new.copy(deep=True)
    for name in [n for n in new.data_vars if "time" in new[n].dims]:
        file_values = old[name].transpose(*new[name].dims).isel(time=index[steps]).values
        new[name][{"time": steps}] = file_values
    return new


def _check_compatible(out: Path, old: xr.Dataset, old_grid: GridSpec, new: xr.Dataset, grid: GridSpec) -> None:
    differences = old_grid.differences(grid)
    if differences:
        name, in_file, in_config = differences[0]
        raise InputDataError(out, f"{name} is {in_file!r} in the file but {in_config!r} in the config: appending "
                             "needs the same grid", where=f"global attribute {name}")
    old_ids, new_ids = [str(s) for s in old["station"].values], [str(s) for s in new["station"].values]
    if old_ids != new_ids:
        added, missing = sorted(set(new_ids) - set(old_ids)), sorted(set(old_ids) - set(new_ids))
        raise InputDataError(out, f"stations differ (new: {added or 'none'}, missing: {missing or 'none'}, or "
                             "another order): appending needs the same stations; run a full ingest instead")
    if set(old.data_vars) != set(new.data_vars):
        raise InputDataError(out, f"variables differ: {sorted(map(str, set(old.data_vars) ^ set(new.data_vars)))}")
    if old.sizes.get("lead") != new.sizes.get("lead"):
        raise InputDataError(out, f"the file has {old.sizes.get('lead', 0)} forecast lead(s), the config "
                             f"{new.sizes.get('lead', 0)}: appending needs the same horizon", where="lead")
    step = grid.step
    old_times, first_new = old["time"].values, pd.Timestamp(new["time"].values[0])
    if first_new > pd.Timestamp(old_times[-1]) + step:
        raise InputDataError(out, f"gap: the file ends at {pd.Timestamp(old_times[-1])} and the new steps start at "
                             f"{first_new}; widen the config's grid to start earlier", where="time")
    if first_new <= pd.Timestamp(old_times[0]):
        raise InputDataError(out, f"the new steps start at {first_new}, not after the file's first step "
                             f"{pd.Timestamp(old_times[0])}: that is a full ingest, run it without --append")


def _keep_published_forecasts(old: xr.Dataset, new: xr.Dataset) -> xr.Dataset:
    """``new`` with the file's forecast at overlapping issues where ``new`` has no product."""
    old_times, new_times = old["time"].values, new["time"].values
    index = np.clip(np.searchsorted(old_times, new_times), 0, len(old_times) - 1)
    overlap = np.flatnonzero(old_times[index] == new_times)
    if not len(overlap):
        return new
    new = new.copy(deep=True)
    for name in [n for n in new.data_vars if new[n].attrs.get("hydroseq_role") == "forecast"]:
        reference = f"{name}_reference_time"
        old_reference = old[reference].values[:, index[overlap]]
        take = np.isnat(new[reference].values[:, overlap]) & ~np.isnat(old_reference)
        stations, steps = np.nonzero(take)
        new[reference].values[stations, overlap[steps]] = old_reference[stations, steps]
        new[name].values[stations, overlap[steps], :] = old[name].values[:, index[overlap]][stations, steps, :]
    return new


def _combine(parts: list[xr.Dataset], new: xr.Dataset, old_attrs: dict) -> xr.Dataset:
    """``parts`` (consecutive runs of steps, ``new`` among them) as one dataset with ``new``'s attributes."""
    timed = [name for name in new.data_vars if "time" in new[name].dims]
    series = xr.concat([part[timed] for part in parts if part.sizes["time"]], dim="time", coords="minimal",
                       compat="override", join="override")
    combined = new.drop_dims("time").assign({name: series[name] for name in timed})
    combined = combined[list(new.data_vars)]
    for name in timed:
        combined[name].attrs = dict(new[name].attrs)
    for name in [n for n in timed if new[n].attrs.get("hydroseq_role") == "dynamic"]:
        coverage = np.mean(~np.isnan(combined[name].values), axis=1).astype(np.float32)
        combined[f"coverage_{name}"] = ("station", coverage, dict(new[f"coverage_{name}"].attrs))
    combined["time"].attrs = dict(new["time"].attrs)
    combined.attrs = dict(new.attrs)
    combined.attrs["source_files"] = _merged_sources(old_attrs.get("source_files"), new.attrs.get("source_files"))
    appended = history_line("ingest --append", new["time"].values, new.sizes["station"])
    combined.attrs["history"] = "\n".join(filter(None, [str(old_attrs.get("history", "")), appended]))
    combined.attrs["dataset_checksum"] = dataset_checksum(combined)
    return combined


def _merged_sources(old: str | None, new: str | None) -> str:
    """Provenance of every ingest that contributed: the earlier files first, no duplicates."""
    entries = json.loads(old or "[]") + json.loads(new or "[]")
    unique = {(entry["path"], entry["sha256"]): entry for entry in entries}
    return json.dumps(list(unique.values()))
