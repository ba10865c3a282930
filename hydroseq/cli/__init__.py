"""The ``hydroseq`` command: :func:`main` and the exit status of every command.

Each command lives in a module of this package (:mod:`hydroseq.cli.ingest`, ``stats``,
``training``, ``export``, ``forecast``, ``config``): it calls the Python API, which returns a result
and prints nothing, prints that result, builds its ``--json`` summary and turns it into an exit
status. :mod:`hydroseq.cli.parser` holds the options and the examples of ``--help``,
:mod:`hydroseq.cli.output` where tables, log lines and summaries go (``-q``, ``-v``, ``--log-file``,
``--json``). :func:`main` turns the API's :class:`~hydroseq.errors.HydroseqError` into one line and
the error's status; every status is one of :class:`~hydroseq.errors.ExitCode` (README "Exit status").

The command modules are imported inside each handler so that ``hydroseq --help`` stays fast and
a command only loads what it needs (``forecast`` never imports the training code).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from hydroseq import __version__
from hydroseq.cli import parser
from hydroseq.cli.output import LOGGER, CommandLogging
from hydroseq.cli.parser import Handler
from hydroseq.errors import ConfigError, ExitCode, HydroseqError, NoSpaceError

# The machines this runs on often have no internet; MLflow's telemetry would try to reach it.
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")


# The packages of each optional extra of pyproject.toml (by import name): a command that imports one
# that is not installed names the extra to install instead of a traceback.
EXTRA_OF_MODULE = {
    "onnxruntime": "forecast", "scoringrules": "forecast", "bokeh": "forecast", "jinja2": "forecast",
    "mlflow": "forecast",  # mlflow-skinny: a tracking server's registry; a local store needs sqlalchemy (train)
    "torch": "train", "sqlalchemy": "train", "alembic": "train", "onnx": "train", "onnxscript": "train",
    "distributed": "train",
    "filelock": "train", "ecmwf": "fetch", "herbie": "fetch", "requests": "fetch",
}


def _command(module: str, function: str) -> Handler:
    """A handler that imports ``hydroseq.cli.<module>`` only when its command runs (torch and MLflow
    are slow to import, and ``--help`` needs neither).

    A package of an optional extra that is not installed (torch in a ``hydroseq[forecast]``
    install) is a :class:`~hydroseq.errors.ConfigError` naming the extra to install; any other
    package that cannot be imported (a broken install) is one too, naming it (exit 3: fix the
    deployment, not a bug)."""
    def handler(args: argparse.Namespace) -> int:
        try:
            run: Handler = getattr(importlib.import_module(f"hydroseq.cli.{module}"), function)
            return run(args)
        except ImportError as missing:
            package = (missing.name or "hydroseq").partition(".")[0]
            extra = EXTRA_OF_MODULE.get(package)
            if extra is not None and isinstance(missing, ModuleNotFoundError):
                raise ConfigError(f"{missing.name} is not installed, and this command needs it: "
                                  f"pip install '.[{extra}]' in the hydroseq clone") from missing
            if package == "hydroseq":
                raise
            raise ConfigError(f"broken install: {missing.name} cannot be imported ({missing}); reinstall hydroseq "
                              "in this environment") from missing
    return handler


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``hydroseq`` command (:mod:`hydroseq.cli.parser`)."""
    return parser.build_parser(_command)


class Terminated(KeyboardInterrupt):
    """SIGTERM (what Kubernetes and ``kill`` send), raised where the program is, like Ctrl-C's KeyboardInterrupt."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated(signum)


def _is_store_lock(error: Exception) -> bool:
    """SQLite's 'database is locked' from an MLflow call without retries of its own (most retry:
    :func:`hydroseq.training.store.retry_locked`; same test as its ``is_lock_error``)."""
    return type(error).__module__.split(".")[0] in ("sqlalchemy", "mlflow") and "database is locked" in str(error)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``hydroseq`` command; returns the process exit status, an :class:`~hydroseq.errors.ExitCode`.

    A command line that does not parse exits through argparse with 2 (``ExitCode.USAGE``). A
    :class:`~hydroseq.errors.HydroseqError` is logged as one line and gives its ``exit_code``.
    SIGINT (Ctrl-C) and SIGTERM take the same path: the exception unwinds the command, which
    removes its temporaries and leaves the earlier outputs as they were; the status is 128 + the
    signal number (130, 143), as a shell reports a process killed by that signal. A write that failed
    for want of space (its ``OSError``, however wrapped, says ``ENOSPC``, ``EDQUOT`` or ``EFBIG``) is
    one line and 7 (``ExitCode.NO_SPACE``), like the :class:`~hydroseq.errors.NoSpaceError` of the
    file helpers. Any other exception is a bug: its traceback is logged and the status is 70
    (``ExitCode.INTERNAL``).
    With ``--json`` a command that fails prints ``{"command", "exit_code", "status", "error"}``.
    """
    command_line = build_parser()
    args = command_line.parse_args(argv)
    if args.quiet and args.verbose:
        command_line.error("-q/--quiet and -v/--verbose exclude each other")
    logs = CommandLogging(args)
    in_main_thread = threading.current_thread() is threading.main_thread()  # only it may set handlers
    previous = signal.signal(signal.SIGTERM, _raise_terminated) if in_main_thread else None
    try:
        return _with_diagnostics(args, logs, _run(args, logs, argv))
    finally:
        logs.stop()
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)


def _run(args: argparse.Namespace, logs: CommandLogging, argv: Sequence[str] | None) -> int:
    """Start the logging, run the command; its exit status (see :func:`main`)."""
    try:
        logs.start()
        LOGGER.debug("hydroseq %s, Python %s: hydroseq %s", __version__, platform.python_version(),
                     " ".join(map(str, sys.argv[1:] if argv is None else argv)))
        started = time.perf_counter()
        status = int(args.handler(args))
        sys.stdout.flush()  # here, so that a reader gone away is a BrokenPipeError below, not at interpreter exit
        LOGGER.debug("hydroseq %s: exit status %d after %.1f s", args.command, status, time.perf_counter() - started)
        return status
    except HydroseqError as error:
        return _failed(args, error.exit_code, f"error: {error}")
    except KeyboardInterrupt as interrupt:
        signum = interrupt.signum if isinstance(interrupt, Terminated) else signal.SIGINT
        status = ExitCode.TERMINATED if signum == signal.SIGTERM else ExitCode.INTERRUPTED
        return _failed(args, status, f"interrupted ({signal.Signals(signum).name})")
    except BrokenPipeError:
        # the reader of stdout stopped (``hydroseq config --schema train | head``): not an error of ours;
        # stdout goes to /dev/null so that the interpreter's final flush does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return ExitCode.OUTPUT_CLOSED
    except Exception as error:
        if _is_store_lock(error):
            return _failed(args, ExitCode.UNAVAILABLE, "error: the MLflow store is locked by another process "
                                                       f"({str(error).splitlines()[0]})")
        full = _no_space(error)
        if full is not None:
            return _failed(args, full.exit_code, f"error: {full}")
        return _failed(args, ExitCode.INTERNAL, f"unexpected error {type(error).__name__}: {error} (a bug: please "
                                                "report it with this traceback)", bug=error)


def _with_diagnostics(args: argparse.Namespace, logs: CommandLogging, status: int) -> int:
    """Write ``--diagnostics`` (when asked) once the command has logged its last line; ``status``, or, if
    that file cannot be written after a command that wrote its outputs, the write's error (one line)."""
    try:
        logs.write_diagnostics(status)
    except HydroseqError as error:
        failed = _failed(args, error.exit_code, f"error: --diagnostics {error}")
        return failed if status in (ExitCode.OK, ExitCode.PARTIAL) else status
    return status


def _no_space(error: Exception) -> NoSpaceError | None:
    """A write outside :mod:`hydroseq.fileio`'s helpers (which raise :class:`~hydroseq.errors.NoSpaceError`
    themselves) that failed for want of space, told by its errno (:func:`hydroseq.fileio.space.space_errno`)."""
    from hydroseq.fileio.atomic import public_path
    from hydroseq.fileio.space import describe, space_errno

    reason = space_errno(error)
    if reason is None:
        return None
    path = public_path(Path(os.fsdecode(reason.filename))) if reason.filename else "an output"
    return NoSpaceError(path, describe(reason))


def _failed(args: argparse.Namespace, status: ExitCode, what: str, bug: Exception | None = None) -> int:
    """Log ``hydroseq <command>: <what>`` (with the traceback of a ``bug``) and, with ``--json``, print
    it as the summary; returns ``status``. A DDP training process leaves the summary to its launcher."""
    LOGGER.error(f"hydroseq {args.command}: {what}", exc_info=bug)
    if args.json and not _is_training_process(args):
        print(json.dumps({"command": args.command, "exit_code": int(status), "status": status.name,
                          "error": what.removeprefix("error: ")}), flush=True)
    return status


def _is_training_process(args: argparse.Namespace) -> bool:
    """True in a process that ``train --nproc`` (torchrun) started."""
    if args.command != "train":
        return False
    from hydroseq.training.distributed import launched_by_torchrun
    return launched_by_torchrun()
