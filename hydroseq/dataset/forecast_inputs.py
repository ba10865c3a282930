"""Weather-forecast inputs: the lead-window values issued at every grid step, ``[station, time, input, lead]``.

Two sources (:class:`hydroseq.config.train.ForecastInput`):

``ingested``
    A ``(station, time, lead)`` variable of the ingested file, written by a forecast source of
    ``hydroseq ingest``: at issue step t, lead l holds the newest product published by t,
    aggregated over the grid interval ``(t + (l - 1) step, t + l step]``.
``perfect``
    The observed variable at step ``t + l``: the same layout, an upper bound on any real forecast
    (it reads the future by construction, so a model trained on it is labelled as such).

Noise for ``perfect`` inputs is a function of (seed, variable, station id, grid label, lead) only, so the
training, evaluation and forecast stages draw the same value for the same issue whatever window
they read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import xarray as xr

from hydroseq.config.train import ForecastInput
from hydroseq.errors import InputDataError

FORECAST_ROLE = "forecast"
REFERENCE_TIME_SUFFIX = "_reference_time"


def perfect_forecast(series: np.ndarray, horizon: int) -> np.ndarray:
    """``[station, time, lead]`` with lead l (1..``horizon``) at step t = ``series[:, t + l]`` (NaN past the end)."""
    n_times = series.shape[1]
    out = np.full((*series.shape, horizon), np.nan, dtype=np.float32)
    for lead in range(1, horizon + 1):
        out[:, : max(0, n_times - lead), lead - 1] = series[:, lead:]
    return out


def lead_window_within(n_times: int, horizon: int, until: int) -> np.ndarray:
    """Bool ``[time, lead]``: lead l (1..``horizon``) issued at step t ends at or before step ``until``."""
    ends = np.arange(n_times)[:, None] + np.arange(1, horizon + 1)[None, :]
    return ends <= until


def last_step_of(in_period: np.ndarray) -> int:
    """Grid index of the last ``True`` step of a period mask (-1 for an empty period)."""
    return int(np.flatnonzero(in_period)[-1]) if in_period.any() else -1


def partial_leads(forecast: np.ndarray) -> np.ndarray:
    """Bool mask of a weather forecast that holds a value at some of its leads and none at others.

    ``forecast`` has the lead axis last (``[station, time, input, lead]``, or any part of it); the mask
    has the other axes. Every lead or none (no forecast, as the model was trained to read) is covered;
    the rest is a run shorter than the model's leads, or a field missing for some steps.
    """
    finite = np.isfinite(forecast)
    return finite.any(axis=-1) & ~finite.all(axis=-1)


def lead_span(leads: np.ndarray | list[int]) -> str:
    """``4-7``, ``2, 5-7``: lead numbers as runs of consecutive ones."""
    values = sorted(int(lead) for lead in leads)
    runs: list[list[int]] = []
    for lead in values:
        if runs and lead == runs[-1][-1] + 1:
            runs[-1].append(lead)
        else:
            runs.append([lead])
    return ", ".join(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]) for run in runs)


def read_forecast_inputs(dataset: xr.Dataset, inputs: Sequence[ForecastInput], horizon: int, rows: list[int],
                         path: Path, start: int = 0, stop: int | None = None,
                         member: int | None = None) -> np.ndarray:
    """float32 ``[station, time, input, lead]`` for grid steps ``start..stop-1`` of the stations ``rows``.

    A ``perfect`` input reads the observed variable up to ``horizon`` steps after ``stop`` (the
    lead window of the last issue); an ``ingested`` one reads its first ``horizon`` leads, of the
    ensemble member ``member`` for an ensemble product (:func:`weather_members`).

    Raises
    ------
    InputDataError
        If a variable is missing, has the wrong dimensions or role, or fewer leads than ``horizon``.
    """
    n_times = dataset.sizes["time"]
    stop = n_times if stop is None else stop
    columns = []
    for item in inputs:
        if item.source == "perfect":
            window = dataset.isel(time=slice(start, min(n_times, stop + horizon)))
            series = _observed_series(window, item.variable, rows, path)
            columns.append(perfect_forecast(series, horizon)[:, : stop - start])
        else:
            window = dataset.isel(time=slice(start, stop))
            columns.append(_ingested_forecast(window, item.variable, horizon, rows, path, member))
    if not columns:
        return np.zeros((len(rows), stop - start, 0, horizon), dtype=np.float32)
    return np.ascontiguousarray(np.stack(columns, axis=2))


def read_reference_times(dataset: xr.Dataset, inputs: Sequence[ForecastInput], rows: list[int],
                         start: int, stop: int) -> dict[str, np.ndarray]:
    """``{variable: datetime64[ns] [station, time]}``: the reference time of the product each ingested input
    used at each issue step (NaT where none); absent for inputs the file gives no reference time for."""
    times = {}
    for item in inputs:
        name = item.variable + REFERENCE_TIME_SUFFIX
        if item.source == "ingested" and name in dataset.variables:
            values = dataset[name].isel(time=slice(start, stop)).transpose("station", "time").values
            times[item.variable] = np.asarray(values, dtype="datetime64[ns]")[rows]
    return times


def forecast_noise(item: ForecastInput, station_ids: Sequence[str], times: np.ndarray) -> np.ndarray:
    """float64 ``[station, time, lead]``: ``noise_std[lead] x`` a standard normal keyed by
    (``noise_seed``, variable, station id, grid label, lead)."""
    assert item.noise_std is not None
    stations = np.array([_id_key(station) for station in station_ids], dtype=np.uint64)
    labels = np.asarray(times, dtype="datetime64[m]").astype(np.int64).astype(np.uint64)
    leads = np.arange(1, len(item.noise_std) + 1, dtype=np.uint64)
    # the variable is part of the key: inputs sharing a seed must not share their noise (the model could
    # cancel it by differencing them)
    seed = np.uint64((item.noise_seed ^ _id_key(item.variable)) % 2**63)
    key = _mix(_mix(_mix(seed ^ stations[:, None, None]) ^ labels[None, :, None]) ^ leads[None, None, :])
    first, second = _unit_interval(_mix(key)), _unit_interval(_mix(key ^ np.uint64(0x5DEECE66D)))
    normal = np.sqrt(-2.0 * np.log(first)) * np.cos(2.0 * np.pi * second)  # Box-Muller
    return normal * np.asarray(item.noise_std, dtype=np.float64)[None, None, :]


def _mix(value: np.ndarray | np.uint64) -> np.ndarray:
    """splitmix64's finaliser: a bijective scramble of 64-bit keys (wraps modulo 2**64 by design)."""
    with np.errstate(over="ignore"):
        value = np.asarray(value, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        value = (value ^ (value >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        value = (value ^ (value >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return value ^ (value >> np.uint64(31))


def _unit_interval(bits: np.ndarray) -> np.ndarray:
    """Uniform floats in (0, 1] from the top 53 bits."""
    return ((bits >> np.uint64(11)).astype(np.float64) + 1.0) / 2.0**53


def _id_key(station: str) -> int:
    return int.from_bytes(hashlib.sha256(station.encode()).digest()[:8], "little")


def _observed_series(window: xr.Dataset, name: str, rows: list[int], path: Path) -> np.ndarray:
    if name not in window.variables:
        raise InputDataError(path, f"variable {name!r} (a perfect forecast input) not found")
    variable = window[name]
    if set(variable.dims) != {"station", "time"}:
        raise InputDataError(path, f"variable {name!r} has dims {variable.dims}, expected (station, time) "
                                   "for a perfect forecast input")
    return np.asarray(variable.transpose("station", "time").values[rows], dtype=np.float32)


def weather_members(dataset: xr.Dataset, inputs: Sequence[ForecastInput]) -> int:
    """The members of the ensemble products the ``ingested`` inputs read (0: none is an ensemble)."""
    sizes = [dataset[item.variable].sizes["member"] for item in inputs
             if item.source == "ingested" and item.variable in dataset.variables
             and "member" in dataset[item.variable].dims]
    return max(sizes, default=0)


def _ingested_forecast(window: xr.Dataset, name: str, horizon: int, rows: list[int], path: Path,
                       member: int | None = None) -> np.ndarray:
    if name not in window.variables:
        found = [var for var in window.data_vars if window[var].attrs.get("hydroseq_role") == FORECAST_ROLE]
        raise InputDataError(path, f"forecast variable {name!r} not found; forecast variables: {found} "
                                   "(ingest a forecast source, or use source: perfect)")
    variable = window[name]
    if "member" in variable.dims and member is not None:
        variable = variable.isel(member=member)
    if "member" in variable.dims:
        raise InputDataError(path, f"forecast variable {name!r} is an ensemble ({variable.sizes['member']} members): "
                                   "a model reads one forecast per input; running it once per member is not "
                                   "supported yet (ingest the deterministic product for it)")
    if set(variable.dims) != {"station", "time", "lead"} or variable.attrs.get("hydroseq_role") != FORECAST_ROLE:
        raise InputDataError(path, f"variable {name!r} has dims {variable.dims} and role "
                                   f"{variable.attrs.get('hydroseq_role')!r}, expected a (station, time, lead) "
                                   "forecast variable")
    leads = np.asarray(window["lead"].values, dtype=np.int64)
    wanted = np.arange(1, horizon + 1)
    if not np.isin(wanted, leads).all():
        raise InputDataError(path, f"forecast variable {name!r} has leads {leads.tolist()}, the model needs "
                                   f"1..{horizon}")
    values = variable.transpose("station", "time", "lead").sel(lead=wanted).values
    return np.asarray(values[rows], dtype=np.float32)
