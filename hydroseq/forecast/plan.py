"""The plan of a forecast run: which grid steps of the ingested file it reads, and where its issue steps lie both in
the file and in the window of steps it reads, with their grid labels, so that no caller converts one into the
other."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from hydroseq.dataset.window import history_slice
from hydroseq.errors import InputDataError
from hydroseq.forecast.data_window import IngestedFile
from hydroseq.grid.issue_times import locate_issue, parse_issue_times


@dataclass(frozen=True)
class Plan:
    """Which grid steps a run reads (``start..stop-1`` of the file) and forecasts from.

    Attributes
    ----------
    file_ends
        The issue steps as indices of the ingested file (what :class:`IngestedFile` reads by).
    window_ends
        The same steps as indices of the window read, ``file_ends - start`` (what the network inputs, the observed
        leads and the baselines are taken by).
    labels
        The issue steps' grid labels (UTC, ``datetime64[ns]``): the forecast's issue times.
    start
        The first grid step read.
    stop
        One past the last grid step read.
    is_range
        A hindcast (``START..END``), not a forecast at one issue time.
    past_the_data
        The label of a single issue time after the file's end (nothing is read then); else None.
    """

    file_ends: np.ndarray
    window_ends: np.ndarray
    labels: np.ndarray
    start: int
    stop: int
    is_range: bool
    past_the_data: np.datetime64 | None = None

    @property
    def first_issue(self) -> int:
        """The file index of the first issue step."""
        return int(self.file_ends[0])

    @property
    def last_issue(self) -> int:
        """The file index of the last issue step."""
        return int(self.file_ends[-1])


def plan_run(source: IngestedFile, issue_time: str, seq_len: int, max_lead: int) -> Plan:
    """The plan of a run of a model reading ``seq_len`` steps, forecasting ``max_lead`` steps ahead, at ``issue_time``
    (``T`` or ``START..END``, :mod:`hydroseq.grid.issue_times`) from ``source``.

    A hindcast reads up to ``max_lead`` steps after its last issue (the observations its leads are scored against).

    Raises
    ------
    InputDataError
        If the issue time is before the file's first step, or a hindcast ends after the file's last.
    """
    first, last, is_range = parse_issue_times(issue_time, source.grid)
    times = source.times
    first_step, last_step = locate_issue(times, source.grid, first), locate_issue(times, source.grid, last)
    if first_step.before_the_data or last_step.before_the_data:
        raise InputDataError(source.path, f"issue time {first.isoformat()} is before the first grid step "
                             f"({pd.Timestamp(times[0]).isoformat()}Z)", where="time")
    if last_step.past_the_data and not is_range:  # nothing to read: run_forecast skips every station
        nothing = np.zeros(0, np.int64)
        return Plan(nothing, nothing, times[nothing], 0, 0, is_range, last_step.label_past_the_data)
    if last_step.past_the_data:
        raise InputDataError(source.path, f"data end at {pd.Timestamp(times[-1]).isoformat()}Z, before the "
                             f"issue time {last.isoformat()}: ingest the newest steps first "
                             "(hydroseq ingest --append)", where="time")
    first_end, last_end = first_step.index, last_step.index
    ends = np.arange(first_end, last_end + 1)
    start = history_slice(first_end, seq_len).start
    stop = min(len(times), last_end + 1 + (max_lead if is_range else 0))
    return Plan(file_ends=ends, window_ends=ends - start, labels=times[ends], start=start, stop=stop,
                is_range=is_range)
