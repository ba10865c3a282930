"""``hydroseq fetch``: its options, and a run of :func:`hydroseq.fetch.fetch_runs` or
:func:`hydroseq.fetch.fetch_gauges` that prints what was written and skipped.

:mod:`hydroseq.fetch` is imported when the command runs: the parser of every command reads the options
here, and an install without the ``fetch`` extra must still parse them (and then say which extra to install).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hydroseq.cli.arg_types import non_negative_number, positive_count, positive_number
from hydroseq.cli.output import console_for, finish
from hydroseq.errors import ConfigError, ExitCode

if TYPE_CHECKING:
    from hydroseq.fetch import FetchResult

SOURCES = ("ecmwf-hres", "ecmwf-ens", "gfs", "gefs", "nwis")


def add_fetch_options(fetch: argparse.ArgumentParser) -> None:
    """The options of ``hydroseq fetch``."""
    fetch.add_argument("--source", required=True, choices=SOURCES,
                       help="ECMWF open data HRES or ENS, NOAA GFS or GEFS (the run the issue time needs, one GRIB2 "
                            "file per run), or USGS NWIS (discharge readings, one CSV per UTC day)")
    fetch.add_argument("--issue-time", required=True, metavar="T",
                       help="ISO 8601: a date YYYY-MM-DD is the end of that day in --timezone; YYYY-MM-DDTHH:MM with "
                            "Z or a UTC offset is that instant, without either a time in --timezone")
    fetch.add_argument("--out", required=True, type=Path, metavar="RAW_DIR",
                       help="the raw folder: files go to RAW_DIR/<source>/")
    fetch.add_argument("--timezone", default="UTC", help="the zone of an --issue-time without one (default UTC)")
    fetch.add_argument("--params", nargs="+", default=["tp", "2t"], metavar="NAME",
                       help="forecast fields by ecCodes shortName; only their messages are downloaded (default: tp 2t)")
    fetch.add_argument("--steps", nargs="+", default=["0/90/6"], metavar="RANGE",
                       help="forecast steps in hours: single hours or FIRST/LAST/BY ranges (default 0/90/6)")
    fetch.add_argument("--members", type=positive_count, default=None, metavar="N",
                       help="gefs: the control and the first N perturbed members (default: all 30)")
    fetch.add_argument("--latency", type=non_negative_number, default=None, metavar="HOURS",
                       help="hours from a run's reference time until it is all published (default: the product's, "
                            "docs/fetch.md)")
    fetch.add_argument("--stations", type=Path, default=None, metavar="FILE",
                       help="nwis: the stations (a station table with a station_id column, or one id a line)")
    fetch.add_argument("--station-prefix", default="", metavar="TEXT",
                       help="nwis: stripped from each station id to give its USGS site number")
    fetch.add_argument("--days", type=positive_count, default=1, metavar="N",
                       help="nwis: the UTC days to cover, the issue time's last (default 1: its own day)")
    fetch.add_argument("--base-url", default=None, metavar="URL",
                       help="another root with the source's layout (a mirror) instead of the source's own")
    fetch.add_argument("--attempts", type=positive_count, default=5, metavar="N",
                       help="tries of each request before the source counts as unreachable: exit 6 (default 5)")
    fetch.add_argument("--retry-wait", type=non_negative_number, default=2.0, metavar="SECONDS",
                       help="wait before the second try, doubled before each further one, up to 60 s (default 2)")
    fetch.add_argument("--deadline", type=positive_number, default=600.0, metavar="SECONDS",
                       help="the longest one request may take, from its start to its last byte, before it counts as a "
                            "failed try (default 600)")


def fetch_command(args: argparse.Namespace) -> int:
    """Download what ``--source`` has for ``--issue-time`` into ``--out``; exit status 0."""
    from hydroseq.fetch import RetryPolicy, fetch_gauges, fetch_runs

    policy = RetryPolicy(attempts=args.attempts, first_wait_s=args.retry_wait, deadline_s=args.deadline)
    if args.source == "nwis":
        if args.stations is None:
            raise ConfigError("--source nwis needs --stations (a station table, or a file of USGS site numbers)")
        result = fetch_gauges(args.stations, args.issue_time, args.out, days=args.days,
                              station_prefix=args.station_prefix, base_url=args.base_url, timezone=args.timezone,
                              policy=policy)
    else:
        result = fetch_runs(args.source, args.issue_time, args.out, params=args.params, steps=args.steps,
                            members=args.members, base_url=args.base_url, latency_hours=args.latency,
                            timezone=args.timezone, policy=policy)
    print_fetch(result, console_for(args))
    return finish(args, fetch_summary(result), ExitCode.OK)


def fetch_summary(result: FetchResult) -> dict[str, Any]:
    """The ``--json`` summary: the source, the issue time, the runs, the files written and skipped, the notes."""
    return {"source": result.source, "issue_time": f"{result.issue_time:%Y-%m-%dT%H:%M:%SZ}",
            "runs": [f"{run:%Y-%m-%dT%H:%M:%SZ}" for run in result.runs], "written": list(result.written),
            "skipped": list(result.skipped), "downloads": result.downloads,
            "downloaded_bytes": result.downloaded_bytes, "notes": list(result.notes)}


def print_fetch(result: FetchResult, console: Console | None = None) -> None:
    """The files written and skipped, the runs they hold, the notes."""
    table = Table(title=f"hydroseq fetch: {result.source} for {result.issue_time:%Y-%m-%dT%H:%MZ}", show_header=False)
    if result.runs:
        table.add_row("run", ", ".join(f"{run:%Y-%m-%dT%HZ}" for run in result.runs))
    for path in result.written:
        table.add_row("written", escape(str(path)))
    for path in result.skipped:
        table.add_row("complete already", escape(str(path)))
    table.add_row("downloaded", f"{result.downloads} file(s), {result.downloaded_bytes / 1e6:.1f} MB")
    for note in result.notes:
        table.add_row("note", escape(note))
    (console or Console()).print(table)
