"""Errors that reach the user as one clear message instead of a traceback, and the exit status of each.

:class:`ExitCode` is the one table of exit statuses of the ``hydroseq`` command and of the daily
job (``pipelines/daily_forecast.sh``); README "Exit status" documents it. Each error class carries
the status the CLI exits with when it stops a command.
"""

from __future__ import annotations

import os
from enum import IntEnum


class ExitCode(IntEnum):
    """Exit statuses a scheduler can act on (README "Exit status")."""

    OK = 0
    NOTHING_PRODUCED = 1  # no station could be forecast: nothing written
    USAGE = 2  # the command line does not parse (argparse's own status)
    CONFIG = 3  # a config, an option value, or a store, run, model or output path it names is wrong
    INPUT_DATA = 4  # a data file cannot be used
    PARTIAL = 5  # results written, but more than the allowed share of stations was not forecast
    UNAVAILABLE = 6  # a shared resource is busy or unreachable (store locked, scheduler down): retry later
    NO_SPACE = 7  # the disk or quota is full, or a file reached the size limit: nothing written, free space and retry
    REFUSED = 8  # a safeguard refused the change (promote: the candidate is worse): nothing changed; a person decides
    INTERNAL = 70  # an unexpected error, with its traceback (sysexits' EX_SOFTWARE)
    INTERRUPTED = 130  # SIGINT (Ctrl-C): 128 + 2, as a shell reports it
    OUTPUT_CLOSED = 141  # the reader of stdout went away (``| head``): 128 + SIGPIPE, as a shell reports it
    TERMINATED = 143  # SIGTERM (the scheduler's stop): 128 + 15


class HydroseqError(Exception):
    """Base class: the CLI prints ``str(error)`` as one line and exits with ``exit_code``.

    A problem the user fixes in the setup (3, :attr:`ExitCode.CONFIG`) unless a subclass says otherwise.
    """

    exit_code: ExitCode = ExitCode.CONFIG


class ConfigError(HydroseqError):
    """A configuration file or option value is missing, unreadable or invalid, or names something
    (an MLflow store, a run) that is not there."""

    exit_code = ExitCode.CONFIG


class UnavailableError(HydroseqError):
    """A shared resource is busy or cannot be reached (the MLflow store locked by another job, a dask
    scheduler down): trying again later may succeed."""

    exit_code = ExitCode.UNAVAILABLE


class RefusedError(HydroseqError):
    """A safeguard refused what was asked, on the figures (``hydroseq promote``: the candidate is worse than
    the champion or than persistence): nothing was changed, and retrying changes nothing; a person decides
    (``--force``). :attr:`ExitCode.REFUSED`."""

    exit_code = ExitCode.REFUSED


class InputDataError(HydroseqError):
    """A data file cannot be used.

    Parameters
    ----------
    path
        The offending file.
    problem
        What is wrong, in words a hydrologist understands.
    where
        The line number, timestamp or variable concerned, if known.
    """

    exit_code = ExitCode.INPUT_DATA

    def __init__(self, path: object, problem: str, where: str | None = None) -> None:
        self.path = str(path)
        self.problem = problem
        self.where = where
        location = f" ({where})" if where else ""
        super().__init__(f"{self.path}{location}: {problem}")


class OutputPathError(HydroseqError):
    """An output cannot be written where it was asked for (a read-only folder, a parent that is a
    file, a folder where a file should go): a setup problem, :attr:`ExitCode.CONFIG`.

    Parameters
    ----------
    path
        The output that cannot be written.
    problem
        Why, in words.
    """

    exit_code = ExitCode.CONFIG

    def __init__(self, path: object, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class NoSpaceError(HydroseqError):
    """An output could not be written for want of space: the disk or the quota is full (``ENOSPC``,
    ``EDQUOT``) or a file reached the process's size limit (``EFBIG``, ``ulimit -f``). What was being
    written is removed; earlier outputs stay as they were. :attr:`ExitCode.NO_SPACE`.

    Parameters
    ----------
    path
        The output that could not be written.
    problem
        What ran out, in words (``no space left on device``, ``file too large: ...``).
    free
        Bytes still free for this user in the output's folder, if known.
    written
        Bytes of the output written before the write failed (the output needs more), if known.
    """

    exit_code = ExitCode.NO_SPACE

    def __init__(self, path: object, problem: str, free: int | None = None, written: int | None = None) -> None:
        self.path = str(path)
        self.problem = problem
        self.free = free
        self.written = written
        folder = os.path.dirname(self.path) or "."
        details = [f"more than {_size(written)} needed" if written else "",
                   f"{_size(free)} free in {folder} when the write failed" if free is not None else ""]
        extra = "; ".join(detail for detail in details if detail)
        super().__init__(f"{self.path}: cannot be written: {problem}" + (f" ({extra})" if extra else ""))


def _size(n_bytes: int) -> str:
    """``n_bytes`` for a reader: ``512 B``, ``3.4 MiB``."""
    value, unit = float(n_bytes), "B"
    for bigger in ("KiB", "MiB", "GiB", "TiB"):
        if value < 1024:
            break
        value, unit = value / 1024, bigger
    return f"{n_bytes} B" if unit == "B" else f"{value:.1f} {unit}"


class ProcessFailedError(HydroseqError):
    """A child process (a DDP training rank) failed; the CLI exits with the child's status when it
    is that of an error the child reported (configuration, input data, unavailable, no space), else with
    :attr:`ExitCode.INTERNAL` (the parent wrote the child's command line; a crash is a bug).

    Parameters
    ----------
    message
        What failed.
    child_status
        The failed child's exit status.
    """

    def __init__(self, message: str, child_status: int) -> None:
        super().__init__(message)
        reported = {ExitCode.CONFIG, ExitCode.INPUT_DATA, ExitCode.UNAVAILABLE, ExitCode.NO_SPACE}
        self.exit_code = ExitCode(child_status) if child_status in reported else ExitCode.INTERNAL
