"""The weather-forecast products hydroseq knows, and the one rule for which of their runs is due at an issue time.

A run with reference time ``r`` counts as published from ``r + latency`` on. The run **due** at issue time
``t`` is the newest run on the product's schedule published by ``t`` (:func:`due_references`). Every stage
asks this module: ``hydroseq fetch`` downloads the run due (:mod:`hydroseq.fetch.products`), ingest refuses
a gap where a newer run was due (:mod:`hydroseq.ingest.forecast_grid`), and the forecast flags a station
that read a run older than the one due as late (:mod:`hydroseq.forecast.product_use`). A forecast source of
the ingest config takes its latency and issue frequency from :data:`WEATHER_PRODUCTS` when it names one
(``product``), or states its own.

The latencies are estimates from the producers' documented schedules, not measurements:

* ECMWF open data is released one hour after ECMWF's real-time dissemination schedule
  (https://confluence.ecmwf.int/display/DAC/Dissemination+schedule). There the 00 UTC HRES (the control
  forecast since IFS 50r1) sends its steps from 150 h on between about 6:27 and 7:34 after its base time:
  day 7 (step 168 h) about 6:35, day 10 (step 240 h) about 7:00. Open data of a run to day 10 is thus
  complete about 8 h after its reference time; 7 h would precede its last steps. The ENS to day 15 is
  complete about 8 h after its base time, 9 h in open data.
* NOAA's GFS 0.25 degree files reach their last step about 4.5 h after the cycle, GEFS about 5.5 h.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

DAY = pd.Timedelta(days=1)


def due_references(issues: np.ndarray, latency: pd.Timedelta, period: pd.Timedelta,
                   anchors: np.ndarray | int = 0) -> np.ndarray:
    """The rule, element by element: the newest reference time ``anchor + k * period`` (``k`` any integer)
    that is published by the issue time, ``reference + latency <= issue``.

    ``issues`` and ``anchors`` are int64 nanoseconds since 1970-01-01 00 UTC (``anchors`` broadcast
    against ``issues``; 0: runs at multiples of ``period`` from then, so 00/12 UTC for 12-hourly runs).
    """
    newest = np.asarray(issues, dtype=np.int64) - latency.value
    return anchors + (newest - anchors) // period.value * period.value


@dataclass(frozen=True)
class RunSchedule:
    """When a product's runs start: at each of ``cycles`` (offsets from 00 UTC of 1970-01-01) in every ``period``.

    ``RunSchedule(pd.Timedelta("12h"))`` is 00 and 12 UTC; ``RunSchedule.daily([0, 6, 12])`` is those UTC hours.
    """

    period: pd.Timedelta
    cycles: tuple[pd.Timedelta, ...] = (pd.Timedelta(0),)

    @classmethod
    def daily(cls, hours: Iterable[int]) -> RunSchedule:
        """Runs every day at the UTC ``hours``."""
        return cls(DAY, tuple(pd.Timedelta(hours=hour) for hour in sorted(hours)))

    def runs_due(self, issue: pd.Timestamp, latency: pd.Timedelta, count: int = 1) -> list[pd.Timestamp]:
        """The newest ``count`` runs published by ``issue`` (reference time + ``latency`` at or before it),
        newest first, in ``issue``'s time zone (naive: UTC)."""
        cycles = np.array([cycle.value for cycle in self.cycles], dtype=np.int64)
        newest = due_references(np.full(len(cycles), issue.value), latency, self.period, cycles)  # per cycle
        candidates = {int(run) - back * self.period.value for run in newest for back in range(count)}
        return [pd.Timestamp(value, tz=issue.tz) for value in sorted(candidates, reverse=True)[:count]]

    def run_due(self, issue: pd.Timestamp, latency: pd.Timedelta) -> pd.Timestamp:
        """The newest run published by ``issue``: :meth:`runs_due` with ``count`` 1."""
        return self.runs_due(issue, latency)[0]


@dataclass(frozen=True)
class WeatherProduct:
    """One weather-forecast product as its producer publishes it.

    Attributes
    ----------
    name
        How hydroseq names it: ``hydroseq fetch --source``, a forecast source's ``product``.
    label
        The product in messages.
    last_step
        Cycle (UTC hour of the reference time) -> the longest step, in hours, its runs publish.
    latency
        Time from a run's reference time until its files are all published.
    members
        The members a run holds, the control included; None for a deterministic product.
    """

    name: str
    label: str
    last_step: Mapping[int, int]
    latency: pd.Timedelta
    members: int | None = None

    @property
    def ensemble(self) -> bool:
        """Whether runs have members."""
        return self.members is not None

    def schedule(self, longest_step: float = 0) -> RunSchedule:
        """The runs that publish steps up to ``longest_step`` hours: every day at the cycles that reach it.

        Raises
        ------
        ValueError
            If no cycle reaches ``longest_step``.
        """
        cycles = [hour for hour, last in self.last_step.items() if last >= longest_step]
        if not cycles:
            raise ValueError(f"{self.label} publishes no run to step {longest_step:g} h (the longest: "
                             f"{max(self.last_step.values())} h)")
        return RunSchedule.daily(cycles)

    def issue_frequency(self, longest_step: float = 0) -> pd.Timedelta:
        """The spacing of the runs that reach ``longest_step`` hours (12 h for HRES to 240 h).

        Raises
        ------
        ValueError
            If no cycle reaches it, or the cycles that do are not evenly spaced.
        """
        cycles = self.schedule(longest_step).cycles
        gaps = {later - earlier for earlier, later in zip(cycles, (*cycles[1:], cycles[0] + DAY), strict=True)}
        if len(gaps) != 1:
            raise ValueError(f"the runs of {self.label} to step {longest_step:g} h are not evenly spaced "
                             f"({', '.join(f'{cycle.components.hours:02d}' for cycle in cycles)} UTC): "
                             "set issue_frequency")
        return gaps.pop()


WEATHER_PRODUCTS = {product.name: product for product in (
    # HRES (stream oper) 00/12 UTC to 10 days, 06/18 UTC to 90 h; ENS (enfo) 00/12 UTC to 15 days, 06/18 to 144 h
    WeatherProduct("ecmwf-hres", "ECMWF open data (HRES)", {0: 240, 6: 90, 12: 240, 18: 90}, pd.Timedelta(hours=8)),
    WeatherProduct("ecmwf-ens", "ECMWF open data (ENS)", {0: 360, 6: 144, 12: 360, 18: 144}, pd.Timedelta(hours=9),
                   members=51),
    WeatherProduct("gfs", "NOAA GFS", dict.fromkeys((0, 6, 12, 18), 384), pd.Timedelta(hours=5)),
    WeatherProduct("gefs", "NOAA GEFS", dict.fromkeys((0, 6, 12, 18), 384), pd.Timedelta(hours=6), members=31),
)}


def weather_product(name: str) -> WeatherProduct:
    """The catalogued product ``name``.

    Raises
    ------
    ValueError
        If there is none; the message lists those there are.
    """
    if name not in WEATHER_PRODUCTS:
        raise ValueError(f"no weather-forecast product {name!r} (one of {', '.join(WEATHER_PRODUCTS)})")
    return WEATHER_PRODUCTS[name]
