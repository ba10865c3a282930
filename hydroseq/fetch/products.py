"""The forecast products ``hydroseq fetch`` downloads, where from, and which of their runs an issue time needs.

Each is a product of the catalogue (:data:`hydroseq.grid.weather_products.WEATHER_PRODUCTS`: its cycles,
last steps, latency and members) at a source. The newest run published at the issue time (reference time +
latency at or before it, the catalogue's rule) that has every requested step is fetched; when the source
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
from hydroseq.grid.weather_products import WEATHER_PRODUCTS, WeatherProduct

DEFAULT_PARAMS = ("tp", "2t")
DEFAULT_STEPS = ("0/90/6",)


@dataclass(frozen=True)
class Product:
    """A catalogued forecast product at its source.

    Attributes
    ----------
    spec
        The product: cycles, last steps, latency, members.
    base_url
        Where the product's files are, by the source's documented layout (``--base-url`` replaces it).
    """

    spec: WeatherProduct
    base_url: str

    @property
    def name(self) -> str:
        """``--source`` value and the folder and file names under the raw folder."""
        return self.spec.name

    @property
    def label(self) -> str:
        """The product in messages."""
        return self.spec.label


# ECMWF open data; the NOAA Open Data Dissemination buckets (AWS), in the layout NOMADS has too
BASE_URLS = {"ecmwf-hres": "https://data.ecmwf.int/forecasts", "ecmwf-ens": "https://data.ecmwf.int/forecasts",
             "gfs": "https://noaa-gfs-bdp-pds.s3.amazonaws.com", "gefs": "https://noaa-gefs-pds.s3.amazonaws.com"}
PRODUCTS = {name: Product(WEATHER_PRODUCTS[name], url) for name, url in BASE_URLS.items()}


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
    try:
        schedule = product.spec.schedule(max(steps))
    except ValueError as error:
        raise ConfigError(f"--steps: {error}") from None
    return schedule.runs_due(issue_time.tz_convert("UTC"), product.spec.latency if latency is None else latency,
                             count)


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
        perturbed = (self.product.spec.members or 1) - 1 if self.members is None else self.members
        return [Piece(step, member) for step in steps for member in range(perturbed + 1)]

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
