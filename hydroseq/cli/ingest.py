"""``hydroseq ingest``: run :func:`hydroseq.ingest.ingest`, print its report and its summary."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hydroseq.cli.output import console_for, finish, plain
from hydroseq.cli.tables import add_column, add_id_column
from hydroseq.config import IngestConfig, load_config
from hydroseq.config.ingest import GridConfig
from hydroseq.errors import ExitCode
from hydroseq.fileio import manifest_path, sha256_path
from hydroseq.grid import GridSpec
from hydroseq.ingest import IngestReport, ingest
from hydroseq.ingest.report import AppendSummary
from hydroseq.ingested import open_ingested

LOGGER = logging.getLogger(__name__)


def ingest_command(args: argparse.Namespace) -> int:
    """Ingest ``--config`` into ``--out``; print the per-station table; exit status 0.

    With ``--append``, grid steps past the dataset's end without any value (raw files not arrived)
    are not appended, with a warning; when nothing new came in at all the summary's
    ``append.no_new_data`` is true and the dataset is left as it was (still exit status 0: the
    forecast then says what it can do, see ``docs/forecast.md``). With ``--pi-run-file`` (a Delft-FEWS
    General Adapter run) the grid covers the run's local days instead of the config's ``grid.start..end``.
    """
    config = load_config(args.config, IngestConfig)
    if args.pi_run_file is not None:  # lxml: loaded for a Delft-FEWS run only
        from hydroseq.fileio.pi_run import read_run_file

        start, end = read_run_file(args.pi_run_file).local_days(config.grid.spec)
        config.grid = GridConfig.model_validate({**config.grid.model_dump(), "start": start, "end": end})
    report = ingest(config, args.out, workers=args.workers, scheduler=args.scheduler, append=args.append,
                    show_progress=not args.quiet)
    print_report(report, console_for(args, width_off_terminal=130), config.grid.spec)
    if report.appended is not None and len(report.appended.without_data):
        LOGGER.warning(f"hydroseq ingest: {without_data_message(report.appended)}")
    return finish(args, ingest_summary(report), ExitCode.OK)


def without_data_message(appended: AppendSummary) -> str:
    """One line on the steps ``--append`` left out for want of any value."""
    labels = [plain(label) for label in appended.without_data[[0, -1]]]
    steps = f"{labels[0]}" if len(appended.without_data) == 1 else f"{labels[0]} .. {labels[1]}"
    ends = f"the dataset still ends at {plain(appended.last_time)}"
    if appended.no_new_data:
        return (f"no new raw data: no value at any station for grid step(s) {steps} (raw files not arrived?); "
                f"nothing appended, {ends}")
    return f"no value at any station for grid step(s) {steps}: not appended, {ends}"


def ingest_summary(report: IngestReport) -> dict[str, Any]:
    """The ``--json`` summary: the output and its checksums (the file's SHA-256 from the set's manifest,
    a Zarr store's :func:`~hydroseq.fileio.sha256_path`;
    the dataset's, over its values, as the training run records it), the stations ingested and those
    dropped with the reason, the report files, the manifest and, with ``--append``, what was appended
    (:func:`append_summary`)."""
    manifest: Path | None = manifest_path(report.output)
    if manifest is None or not manifest.exists():  # --append left a file from before manifests as it was
        manifest, sha256 = None, sha256_path(report.output)
    else:
        sha256 = {entry["name"]: entry["sha256"] for entry in json.loads(manifest.read_text())["files"]}[
            report.output.name]
    written, _ = open_ingested(report.output)
    with written:
        dataset_checksum = str(written.attrs.get("dataset_checksum", ""))
        steps = written.sizes["time"]
    return {"output": report.output, "sha256": sha256, "dataset_checksum": dataset_checksum,
            "time_steps": steps, "stations": [str(station) for station in report.stations["station"]],
            "dropped": report.dropped, "report_files": list(report.paths.values()), "manifest": manifest,
            "append": append_summary(report.appended)}


def append_summary(appended: AppendSummary | None) -> dict[str, Any] | None:
    """``--append``: steps appended, ``no_new_data`` (nothing past the dataset's end had a value, nothing
    appended), the steps left out for want of any value (``without_data``: first, last, count), the
    dataset's last label and whether it was ``written``; None without ``--append``."""
    if appended is None:
        return None
    missing = appended.without_data
    return {"new_steps": appended.new_steps, "no_new_data": appended.no_new_data,
            "without_data": {"first": missing[0], "last": missing[-1], "count": len(missing)} if len(missing) else None,
            "last_time": appended.last_time, "written": appended.written}


def print_report(report: IngestReport, console: Console | None = None, grid: GridSpec | None = None) -> None:
    """The per-station summary table, then the dropped stations.

    Parameters
    ----------
    report
        What the ingest returned.
    console
        Where to print (default: stdout).
    grid
        The ingested grid: on a daily one the first and last valid steps print as the grid's local days,
        otherwise (and without it) as their UTC labels.
    """
    console = console or Console(width=None if Console().is_terminal else 130)
    daily = grid is not None and grid.step >= pd.Timedelta(days=1)
    when = f"local days of {grid.timezone}" if daily and grid is not None else "UTC labels"
    table = Table(title=f"ingested {len(report.stations)} station(s) -> {escape(str(report.output))} (first and "
                        f"last valid steps as {when}; gaps and records in {_steps(grid)})",
                  show_edge=False, pad_edge=False)
    add_id_column(table, "station", report.stations["station"].astype(str))
    for header in ("first\nvalid", "last\nvalid"):
        add_column(table, header)
    for header in ("coverage", "gaps\n(longest)", "records\n(longest)", "marked\nmissing"):
        add_column(table, header, "right")
    for row in report.stations.itertuples(index=False):
        first, last = (_time(value, grid if daily else None) for value in (row.first_valid, row.last_valid))
        table.add_row(escape(str(row.station)), first, last, f"{row.coverage_all:.3f}",
                      f"{row.gaps} ({row.longest_gap})" if row.gaps else "0",
                      f"{row.records} ({row.longest_record})", str(row.marked_missing))
    console.print(table)
    for station_id, reason in report.dropped.items():
        console.print(f"[yellow]dropped {escape(station_id)}[/yellow]: {escape(reason)}")
    console.print(f"report: {report.paths['csv']}, {report.paths['json']}, {report.paths['png']}", soft_wrap=True)


def _steps(grid: GridSpec | None) -> str:
    """What a length in grid steps is: ``days`` on a daily grid, ``hours`` on an hourly one."""
    named = {pd.Timedelta(days=1): "days", pd.Timedelta(hours=1): "hours"}
    return "grid steps" if grid is None else named.get(grid.step, f"grid steps of {grid.frequency}")


def _time(value: object, grid: GridSpec | None) -> str:
    """A first or last valid label: its local day on ``grid``, else the UTC label (empty for NaT)."""
    if not isinstance(value, pd.Timestamp):  # NaT: never valid
        return ""
    if grid is not None:
        return f"{grid.local_days(pd.DatetimeIndex([value]))[0]:%Y-%m-%d}"
    return value.strftime("%Y-%m-%d %H:%M")
