"""``hydroseq report``: run :func:`hydroseq.report.write_report`, print where the page is and what it shows."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hydroseq.cli.output import console_for, finish
from hydroseq.errors import ExitCode
from hydroseq.report import Report, write_report


def report_command(args: argparse.Namespace) -> int:
    """Write the forecast page (``--forecast``) or the verification page (``--hindcast`` alone); exit status 0."""
    report = write_report(args.out, forecast=args.forecast, data=args.data, hindcast=args.hindcast,
                          previous=args.previous, stations=args.stations, max_stations=args.max_stations)
    print_report(report, console_for(args))
    return finish(args, report_summary(report), ExitCode.OK)


def report_summary(report: Report) -> dict[str, Any]:
    """The ``--json`` summary: the page, its kind, its stations, its size and its notes."""
    return {"page": report.path, "kind": report.kind, "stations": report.stations, "bytes": report.bytes,
            "notes": list(report.notes)}


def print_report(report: Report, console: Console | None = None) -> None:
    """The page written, its size and its notes."""
    table = Table(title=f"hydroseq report: {report.kind} page", show_header=False)
    table.add_row("written", escape(str(report.path)))
    table.add_row("stations", str(report.stations))
    table.add_row("size", f"{report.bytes / 1e6:.1f} MB, self-contained (open it in a browser, no network needed)")
    for note in report.notes:
        table.add_row("note", escape(note))
    (console or Console()).print(table)
