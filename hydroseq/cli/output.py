"""Where a command's output goes: its tables, its log lines and its ``--json`` summary.

* Tables (rich) go to stdout; to stderr under ``--json``, whose summary alone is on stdout; nowhere
  under ``-q``.
* Log lines of the ``hydroseq`` loggers and Python warnings go to stderr from WARNING on (ERROR
  with ``-q``, DEBUG with ``-v``), and with ``--log-file PATH`` to that file from INFO on (DEBUG
  with ``-v``): one line each, ``<UTC time> <LEVEL> <logger>: <message>``, every line of a
  multi-line message (a traceback) prefixed the same way, no colour codes; with ``--diagnostics PATH``
  the same lines as a Delft-FEWS PI diagnostics file (:mod:`hydroseq.cli.diagnostics`).
* MLflow's and alembic's own lines go to stderr from WARNING on too (ERROR with ``-q``, their INFO
  lines with ``-v``); MLflow's "View run" link to a tracking server's run is not printed.
* Each command ends with :func:`finish`: its summary, with ``command``, ``exit_code`` and
  ``status``, is logged at INFO and, with ``--json``, printed on stdout as one JSON object.

Progress bars are tqdm's with ``disable=None``: drawn on stderr when it is a terminal, never
into a pipe or a log file; ``-q`` turns them off (the commands pass ``show_progress=False``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import math
import os
import re
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

from hydroseq.cli.diagnostics import DiagnosticsFile
from hydroseq.errors import ConfigError, ExitCode

PACKAGE_LOGGER = logging.getLogger("hydroseq")  # the handlers hang here: every hydroseq module's lines
LOGGER = logging.getLogger("hydroseq.cli")
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
QUIETENED = ("mlflow", "alembic", "distributed", "torch.distributed")  # libraries that report progress themselves
MLFLOW_LOGGERS = ("mlflow", "alembic")  # their INFO lines (store tables made, input example checked) only with -v
MLFLOW_LEVEL, MLFLOW_BARS = "MLFLOW_LOGGING_LEVEL", "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR"  # read when mlflow runs
MLFLOW_RUN_URL = "MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT"  # "View run ... at: URL" on stdout at a server run's end
TORCHRUN_LEVEL = "LOGLEVEL"  # the level torchrun's launcher logs at (train --nproc), read when it is imported


def console_for(args: argparse.Namespace, min_width: int | None = None,
                width_off_terminal: int | None = None) -> Console:
    """The console a command prints its tables on (see the module docstring).

    ``min_width`` widens it beyond the terminal (wide tables); ``width_off_terminal`` is its width
    when the output is not a terminal (rich's default there is 80).
    """
    probe = Console(stderr=args.json)
    width = probe.width if probe.is_terminal else (width_off_terminal or probe.width)
    return Console(stderr=args.json, quiet=args.quiet, width=max(width, min_width or 0))


def finish(args: argparse.Namespace, summary: Mapping[str, Any], status: int) -> int:
    """Log the summary of the command's result and, with ``--json``, print it on stdout; returns ``status``."""
    record = {"command": args.command, "exit_code": int(status), "status": ExitCode(status).name, **summary}
    text = json.dumps(plain(record), allow_nan=False)
    LOGGER.info("summary: %s", text)
    if args.json:
        print(text, flush=True)
    return status


def plain(value: object) -> Any:
    """``value`` with only JSON types in it: numpy scalars as numbers, NaN and infinities as None,
    paths as text, UTC times as ISO 8601 (``2014-07-01T08:00:00Z``; NaT as None)."""
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain(item) for item in value]
    if isinstance(value, np.datetime64):
        return None if np.isnat(value) else f"{np.datetime_as_string(value.astype('datetime64[s]'))}Z"
    if isinstance(value, np.generic):
        return plain(value.item())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    return value


class _PlainLines(logging.Formatter):
    """``<UTC time> <LEVEL> <logger>: <message>`` on every line of the record, colour codes removed."""

    def format(self, record: logging.LogRecord) -> str:
        text = ANSI_ESCAPE.sub("", super().format(record))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(record.created))
        prefix = f"{stamp} {record.levelname} {record.name}: "
        return "\n".join(prefix + line for line in text.splitlines() or [""])


class _ConsoleLines(logging.Formatter):
    """Warnings and errors as their message (they name the command themselves); debug and info
    lines start with their level and logger."""

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        return text if record.levelno >= logging.WARNING else f"{record.levelname.lower()} {record.name}: {text}"


class CommandLogging:
    """The log handlers of one command: attached by :meth:`start`, removed by :meth:`stop`.

    Python warnings are logged (``py.warnings``) while the command runs; under ``-q`` the chatty
    libraries in :data:`QUIETENED` report errors only. MLflow and alembic write their own lines to
    stderr: from WARNING on, as the ``hydroseq`` loggers (INFO with ``-v``, or at the level
    ``MLFLOW_LOGGING_LEVEL`` names when set), ERROR under ``-q``. MLflow's link to a tracking
    server's run is never printed (stdout is the command's: its tables, or the ``--json`` summary;
    ``hydroseq train`` says where to look). MLflow draws its artifact progress bars whatever stderr
    is: they are turned off under ``-q`` and when stderr is not a terminal.
    """

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.handlers: list[logging.Handler] = []
        self.loggers = [PACKAGE_LOGGER, logging.getLogger("py.warnings")]
        self.saved: list[tuple[logging.Logger, int, bool]] = []
        self.saved_environment: dict[str, str | None] = {}
        self.diagnostics: DiagnosticsFile | None = None

    def start(self) -> None:
        """Log to stderr (and open ``--log-file``, raising :class:`ConfigError` if it cannot be written)."""
        args = self.args
        self.saved = [(logger, logger.level, logger.propagate) for logger in self.loggers]
        if args.quiet:
            self._set_levels(QUIETENED, logging.ERROR)
            self._set_environment(MLFLOW_LEVEL, "ERROR")  # for an mlflow imported from now on
            self._set_environment(TORCHRUN_LEVEL, "ERROR")
        elif not args.verbose and MLFLOW_LEVEL not in os.environ:
            self._set_levels(MLFLOW_LOGGERS, logging.WARNING)
            self._set_environment(MLFLOW_LEVEL, "WARNING")
        self._set_environment(MLFLOW_RUN_URL, "true")
        if args.quiet or not sys.stderr.isatty():
            self._set_environment(MLFLOW_BARS, "false")
        stderr = logging.StreamHandler(sys.stderr)
        stderr.setLevel(logging.ERROR if args.quiet else logging.DEBUG if args.verbose else logging.WARNING)
        stderr.setFormatter(_ConsoleLines())
        self._attach(stderr)
        for logger in self.loggers:
            logger.setLevel(logging.DEBUG)
            logger.propagate = False
        logging.captureWarnings(True)
        if args.log_file is not None:
            try:
                log_file = logging.FileHandler(args.log_file, mode="a", encoding="utf-8")
            except OSError as error:
                raise ConfigError(f"--log-file {args.log_file}: cannot be written ({error.strerror})") from None
            log_file.setLevel(logging.DEBUG if args.verbose else logging.INFO)
            log_file.setFormatter(_PlainLines())
            self._attach(log_file)
        if getattr(args, "diagnostics", None) is not None:  # its folder checked now: exit 3 before the work
            self.diagnostics = DiagnosticsFile(args.diagnostics, logging.DEBUG if args.verbose else logging.INFO)
            self._attach(self.diagnostics)

    def write_diagnostics(self, status: int) -> None:
        """Write ``--diagnostics`` (a PI diagnostics file) with the lines logged so far and the exit status, if
        it was asked for."""
        if self.diagnostics is not None:
            self.diagnostics.write(self.args.command, status)

    def _set_levels(self, names: tuple[str, ...], level: int) -> None:
        for name in names:
            logger = logging.getLogger(name)
            self.saved.append((logger, logger.level, logger.propagate))
            logger.setLevel(level)

    def _set_environment(self, name: str, value: str) -> None:
        self.saved_environment[name] = os.environ.get(name)
        os.environ[name] = value

    def _attach(self, handler: logging.Handler) -> None:
        self.handlers.append(handler)
        for logger in self.loggers:
            logger.addHandler(handler)

    def stop(self) -> None:
        """Detach and close the handlers; the loggers and warnings as before :meth:`start`."""
        logging.captureWarnings(False)
        for handler in self.handlers:
            for logger in self.loggers:
                logger.removeHandler(handler)
            handler.close()
        for logger, level, propagate in self.saved:
            logger.setLevel(level)
            logger.propagate = propagate
        for name, value in self.saved_environment.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self.handlers, self.saved, self.saved_environment = [], [], {}
