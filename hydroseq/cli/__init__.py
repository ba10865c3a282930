"""The ``hydroseq`` command: the argument parser and the exit status of every command.

Each command lives in a module of this package (:mod:`hydroseq.cli.ingest`, ``stats``,
``training``, ``export``, ``forecast``): it calls the Python API, which returns a result and
prints nothing, prints that result and turns it into an exit status. :func:`main` turns the
API's :class:`~hydroseq.errors.HydroseqError` into one line and the error's status; every status
is one of :class:`~hydroseq.errors.ExitCode` (README "Exit status").

The command modules are imported inside each handler so that ``hydroseq --help`` stays fast and
a command only loads what it needs (``forecast`` never imports the training code).
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from hydroseq import __version__
from hydroseq.errors import ExitCode, HydroseqError

# The machines this runs on often have no internet; MLflow's telemetry would try to reach it.
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")


TRACKING_URI_HELP = ("MLflow tracking URI (overrides MLFLOW_TRACKING_URI, which overrides the config's; default "
                     "sqlite:///mlruns.db; relative store paths resolve under HYDROSEQ_HOME, default the working "
                     "directory)")


def _command(module: str, function: str) -> Callable[[argparse.Namespace], int]:
    """A handler that imports ``hydroseq.cli.<module>`` only when its command runs (torch and MLflow
    are slow to import, and ``--help`` needs neither)."""
    def handler(args: argparse.Namespace) -> int:
        run: Callable[[argparse.Namespace], int] = getattr(importlib.import_module(f"hydroseq.cli.{module}"), function)
        return run(args)
    return handler


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``hydroseq`` command."""
    parser = argparse.ArgumentParser(
        prog="hydroseq",
        description="Streamflow forecasting: ingest -> train -> evaluate -> export -> forecast.")
    parser.add_argument("--version", action="version", version=f"hydroseq {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    ingest = commands.add_parser("ingest", help="resample raw sources onto one leakage-free time grid")
    ingest.add_argument("--config", required=True, type=Path, help="ingest config (YAML)")
    ingest.add_argument("--out", required=True, type=Path, help="output NetCDF file")
    ingest.add_argument("--workers", type=int, default=None, help="start a local dask cluster with N workers")
    ingest.add_argument("--scheduler", default=None, help="address of an existing dask scheduler")
    ingest.add_argument("--append", action="store_true", help="append newer steps to an existing output")
    ingest.set_defaults(handler=_command("ingest", "ingest_command"))

    stats = commands.add_parser("stats", help="sequence-length distribution and padding per batching strategy")
    stats.add_argument("--config", required=True, type=Path, help="train config (YAML)")
    stats.add_argument("--data", type=Path, default=None, help="ingested NetCDF (overrides the config)")
    stats.add_argument("--out", type=Path, default=Path("runs/stats"), help="folder for the histogram PNG")
    stats.set_defaults(handler=_command("stats", "stats_command"))

    train = commands.add_parser("train", help="train a packed LSTM, tracked in MLflow")
    train.add_argument("--config", required=True, type=Path, help="train config (YAML)")
    train.add_argument("--data", type=Path, default=None, help="ingested NetCDF (overrides the config)")
    train.add_argument("--resume", action="store_true", help="continue from the last checkpoint")
    train.add_argument("--nproc", type=int, default=None, help="train with N local DDP processes")
    train.add_argument("--tracking-uri", default=None, help=TRACKING_URI_HELP)
    train.add_argument("--artifact-root", type=Path, default=None,
                       help="artifact folder of a new experiment in a local store (overrides HYDROSEQ_ARTIFACT_ROOT, "
                            "which overrides tracking.artifact_root)")
    train.set_defaults(handler=_command("training", "train_command"))

    evaluate = commands.add_parser("evaluate", help="score a trained run against baselines")
    evaluate.add_argument("--run", required=True, help="MLflow run id")
    evaluate.add_argument("--period", default="test", choices=["train", "validation", "test"])
    evaluate.add_argument("--data", type=Path, default=None, help="ingested NetCDF (default: the run's)")
    evaluate.add_argument("--tracking-uri", default=None, help=TRACKING_URI_HELP)
    evaluate.set_defaults(handler=_command("training", "evaluate_command"))

    export = commands.add_parser("export", help="write a self-contained fixed-length model directory")
    export.add_argument("--run", required=True, help="MLflow run id or checkpoint file")
    export.add_argument("--seq-len", required=True, type=int, help="fixed input length N")
    export.add_argument("--out", required=True, type=Path, help="output model directory")
    export.add_argument("--tracking-uri", default=None, help=TRACKING_URI_HELP)
    export.set_defaults(handler=_command("export", "export_command"))

    forecast = commands.add_parser("forecast", help="forecast every station from an exported model")
    forecast.add_argument("--model", required=True, type=Path, help="exported model directory")
    forecast.add_argument("--data", required=True, type=Path, help="ingested NetCDF")
    forecast.add_argument("--issue-time", required=True, help="issue time T, or a range START..END (hindcast)")
    forecast.add_argument("--out", type=Path, default=None, help="output NetCDF (CSV written beside it)")
    forecast.add_argument("--missing-forecast-input", choices=("fallback", "fail"), default="fallback",
                          help="models with weather-forecast inputs, a station with no product valid at the issue "
                               "time: forecast it without one (default) or fail the run")
    forecast.add_argument("--thresholds", type=Path, default=None,
                          help="models with a predictive distribution: CSV of flood thresholds (station,level,"
                               "discharge in the target's units); default: 2- and 5-year flows and the 95th and "
                               "99th percentiles of the model's training period")
    forecast.add_argument("--max-skipped-share", type=_share, default=1.0, metavar="SHARE",
                          help="exit 5 (partial result) when more than this share (0 to 1) of the stations could "
                               "not be forecast; what was forecast is written all the same (default 1: never)")
    forecast.set_defaults(handler=_command("forecast", "forecast_command"))
    return parser


def _share(text: str) -> float:
    """A share from 0 to 1 (an argparse ``type``: a bad value is a usage error)."""
    try:
        share = float(text)
    except ValueError:
        share = float("nan")
    if not 0.0 <= share <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a share from 0 to 1, got {text!r}")
    return share


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
    :class:`~hydroseq.errors.HydroseqError` is printed as one line and gives its ``exit_code``.
    SIGINT (Ctrl-C) and SIGTERM take the same path: the exception unwinds the command, which
    removes its temporaries and leaves the earlier outputs as they were; the status is 128 + the
    signal number (130, 143), as a shell reports a process killed by that signal. Any other
    exception is a bug: its traceback is printed and the status is 70 (``ExitCode.INTERNAL``).
    """
    args = build_parser().parse_args(argv)
    in_main_thread = threading.current_thread() is threading.main_thread()  # only it may set handlers
    previous = signal.signal(signal.SIGTERM, _raise_terminated) if in_main_thread else None
    try:
        return int(args.handler(args))
    except HydroseqError as error:
        print(f"hydroseq {args.command}: error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt as interrupt:
        signum = interrupt.signum if isinstance(interrupt, Terminated) else signal.SIGINT
        print(f"hydroseq {args.command}: interrupted ({signal.Signals(signum).name})", file=sys.stderr)
        return ExitCode.TERMINATED if signum == signal.SIGTERM else ExitCode.INTERRUPTED
    except Exception as error:
        if _is_store_lock(error):
            print(f"hydroseq {args.command}: error: the MLflow store is locked by another process "
                  f"({str(error).splitlines()[0]})", file=sys.stderr)
            return ExitCode.UNAVAILABLE
        traceback.print_exc()
        print(f"hydroseq {args.command}: unexpected error (a bug: please report it with the traceback above)",
              file=sys.stderr)
        return ExitCode.INTERNAL
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)
