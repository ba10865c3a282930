"""The time grid of an ingested dataset: what identifies it and which local day each label belongs to.

Grid labels are the UTC ends of their intervals (``docs/dataset-format.md``). Local day ``D`` of
a grid is the interval ``(D + day_boundary, D + 1 day + day_boundary]`` in the grid's time zone, so
a label belongs to the day its interval ends in. :class:`GridSpec` is the one place that knows the
global attributes recording a grid and the one place that applies this day rule; every stage asks
it instead of reading the attributes or redoing the arithmetic.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd

LABEL_CONVENTIONS = ("interval_end",)
_FREQUENCY, _TIMEZONE, _DAY_BOUNDARY, _LABEL_CONVENTION = (
    "grid_frequency", "grid_timezone", "grid_day_boundary", "time_label_convention")
GRID_ATTRIBUTES = (_FREQUENCY, _TIMEZONE, _DAY_BOUNDARY, _LABEL_CONVENTION)
_REQUIRED_ATTRIBUTES = (_FREQUENCY, _TIMEZONE)


class DatePeriod(Protocol):
    """Anything with ``start`` and ``end`` dates, such as :class:`hydroseq.config.Period`."""

    @property
    def start(self) -> dt.date:
        """First local day (included)."""
        ...

    @property
    def end(self) -> dt.date:
        """Last local day (included)."""
        ...


def parse_timezone(name: str) -> dt.tzinfo:
    """A ``tzinfo`` from an IANA name (``America/New_York``, ``Etc/GMT+5``), ``UTC`` or a fixed
    offset written ``+05:30`` / ``-05:00``.

    Raises
    ------
    ValueError
        Naming the text, for anything else.
    """
    text = name.strip()
    if text.upper() in ("UTC", "Z"):
        return dt.timezone.utc
    if text[:1] in "+-" and len(text) == 6 and text[3] == ":":
        try:
            hours, minutes = int(text[1:3]), int(text[4:6])
        except ValueError:
            pass
        else:
            sign = 1 if text[0] == "+" else -1
            return dt.timezone(sign * dt.timedelta(hours=hours, minutes=minutes))
    try:
        return zoneinfo.ZoneInfo(text)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"unknown time zone {name!r}: use an IANA name (e.g. America/New_York, Etc/GMT+5), "
            "UTC, or a fixed offset like -05:00") from None


def parse_step(text: str) -> pd.Timedelta:
    """A fixed-length step from a pandas frequency string (``5min``, ``1h``, ``1D``, ``8D``).

    Raises
    ------
    ValueError
        If the text is not a positive fixed-length frequency.
    """
    try:
        step = pd.Timedelta(pd.tseries.frequencies.to_offset(text))
    except (ValueError, TypeError):
        raise ValueError(f"not a fixed-length frequency: {text!r} (examples: 5min, 1h, 1D, 8D)") from None
    if step <= pd.Timedelta(0):
        raise ValueError(f"frequency must be positive, got {text!r}")
    return step


def parse_day_boundary(text: str) -> dt.time:
    """An ``HH:MM`` clock time, the local time at which a grid day ends.

    Raises
    ------
    ValueError
        If the text is not a clock time between 00:00 and 23:59.
    """
    try:
        hours, minutes = (int(part) for part in text.split(":"))
    except ValueError:
        raise ValueError(f"day boundary {text!r} is not an HH:MM clock time") from None
    if not (0 <= hours < 24 and 0 <= minutes < 60):
        raise ValueError(f"day boundary {text!r} is not an HH:MM clock time")
    return dt.time(hours, minutes)


@dataclass(frozen=True)
class GridSpec:
    """The identity of a time grid, as the global attributes of an ingested file record it.

    Attributes
    ----------
    frequency
        pandas frequency string of the grid step, e.g. ``1D``, ``1h``.
    timezone
        Zone in which the grid's days are defined: IANA name (``Etc/GMT+8``), ``UTC`` or ``-05:00``.
    day_boundary
        Local clock time at which a grid day ends (whole minutes).
    label_convention
        What a label marks: ``interval_end``, the only convention hydroseq writes.
    step, zone
        ``frequency`` and ``timezone`` parsed (once, on construction).

    Raises
    ------
    ValueError
        On construction, if a field cannot be parsed.
    """

    frequency: str
    timezone: str = "UTC"
    day_boundary: dt.time = dt.time(0, 0)
    label_convention: str = "interval_end"
    step: pd.Timedelta = field(init=False, repr=False, compare=False)
    zone: dt.tzinfo = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "step", parse_step(self.frequency))
        object.__setattr__(self, "zone", parse_timezone(self.timezone))
        if self.day_boundary.second or self.day_boundary.microsecond or self.day_boundary.tzinfo is not None:
            raise ValueError(f"day boundary {self.day_boundary} must be a local clock time in whole minutes")
        if self.label_convention not in LABEL_CONVENTIONS:
            raise ValueError(f"time label convention {self.label_convention!r} is not one hydroseq reads "
                             f"({', '.join(LABEL_CONVENTIONS)})")

    @classmethod
    def from_attrs(cls, attrs: Mapping[str, Any]) -> GridSpec:
        """The grid recorded in ``attrs`` (a file's global attributes, or a model's metadata).

        The day boundary defaults to ``00:00`` and the label convention to ``interval_end``.

        Raises
        ------
        ValueError
            If the frequency or time zone is missing, or a value cannot be parsed.
        """
        missing = [name for name in _REQUIRED_ATTRIBUTES if name not in attrs]
        if missing:
            raise ValueError(f"lacks the grid attributes {missing}")
        try:
            return cls(frequency=str(attrs[_FREQUENCY]), timezone=str(attrs[_TIMEZONE]),
                       day_boundary=parse_day_boundary(str(attrs.get(_DAY_BOUNDARY, "00:00"))),
                       label_convention=str(attrs.get(_LABEL_CONVENTION, "interval_end")))
        except ValueError as error:
            raise ValueError(f"unreadable grid attributes ({error})") from None

    def to_attrs(self) -> dict[str, str]:
        """The global attributes recording this grid, in the order of ``docs/dataset-format.md``."""
        return {_FREQUENCY: self.frequency, _TIMEZONE: self.timezone,
                _DAY_BOUNDARY: self.day_boundary.strftime("%H:%M"), _LABEL_CONVENTION: self.label_convention}

    def differences(self, other: GridSpec) -> list[tuple[str, str, str]]:
        """``(attribute, value here, value in other)`` for every attribute on which the grids differ."""
        mine, theirs = self.to_attrs(), other.to_attrs()
        return [(name, mine[name], theirs[name]) for name in mine if mine[name] != theirs[name]]

    @property
    def boundary_offset(self) -> pd.Timedelta:
        """The day boundary as an offset from local midnight."""
        return pd.Timedelta(hours=self.day_boundary.hour, minutes=self.day_boundary.minute)

    def day_end(self, day: dt.date) -> pd.Timestamp:
        """The UTC instant at which local day ``day`` ends: the label of its last step."""
        local_end = pd.Timestamp(day) + pd.Timedelta(days=1) + self.boundary_offset
        return local_end.tz_localize(self.zone).tz_convert("UTC")

    def local_days(self, labels: np.ndarray | pd.DatetimeIndex) -> pd.DatetimeIndex:
        """The local day (its midnight, tz-naive) each label belongs to: the day its interval ends in.

        ``labels`` are UTC interval ends (naive values are read as UTC). A label at the day boundary
        ends the day before it, so one nanosecond is taken off before flooring to the day.
        """
        index = pd.DatetimeIndex(labels).as_unit("ns")
        index = index.tz_localize("UTC") if index.tz is None else index.tz_convert("UTC")
        local = index.tz_convert(self.zone).tz_localize(None)
        return (local - self.boundary_offset - pd.Timedelta(1, "ns")).floor("D")

    def step_starts(self, labels: np.ndarray | pd.DatetimeIndex) -> pd.DatetimeIndex:
        """The local start of each step (tz-naive) of a regular run of ``labels`` (UTC interval ends).

        Shifted by the day boundary, so that a daily step starts on its local day (what a daily
        series' ``date`` is: :func:`local_days`); an hour starts at its local clock time minus the
        boundary. Counted on from the first label in grid steps (no jump at a daylight-saving change).
        """
        index = pd.DatetimeIndex(labels[:1]).as_unit("ns")
        first = index.tz_localize("UTC") if index.tz is None else index.tz_convert("UTC")
        start = first.tz_convert(self.zone).tz_localize(None)[0] - self.step - self.boundary_offset
        return pd.DatetimeIndex(start + np.arange(len(labels)) * self.step)

    def day_of_year(self, labels: np.ndarray | pd.DatetimeIndex) -> np.ndarray:
        """Day of year (1..366) of the local day each label belongs to."""
        return np.asarray(self.local_days(labels).day_of_year)

    def period_mask(self, labels: np.ndarray | pd.DatetimeIndex, period: DatePeriod) -> np.ndarray:
        """Boolean mask of the labels whose local day lies in ``period.start..period.end`` (both included).

        For a daily grid these are exactly the local days of the period; for an hourly grid every
        hour of them.
        """
        days = self.local_days(labels)
        return np.asarray((days >= pd.Timestamp(period.start)) & (days <= pd.Timestamp(period.end)), dtype=bool)
