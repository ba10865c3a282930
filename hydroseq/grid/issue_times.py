"""Issue times, as written by a user, resolved to steps of a time grid: the one owner of that rule.

Grid labels are UTC interval ends (``docs/dataset-format.md``). An issue time selects the last label
at or before it, so a forecast never uses a step that ends after its issue time
(:func:`locate_issue`, which ``hydroseq forecast``, the served model and the logged model's input
example all call).

* ``2014-09-30T06:00Z``, ``2014-09-30T06:00+02:00``: an instant.
* ``2014-09-30T06:00`` (no zone): an instant in the grid's time zone.
* ``2014-09-30`` (a date): the end of that local day of the grid, i.e. its last grid step; this is
  the same day rule as the train/validation/test periods.
* ``START..END``: every grid label from START's to END's (a hindcast).

Only these ISO 8601 forms are read (``hydroseq forecast --help`` says so): ``03/04/2014``
could be 3 April or March 4 and is an error, as is any text pandas would guess at. The served
(MLflow pyfunc) model reads its ``issue_time`` param with the same rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from hydroseq.errors import ConfigError
from hydroseq.grid import GridSpec
from hydroseq.grid.date_text import day_month_order_problem

DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
ISO_8601 = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}(?::\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$")
EXAMPLES = "examples: 2014-09-30, 2014-09-30T06:00Z, 2014-09-30T06:00+02:00, 2014-09-01..2014-09-30"


def parse_instant(text: str, grid: GridSpec, option: str = "--issue-time") -> pd.Timestamp:
    """One issue time as a UTC timestamp (see the module docstring for the accepted forms).

    ``option`` names the setting in error messages (the pyfunc model's param ``issue_time``).

    Raises
    ------
    ConfigError
        If the text is not one of the ISO 8601 forms above (day/month forms named as such).
    """
    text = text.strip()
    problem = day_month_order_problem(text)
    if problem is not None:
        raise ConfigError(f"{option}: {text!r} {problem}; write it as YYYY-MM-DD ({EXAMPLES})")
    try:
        if not ISO_8601.match(text):
            raise ValueError(text)
        stamp = pd.Timestamp(text)
        if pd.isna(stamp):
            raise ValueError(text)
    except ValueError:
        raise ConfigError(f"{option}: {text!r} is not an ISO 8601 date or timestamp ({EXAMPLES})") from None
    if DATE_ONLY.match(text):
        return grid.day_end(stamp.date())
    if stamp.tzinfo is None:
        stamp = stamp.tz_localize(grid.zone)
    return stamp.tz_convert("UTC")


def parse_issue_times(text: str, grid: GridSpec) -> tuple[pd.Timestamp, pd.Timestamp, bool]:
    """``(first, last, is_range)`` in UTC for ``T`` or ``START..END``.

    Raises
    ------
    ConfigError
        If a part does not parse or the range is reversed.
    """
    if ".." not in text:
        instant = parse_instant(text, grid)
        return instant, instant, False
    start_text, _, end_text = text.partition("..")
    start, end = parse_instant(start_text, grid), parse_instant(end_text, grid)
    if end < start:
        raise ConfigError(f"--issue-time: range {text!r} ends before it starts")
    return start, end, True


@dataclass(frozen=True)
class IssueStep:
    """Where an issue time falls on a grid of labels ``times``.

    Attributes
    ----------
    index
        Position of the last label at or before the issue time (``-1``: every label is later).
    label_past_the_data
        When the issue time lies after the grid step that the last label ends (the newest steps not
        there yet): the label of the step it falls in; None otherwise.
    """

    index: int
    label_past_the_data: np.datetime64 | None

    @property
    def before_the_data(self) -> bool:
        """The issue time lies before the first label."""
        return self.index < 0

    @property
    def past_the_data(self) -> bool:
        """The issue time lies after the last label's step."""
        return self.label_past_the_data is not None


def locate_issue(times: np.ndarray, grid: GridSpec, instant: pd.Timestamp) -> IssueStep:
    """The step of ``times`` (UTC labels, increasing, on ``grid``) an issue time ``instant`` selects, and
    whether it lies past their end."""
    labels = np.asarray(times, dtype="datetime64[ns]")
    utc = instant.tz_convert("UTC").tz_localize(None) if instant.tzinfo is not None else instant
    index = int(np.searchsorted(labels, np.datetime64(utc.to_datetime64(), "ns"), side="right")) - 1
    last = pd.Timestamp(labels[-1])
    if grid.step <= pd.Timedelta(0) or utc < last + grid.step:
        return IssueStep(index, None)
    return IssueStep(index, np.datetime64(last + (utc - last) // grid.step * grid.step, "ns"))
