"""Issued forecast products onto the grid as ``(station, issue, lead)``, without leakage.

The rules (docs/ingest.md "The leakage-free rules", each a property test in ``tests/ingest/test_forecast_grid.py``):

- **Newest published product.** The value at issue ``t`` (a grid label) comes from the newest
  product whose reference time ``r`` satisfies ``r + latency <= t``; a product published after
  ``t`` is never read for ``t``.
- **Own interval.** Lead ``l`` of issue ``t`` covers the grid interval ``(t + (l-1) step, t + l step]``
  and is aggregated over exactly that interval from the product's step intervals
  ``(r + step_{k-1}, r + step_k]`` that overlap it: sums add the amounts, means weight each value
  by its overlap. A product interval that straddles a grid boundary is split in proportion to the
  overlap (its amount is spread evenly over the interval, the product being known as a whole at
  ``t``); any missing value in an overlapping interval makes the lead missing.
- **No extrapolation.** A lead whose interval reaches past the product's last step is missing.
- **Missing products.** ``on_missing_product: fail``: reference times further apart than
  ``issue_frequency`` are an error naming the file and the missing reference time, and issues at or
  after ``r_last + latency + issue_frequency`` (the next product was due:
  :func:`hydroseq.grid.weather_products.due_references`, runs every ``issue_frequency`` from ``r_last``) are missing;
  ``use_previous``: the newest published product is used however old (its leads shift; missing
  beyond its last step). Every product used must cover the ``horizon`` leads of the first issue
  at which it is published (else "truncated horizon", naming the file and the reference time).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

import hydroseq.ingest.units as units
from hydroseq.config.forecast_source import ForecastSourceConfig
from hydroseq.errors import InputDataError
from hydroseq.grid.weather_products import due_references
from hydroseq.ingest.forecast_products import Product, read_products
from hydroseq.ingest.stations import Station
from hydroseq.ingest.timegrid import TimeGrid

_CHUNK = 4096  # issues per vectorised block


@dataclass(frozen=True)
class ForecastOnGrid:
    """One forecast source on the grid: ``values`` name -> ``(station, time, lead)`` float32 in the
    output units, ``(station, time, lead, member)`` for an ensemble; ``reference_time``
    ``(station, time)`` datetime64[ns] of the product used (NaT: none); ``files`` every file read
    (for provenance)."""

    source: ForecastSourceConfig
    values: dict[str, np.ndarray]
    reference_time: np.ndarray
    files: tuple[Path, ...]


def grid_forecast_source(source: ForecastSourceConfig, stations: list[Station], grid: TimeGrid,
                         published_by: np.datetime64 | None = None) -> ForecastOnGrid:
    """Read every product of ``source`` at ``stations`` and put it on ``grid``.

    ``published_by`` (a forecast's last issue label) reads and checks only the products published by
    then (:func:`~hydroseq.ingest.forecast_products.read_products`); the ingest reads them all.

    Raises
    ------
    InputDataError
        For an unusable file (:mod:`hydroseq.ingest.forecast_products`), a missing product
        (``on_missing_product: fail``) or a truncated horizon, naming the file and the reference time.
    """
    products = read_products(source, stations, published_by)
    chosen = choose_products(source, products, grid)
    members = source.members or 1
    on_grid = forecast_on_grid(source, products, chosen, grid, len(stations) * members)
    values = {}
    for name, spec in source.variables.items():
        by_member = on_grid[name].reshape(len(stations), members, len(grid), source.horizon)
        converted = np.empty_like(by_member)
        for position, station in enumerate(stations):
            try:
                converted[position] = units.to_output(by_member[position], spec, grid.step, station.area_km2)
            except units.AreaMissing as error:
                raise InputDataError(source.label, f"variable {name}: {error}", f"station {station.id}") from None
        in_order = np.moveaxis(converted, 1, -1)  # (station, time, lead, member)
        values[name] = (in_order if source.members is not None else in_order[..., 0]).astype(np.float32)
    references = np.array([product.reference for product in products] or [np.datetime64("NaT")],
                          dtype="datetime64[ns]")
    used = np.where(chosen >= 0, references[np.maximum(chosen, 0)], np.datetime64("NaT", "ns"))
    files = tuple(dict.fromkeys(sorted(product.path for product in products)))
    return ForecastOnGrid(source, values, np.broadcast_to(used, (len(stations), len(grid))).copy(), files)


def choose_products(source: ForecastSourceConfig, products: list[Product], grid: TimeGrid) -> np.ndarray:
    """Index of the product used at each grid label (``-1``: none), after the missing-product check."""
    if not products:
        return np.full(len(grid), -1, dtype=np.int64)
    references = np.array([product.reference for product in products], dtype="datetime64[ns]").view(np.int64)
    published = references + source.latency_step.value
    labels = grid.labels.asi8
    chosen = np.searchsorted(published, labels, side="right") - 1
    if source.on_missing_product == "fail":
        gaps = np.flatnonzero(np.diff(references) > source.issue_step.value)
        if len(gaps):
            after = products[int(gaps[0]) + 1]
            missing = pd.Timestamp(int(references[gaps[0]]) + source.issue_step.value)
            raise InputDataError(after.path, f"forecast source {source.label!r}: the product of reference time "
                                 f"{missing} is missing (the one before is {pd.Timestamp(int(references[gaps[0]]))}; "
                                 "set on_missing_product: use_previous to use it)", f"reference time {missing}")
        used = references[np.maximum(chosen, 0)]
        due = due_references(labels, source.latency_step, source.issue_step, anchors=used)  # the schedule of `used`
        chosen = np.where(due > used, -1, chosen)
    return chosen


def forecast_on_grid(source: ForecastSourceConfig, products: list[Product], chosen: np.ndarray, grid: TimeGrid,
                     n_columns: int) -> dict[str, np.ndarray]:
    """Per variable ``(column, time, lead)`` float64 in canonical units (before output conversion),
    from the products ``chosen`` (:func:`choose_products`) at each label; the columns are the
    products' (:class:`~hydroseq.ingest.forecast_products.Product`): stations, or station-major
    station x member for an ensemble."""
    step, horizon = grid.step.value, source.horizon
    _check_horizons(source, products, chosen, grid)
    result = {name: np.full((n_columns, len(grid), horizon), np.nan) for name in source.variables}
    issues = np.flatnonzero(chosen >= 0)
    groups: dict[bytes, list[int]] = {}
    for issue in issues:  # products with the same steps are computed together
        groups.setdefault(products[int(chosen[issue])].ends.tobytes(), []).append(int(issue))
    labels = grid.labels.asi8
    leads = np.arange(horizon, dtype=np.int64)
    for members in groups.values():
        ends = products[int(chosen[members[0]])].ends
        edges = np.concatenate([[0], ends])
        for start in range(0, len(members), _CHUNK):
            block = np.array(members[start:start + _CHUNK])
            offsets = labels[block] - np.array([products[int(chosen[i])].reference.astype(np.int64)
                                                for i in block])
            lower = offsets[:, None] + leads[None, :] * step  # (issue, lead)
            upper = lower + step
            overlap = np.clip(np.minimum(upper[..., None], edges[None, None, 1:])
                              - np.maximum(lower[..., None], edges[None, None, :-1]), 0, None)  # (issue, lead, k)
            covered = upper <= edges[-1]
            for name, spec in source.variables.items():
                denominator = np.diff(edges)[None, None, :] if spec.aggregation == "sum" else step
                weights = overlap / denominator
                stacked = np.stack([products[int(chosen[i])].values[name] for i in block])  # (issue, k, station)
                used = (overlap > 0)[..., None]
                hit_missing = (used & np.isnan(stacked)[:, None, :, :]).any(axis=2)
                total = (weights[..., None] * np.nan_to_num(stacked, nan=0.0)[:, None, :, :]).sum(axis=2)
                total = np.where(hit_missing | ~covered[..., None], np.nan, total)  # (issue, lead, station)
                result[name][:, block, :] = np.transpose(total, (2, 0, 1))
    return result


def _check_horizons(source: ForecastSourceConfig, products: list[Product], chosen: np.ndarray, grid: TimeGrid) -> None:
    step = grid.step.value
    for index in np.unique(chosen[chosen >= 0]):
        product = products[int(index)]
        reference = int(product.reference.astype(np.int64))
        published = reference + source.latency_step.value - grid.origin_ns
        first_issue = grid.origin_ns + -(-published // step) * step
        needed = first_issue + source.horizon * step - reference
        last = int(product.ends[-1]) if len(product.ends) else 0
        if last < needed:
            raise InputDataError(product.path, f"truncated horizon: the steps end at {pd.Timedelta(last)}, but "
                                 f"{source.horizon} lead(s) of the grid from the first issue "
                                 f"{pd.Timestamp(first_issue)} need steps up to {pd.Timedelta(needed)}",
                                 f"reference time {pd.Timestamp(reference)}")
