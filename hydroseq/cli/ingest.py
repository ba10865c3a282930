"""``hydroseq ingest``: run :func:`hydroseq.ingest.ingest`, print its report and its summary."""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from hydroseq.cli.output import console_for, finish
from hydroseq.config import IngestConfig, load_config
from hydroseq.errors import ExitCode
from hydroseq.fileio import manifest_path
from hydroseq.ingest import IngestReport, ingest
from hydroseq.ingested import open_ingested


def ingest_command(args: argparse.Namespace) -> int:
    """Ingest ``--config`` into ``--out``; print the per-station table; exit status 0."""
    config = load_config(args.config, IngestConfig)
    report = ingest(config, args.out, workers=args.workers, scheduler=args.scheduler, append=args.append,
                    show_progress=not args.quiet)
    print_report(report, console_for(args, width_off_terminal=130))
    return finish(args, ingest_summary(report), ExitCode.OK)


def ingest_summary(report: IngestReport) -> dict[str, Any]:
    """The ``--json`` summary: the output and its checksums (the file's SHA-256 from the set's manifest,
    a Zarr store's :func:`~hydroseq.fileio.sha256_path`;
    the dataset's, over its values, as the training run records it), the stations ingested and those
    dropped with the reason, the report files and the manifest."""
    manifest = manifest_path(report.output)
    files = {entry["name"]: entry["sha256"] for entry in json.loads(manifest.read_text())["files"]}
    written, _ = open_ingested(report.output)
    with written:
        dataset_checksum = str(written.attrs.get("dataset_checksum", ""))
        steps = written.sizes["time"]
    return {"output": report.output, "sha256": files[report.output.name], "dataset_checksum": dataset_checksum,
            "time_steps": steps, "stations": [str(station) for station in report.stations["station"]],
            "dropped": report.dropped, "report_files": list(report.paths.values()), "manifest": manifest}


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
