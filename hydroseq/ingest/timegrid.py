"""The target time grid and the conversion of source timestamps to UTC interval ends.

Every observation is reduced to the UTC instant ``b`` from which it is known: the end of the
interval it summarises (or the instant of an instantaneous reading). Binning on ``b`` with
right-closed, right-labelled bins is what makes the grid causal: the value labelled ``t`` uses only
observations with ``t - step < b <= t``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np
import pandas as pd

from hydroseq.config.ingest import GridConfig
from hydroseq.grid import GridSpec, parse_timezone

_NS_PER_DAY = 86_400 * 10**9


@dataclass(frozen=True)
class TimeGrid:
    """A regular grid of interval ends in UTC (``labels`` are tz-naive UTC instants) and its identity."""

    labels: pd.DatetimeIndex
    spec: GridSpec

    @property
    def step(self) -> pd.Timedelta:
        """The grid step."""
        return self.spec.step

    @property
    def origin_ns(self) -> int:
        """Start of the first interval, in ns since the epoch (UTC)."""
        return int(self.labels[0].value - self.step.value)

    def __len__(self) -> int:
        return len(self.labels)


def build_grid(config: GridConfig) -> TimeGrid:
    """The grid covering the local days ``start..end`` of ``config``: every label from the end of the
    day before ``start`` (exclusive) to the end of ``end``."""
    spec = config.spec
    first_edge = spec.day_end(config.start - dt.timedelta(days=1)).tz_localize(None)
    last_edge = spec.day_end(config.end).tz_localize(None)
    labels = pd.date_range(first_edge + spec.step, last_edge, freq=spec.step)
    return TimeGrid(pd.DatetimeIndex(labels.as_unit("ns"), name="time"), spec)


def bin_index(ends_ns: np.ndarray, grid: TimeGrid) -> np.ndarray:
    """Index of the grid interval ``(t - step, t]`` containing each end instant (may fall outside
    ``0..len(grid)-1`` for instants before or after the grid)."""
    offset = ends_ns.astype(np.int64) - grid.origin_ns
    return -((-offset) // grid.step.value) - 1


def localize(naive: pd.DatetimeIndex, zone_name: str | None) -> tuple[pd.DatetimeIndex, np.ndarray]:
    """Wall-clock times in ``zone_name`` to tz-naive UTC, and which of them were ambiguous.

    DST-aware. A wall-clock time repeated in the fall-back hour is read as daylight time at its
    first occurrence and standard time at its second, whatever the order of the rows (exports
    sorted by wall clock interleave the two hours: 01:00, 01:00, 01:05, 01:05, ...). A wall-clock
    time that does not exist (spring-forward gap) raises ``ValueError``.
    """
    zone = parse_timezone(zone_name or "UTC")
    no_ambiguity = np.zeros(len(naive), dtype=bool)
    if zone is dt.timezone.utc:
        return naive, no_ambiguity
    if isinstance(zone, dt.timezone):
        return naive - pd.Timedelta(zone.utcoffset(None)), no_ambiguity
    probe = naive.tz_localize(str(zone), ambiguous="NaT", nonexistent="raise")
    ambiguous = np.asarray(probe.isna()) & ~np.asarray(naive.isna())
    if not ambiguous.any():
        return probe.tz_convert("UTC").tz_localize(None), no_ambiguity
    occurrence = pd.Series(naive).groupby(naive).cumcount().to_numpy()
    aware = naive.tz_localize(str(zone), ambiguous=occurrence == 0, nonexistent="raise")
    return aware.tz_convert("UTC").tz_localize(None), ambiguous


def standard_zone(zone_name: str) -> str:
    """The fixed-offset zone of ``zone_name``'s standard (winter) time, e.g. ``Etc/GMT+5`` for
    ``America/New_York``; Caravan's daily values are days in this zone."""
    zone = parse_timezone(zone_name)
    january = zone.utcoffset(dt.datetime(2001, 1, 15)) or dt.timedelta(0)
    july = zone.utcoffset(dt.datetime(2001, 7, 15)) or dt.timedelta(0)
    standard = min(january, july)  # DST moves clocks forward in either hemisphere
    minutes = int(standard.total_seconds() // 60)
    if minutes % 60 == 0:
        hours = minutes // 60
        return "UTC" if hours == 0 else f"Etc/GMT{-hours:+d}"
    sign = "+" if minutes >= 0 else "-"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def zone_offsets(utc: pd.DatetimeIndex, zone_name: str) -> np.ndarray:
    """The UTC offset (int64 ns, wall clock minus UTC) of ``zone_name`` at each UTC instant."""
    zone = parse_timezone(zone_name)
    wall = utc.tz_localize("UTC").tz_convert(zone).tz_localize(None)
    return (wall - utc).asi8.copy()


def interval_ends(stamps: pd.DatetimeIndex, zone_name: str | None, convention: str,
                  step: pd.Timedelta | None, utc_offsets: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """UTC instants (int64 ns) from which each observation is known, and the ambiguity mask of
    :func:`localize`.

    ``stamps`` are wall-clock times in ``zone_name`` (``None``: UTC), or, when ``utc_offsets`` is
    given, UTC instants already converted by their own offsets (the zone, which the caller has
    checked against those offsets, is then used only for the wall-clock day arithmetic below).
    ``interval_start`` stamps are moved to their interval's end: by wall-clock arithmetic for steps
    of whole days (a local day in a DST zone lasts 23 or 25 hours), by absolute time otherwise.
    ``interval_end`` and ``instantaneous`` stamps are used as they are.
    """
    whole_days = convention == "interval_start" and step is not None and step.value % _NS_PER_DAY == 0
    if utc_offsets is not None:
        no_ambiguity = np.zeros(len(stamps), dtype=bool)
        if convention != "interval_start":
            return stamps.asi8.copy(), no_ambiguity
        assert step is not None, "interval_start needs a regular frequency"
        if whole_days and zone_name is not None:
            utc, _ = localize(stamps + pd.to_timedelta(utc_offsets) + step, zone_name)
            return utc.asi8.copy(), no_ambiguity
        return (stamps + step).asi8.copy(), no_ambiguity
    if convention == "interval_start":
        assert step is not None, "interval_start needs a regular frequency"
        if whole_days:
            utc, ambiguous = localize(stamps + step, zone_name)
            return utc.asi8.copy(), ambiguous
        utc, ambiguous = localize(stamps, zone_name)
        return (utc + step).asi8.copy(), ambiguous
    utc, ambiguous = localize(stamps, zone_name)
    return utc.asi8.copy(), ambiguous
