"""The forecast products ``hydroseq fetch`` downloads, and which of their runs an issue time needs.

A run with reference time ``r`` counts as published from ``r + latency`` on. The latencies below are
estimates from the producers' documented schedules, not measurements (``latency`` overrides them):

* ECMWF open data is released one hour after ECMWF's real-time dissemination schedule, in which the
  00 UTC HRES is complete about 7 h after its reference time and the ENS (to 15 days) about 8 h after.
* NOAA's GFS 0.25 degree files reach their last step about 4.5 h after the cycle, GEFS about 5.5 h.

The newest run published at the issue time that has every requested step is fetched; when the source
does not have it (yet), the run before it (:func:`runs_needed` gives both).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd

from hydroseq.errors import ConfigError
from hydroseq.fetch.download import RetryPolicy
from hydroseq.grid import GridSpec
from hydroseq.grid.issue_times import parse_instant
from hydroseq.grid.step_ranges import step_hours

DEFAULT_PARAMS = ("tp", "2t")
DEFAULT_STEPS = ("0/90/6",)
GEFS_MEMBERS = 30  # perturbed members; the control (member 0) comes with them


@dataclass(frozen=True)
class Product:
    """One forecast product at its source.

    Attributes
    ----------
    name
        ``--source`` value and the folder and file names under the raw folder.
    label
        The product in messages.
    base_url
        Where the product's files are, by the source's documented layout (``--base-url`` replaces it).
    last_step
        Cycle (UTC hour of the reference time) -> the longest step, in hours, its runs publish.
    latency
        Time from a run's reference time until its files are all published.
    ensemble
        Whether runs have members.
    """

    name: str
    label: str
    base_url: str
    last_step: dict[int, int]
    latency: pd.Timedelta
    ensemble: bool = False


PRODUCTS = {product.name: product for product in (
    # HRES (stream oper) 00/12 UTC to 10 days, 06/18 UTC to 90 h; ENS (enfo) 00/12 UTC to 15 days, 06/18 to 144 h
    Product("ecmwf-hres", "ECMWF open data (HRES)", "https://data.ecmwf.int/forecasts",
            {0: 240, 6: 90, 12: 240, 18: 90}, pd.Timedelta(hours=8)),
    Product("ecmwf-ens", "ECMWF open data (ENS)", "https://data.ecmwf.int/forecasts",
            {0: 360, 6: 144, 12: 360, 18: 144}, pd.Timedelta(hours=9), ensemble=True),
    # The NOAA Open Data Dissemination buckets (AWS), in the layout NOMADS has too
    Product("gfs", "NOAA GFS", "https://noaa-gfs-bdp-pds.s3.amazonaws.com",
            dict.fromkeys((0, 6, 12, 18), 384), pd.Timedelta(hours=5)),
    Product("gefs", "NOAA GEFS", "https://noaa-gefs-pds.s3.amazonaws.com",
            dict.fromkeys((0, 6, 12, 18), 384), pd.Timedelta(hours=6), ensemble=True),
)}


def product_named(name: str) -> Product:
    """The product ``name`` (``--source``); a :class:`ConfigError` listing them if there is none."""
    if name not in PRODUCTS:
        raise ConfigError(f"--source: no forecast product {name!r} (one of {', '.join(PRODUCTS)}, or nwis)")
    return PRODUCTS[name]


def parse_issue_time(text: str, timezone: str = "UTC") -> pd.Timestamp:
    """An issue time (``--issue-time``) as a UTC timestamp: ``2026-11-02`` is the end of that day in
    ``timezone``, ``2026-11-02T06:00Z`` an instant, a time without a zone one in ``timezone``."""
    try:
        grid = GridSpec("1D", timezone)
    except ValueError as error:
        raise ConfigError(f"--timezone: {error}") from None
    return parse_instant(text, grid)


def parse_steps(ranges: Iterable[str | int]) -> tuple[int, ...]:
    """Forecast steps in hours from ``FIRST/LAST/BY`` ranges (ECMWF's notation) or single hours, sorted.

    Raises
    ------
    ConfigError
        If an item is not whole hours, or a range is empty or reversed.
    """
    try:
        steps = step_hours(ranges, whole_hours=True)
    except ValueError as error:
        raise ConfigError(f"--steps: {error}") from None
    if not steps:
        raise ConfigError("--steps: no step given")
    return tuple(int(step) for step in steps)


def runs_needed(product: Product, issue_time: pd.Timestamp, steps: Sequence[int],
                latency: pd.Timedelta | None = None, count: int = 2) -> list[pd.Timestamp]:
    """The newest ``count`` runs (UTC reference times, newest first) published by ``issue_time`` (reference
    time + latency at or before it) whose cycle publishes every one of ``steps``.

    Raises
    ------
    ConfigError
        If no cycle of the product reaches the longest step.
    """
    delay = product.latency if latency is None else latency
    longest = max(steps)
    cycles = sorted(hour for hour, last in product.last_step.items() if last >= longest)
    if not cycles:
        raise ConfigError(f"--steps: {product.label} publishes no run to step {longest} h (the longest: "
                          f"{max(product.last_step.values())} h)")
    runs: list[pd.Timestamp] = []
    day = (issue_time - delay).tz_convert("UTC").floor("D")
    while len(runs) < count:
        runs += [run for hour in reversed(cycles) if (run := day + pd.Timedelta(hours=hour)) + delay <= issue_time]
        day -= pd.Timedelta(days=1)
    return runs[:count]


def run_stem(product: Product, run: pd.Timestamp) -> str:
    """The name of a run's file under the raw folder, without suffix: ``gfs_2026110200``."""
    return f"{product.name}_{run:%Y%m%d%H}"


@dataclass(frozen=True)
class Piece:
    """One file of a run at the source, of which the requested fields are downloaded: one step, and for
    NOAA GEFS one member (``member`` None: all members in one file, or a deterministic product)."""

    step: int
    member: int | None = None

    @property
    def name(self) -> str:
        """The piece's file name in the run's parts folder."""
        return f"{self.step:03d}h.grib2" if self.member is None else f"m{self.member:02d}-{self.step:03d}h.grib2"


@dataclass(frozen=True)
class RunRequest:
    """What to take from one run: the product, the run, its fields and steps, and where from."""

    product: Product
    run: pd.Timestamp
    params: tuple[str, ...]
    steps: tuple[int, ...]
    base_url: str
    policy: RetryPolicy
    members: int | None = None

    def pieces(self) -> list[Piece]:
        """The run's pieces, in the order the run file holds them (by step, then member)."""
        steps = self.steps_taken()
        if self.product.name != "gefs":
            return [Piece(step) for step in steps]
        members = GEFS_MEMBERS if self.members is None else self.members
        return [Piece(step, member) for step in steps for member in range(members + 1)]

    def steps_taken(self) -> tuple[int, ...]:
        """The steps downloaded: NOAA's files have no precipitation at step 0, so with ``tp`` it is left out
        (a run's fields must share their steps)."""
        if self.product.name in ("gfs", "gefs") and "tp" in self.params:
            return tuple(step for step in self.steps if step > 0)
        return self.steps

    def identity(self) -> dict[str, object]:
        """What a run file holds, as its sidecar records it: a file with another identity is fetched again."""
        return {"source": self.product.name, "run": f"{self.run:%Y-%m-%dT%H:%MZ}", "params": list(self.params),
                "steps": list(self.steps), "members": self.members if self.product.name == "gefs" else None}
