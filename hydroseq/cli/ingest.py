"""``hydroseq ingest``: run :func:`hydroseq.ingest.ingest` and print its report."""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from hydroseq.config import IngestConfig, load_config
from hydroseq.ingest import IngestReport, ingest


def ingest_command(args: argparse.Namespace) -> int:
    """Ingest ``--config`` into ``--out``; print the per-station table; exit status 0."""
    config = load_config(args.config, IngestConfig)
    report = ingest(config, args.out, workers=args.workers, scheduler=args.scheduler, append=args.append)
    print_report(report)
    return 0


def print_report(report: IngestReport, console: Console | None = None) -> None:
    """The per-station summary table, then the dropped stations."""
    console = console or Console(width=None if Console().is_terminal else 130)
    table = Table(title=f"ingested {len(report.stations)} station(s) -> {report.output}")
    columns = ["station", "first_valid", "last_valid", "coverage_all", "gaps", "longest_gap", "records",
               "longest_record", "marked_missing"]
    for column in columns:
        table.add_column(column, justify="left" if column == "station" else "right")
    for row in report.stations.itertuples(index=False):
        table.add_row(*(_cell(getattr(row, column)) for column in columns))
    console.print(table)
    for station_id, reason in report.dropped.items():
        console.print(f"[yellow]dropped {station_id}[/yellow]: {reason}")
    console.print(f"report: {report.paths['csv']}, {report.paths['json']}, {report.paths['png']}")


def _cell(value: object) -> str:
    if isinstance(value, pd.Timestamp):
        return value.strftime("%Y-%m-%d %H:%M")
    if isinstance(value, float):
        return "" if np.isnan(value) else f"{value:.3f}"
    if value is pd.NaT:
        return ""
    return str(value)
