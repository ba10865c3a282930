"""Grid labels as a forecaster reads them: local time of the grid, each value drawn at the middle of its interval.

A label is the UTC end of a grid interval (``docs/dataset-format.md``). On the page a daily value is the
local day it belongs to (``2014-09-30``), a sub-daily one the local end of its interval (``2014-09-30 14:00``);
charts place each value at the middle of its interval, in local time, so that a daily mean sits on its day.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from hydroseq.grid import GridSpec

EPOCH = np.datetime64("1970-01-01T00:00:00", "ns")


@dataclass(frozen=True)
class TimeAxis:
    """Turns UTC grid labels into the local times and texts of a page, for one grid."""

    grid: GridSpec

    @property
    def daily(self) -> bool:
        """The grid step is a day or longer: values are named by their local day."""
        return self.grid.step >= pd.Timedelta(days=1)

    def local(self, labels: np.ndarray) -> pd.DatetimeIndex:
        """The labels as naive local clock times of the grid's time zone."""
        index = pd.DatetimeIndex(np.asarray(labels, dtype="datetime64[ns]")).tz_localize("UTC")
        return index.tz_convert(self.grid.zone).tz_localize(None)

    def chart_ms(self, labels: np.ndarray) -> list[float | None]:
        """Milliseconds since 1970 of each interval's local middle: what a chart's datetime axis draws."""
        middle = self.local(labels) - self.grid.step / 2
        ms = (np.asarray(middle, dtype="datetime64[ns]") - EPOCH) / np.timedelta64(1, "ms")
        return [None if np.isnan(value) else float(value) for value in ms]

    def boundary_ms(self, label: np.datetime64) -> float:
        """Milliseconds since 1970 of the local instant ``label`` marks (an interval's end, e.g. the issue time)."""
        local = np.asarray(self.local(np.asarray([label])), dtype="datetime64[ns]")[0]
        return float((local - EPOCH) / np.timedelta64(1, "ms"))

    def text(self, label: np.datetime64) -> str:
        """``2014-09-30`` (the local day) on a daily grid, else the local end ``2014-09-30 14:00``; ``-`` for NaT."""
        if pd.isna(label):
            return "-"
        if self.daily:
            return self.grid.local_days(np.asarray([label], dtype="datetime64[ns]"))[0].strftime("%Y-%m-%d")
        return self.local(np.asarray([label]))[0].strftime("%Y-%m-%d %H:%M")

    def clock_name(self, label: np.datetime64) -> str:
        """What the local clock at ``label`` is: ``local standard time, UTC-08:00`` (``daylight saving time`` in
        summer where the zone keeps it)."""
        stamp = pd.Timestamp(label).tz_localize("UTC").tz_convert(self.grid.zone)
        kind = "daylight saving time" if stamp.dst() else "standard time"
        return f"local {kind}, {self.utc_offset(label)}"

    def utc_offset(self, label: np.datetime64) -> str:
        """The grid zone's offset from UTC at ``label``: ``UTC-08:00``."""
        stamp = pd.Timestamp(label).tz_localize("UTC").tz_convert(self.grid.zone)
        offset = stamp.strftime("%z")
        return f"UTC{offset[:3]}:{offset[3:]}" if offset else "UTC"


def utc_text(label: np.datetime64) -> str:
    """``2014-10-01 08:00 UTC``."""
    return f"{pd.Timestamp(label).strftime('%Y-%m-%d %H:%M')} UTC"


def age_text(hours: float) -> str:
    """``0 h``, ``30 h``, ``3.5 d``: hours up to two days, then days; ``-`` when unknown."""
    if not np.isfinite(hours):
        return "-"
    return f"{hours:.0f} h" if hours < 48 else f"{hours / 24:.1f} d"
