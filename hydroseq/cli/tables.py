"""What the printed tables share: columns that fold rather than cut, leads in days or hours, and the issue
time as the local day and the UTC label.

rich cuts a cell that does not fit with an ellipsis by default. Every column made here folds instead (the
text goes on in the next line of its cell), and a column of station ids keeps the width of its longest id,
so that the other columns fold around it in an 80-column terminal and ``01022500`` is never cut.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from rich.console import JustifyMethod
from rich.table import Table

from hydroseq.grid import GridSpec

DAY, HOUR = pd.Timedelta(days=1), pd.Timedelta(hours=1)


def add_column(table: Table, header: str, justify: JustifyMethod = "left") -> None:
    """A column of ``table`` whose cells wrap at spaces and fold long words, never cut them."""
    table.add_column(header, justify=justify, overflow="fold")


def add_id_column(table: Table, header: str, ids: Iterable[str]) -> None:
    """A column of ids that is never wrapped: as wide as the longest id (the other columns fold to make room)."""
    width = max((len(str(value)) for value in ids), default=0)
    table.add_column(header, no_wrap=True, min_width=max(width, len(header)), overflow="fold")


def lead_label(lead: int, step: pd.Timedelta) -> str:
    """A lead of ``lead`` grid steps as time: ``1 d`` on a grid of whole days, ``6 h`` on a sub-daily one
    (``30 min`` under an hour)."""
    span = int(lead) * step
    if step >= DAY and step % DAY == pd.Timedelta(0):
        return f"{span / DAY:g} d"
    if pd.Timedelta(0) < span < HOUR:
        return f"{span / pd.Timedelta(minutes=1):g} min"
    return f"{span / HOUR:g} h"


def leads_label(leads: Iterable[int], step: pd.Timedelta) -> str:
    """Every lead as :func:`lead_label`, comma-separated: ``1 d, 2 d, 3 d``."""
    return ", ".join(lead_label(int(lead), step) for lead in leads)


def issue_label(issue_times: np.ndarray, grid: GridSpec) -> str:
    """The issue time (or the first and last of several) as the grid's local day and as the UTC label.

    A daily grid: ``2014-09-30 (local day; UTC label 2014-10-01T08:00:00Z)``; a sub-daily one also gives
    the local clock time of the label, ``2005-06-01 06:00 UTC+01:00 (local day 2005-06-01; UTC label
    2005-06-01T05:00:00Z)``; several: ``A .. B (local days; UTC labels A' .. B'; 119 issue times)``.
    """
    labels = np.asarray(issue_times, dtype="datetime64[ns]")
    ends = labels[[0, -1]] if len(labels) > 1 else labels[:1]
    days = [f"{day:%Y-%m-%d}" for day in grid.local_days(ends)]
    utc = " .. ".join(f"{np.datetime_as_string(label.astype('datetime64[s]'))}Z" for label in ends)
    plural = "s" if len(ends) > 1 else ""
    count = f"; {len(labels)} issue times" if len(labels) > 1 else ""
    if grid.step >= DAY:
        return f"{' .. '.join(days)} (local day{plural}; UTC label{plural} {utc}{count})"
    local = [pd.Timestamp(label).tz_localize("UTC").tz_convert(grid.zone) for label in ends]
    clock = " .. ".join(f"{time:%Y-%m-%d %H:%M} UTC{time.isoformat()[-6:]}" for time in local)
    return f"{clock} (local day{plural} {' .. '.join(days)}; UTC label{plural} {utc}{count})"
