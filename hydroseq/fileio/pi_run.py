"""The Delft-FEWS PI run file: the run's period and forecast time, as a General Adapter hands them to a model.

A General Adapter's ``exportRunFileActivity`` writes a ``Run`` document (PI namespace, ``pi_run.xsd``) with,
among others, the ``timeZone`` of the run's PI files, ``startDateTime`` (the earliest time exported),
``endDateTime`` (the latest) and ``time0``, the forecast time of the run. hydroseq reads those three
(``hydroseq ingest --pi-run-file``, ``hydroseq forecast --pi-run-file``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from hydroseq.errors import InputDataError
from hydroseq.fileio.pi_xml import parse_document, tag, utc_offset, wall_clock
from hydroseq.grid import GridSpec


@dataclass(frozen=True)
class RunFile:
    """The run's period and its forecast time ``time0`` (the issue time), UTC."""

    start: pd.Timestamp
    end: pd.Timestamp
    time0: pd.Timestamp

    @property
    def issue_time(self) -> str:
        """``time0`` as ``hydroseq forecast --issue-time`` reads it (``2014-09-30T06:00:00Z``)."""
        return f"{self.time0.isoformat()}Z"

    def local_days(self, grid: GridSpec) -> tuple[dt.date, dt.date]:
        """The local days of ``grid`` from the one ``start`` ends in to the one ``time0`` ends in (a grid's
        ``start`` and ``end``)."""
        start, time0 = grid.local_days(pd.DatetimeIndex([self.start, self.time0]))
        return start.date(), time0.date()


def read_run_file(path: str | Path) -> RunFile:
    """The period and ``time0`` of the PI run file ``path`` (its times in its ``timeZone``).

    Raises
    ------
    InputDataError
        If the file is not a PI run file, lacks ``timeZone`` or one of the three times, or ``time0`` is before the
        run's start (naming the line where there is one).
    """
    root = parse_document(path, "Run")
    offset = utc_offset(path, root)
    if offset is None:
        raise InputDataError(path, "the run file has no timeZone (the General Adapter always writes one)")
    times = {}
    for name in ("startDateTime", "endDateTime", "time0"):
        element = root.find(tag(name))
        if element is None:
            raise InputDataError(path, f"the run file has no {name}")
        times[name] = wall_clock(path, [element])[0] - offset
    run = RunFile(times["startDateTime"], times["endDateTime"], times["time0"])
    if run.time0 < run.start:
        raise InputDataError(path, f"time0 {run.time0} UTC is before the run's start {run.start} UTC")
    return run
