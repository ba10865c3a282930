"""What the operator reads at the end of a forecast run (rich tables on standard output)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from hydroseq.forecast.hindcast import HindcastScores
from hydroseq.forecast.result import ForecastResult
from hydroseq.forecast.csv_writer import format_time


def print_summary(result: ForecastResult, n_forecast: int, outputs: list[Path], console: Console) -> None:
    """Issue time(s), stations forecast and skipped (with reasons), and the files written."""
    issue = format_time(result.issue_times[0])
    if len(result.issue_times) > 1:
        issue += f" .. {format_time(result.issue_times[-1])} ({len(result.issue_times)} issue times)"
    table = Table(title=f"hydroseq forecast, issued {issue}", show_header=False)
    table.add_row("stations forecast", f"{n_forecast} of {len(result.stations)}")
    table.add_row("leads (grid steps)", ", ".join(str(int(lead)) for lead in result.leads))
    for path in outputs:
        table.add_row("written", str(path))
    console.print(table)
    if result.skipped:
        skipped = Table(title=f"{len(result.skipped)} stations not forecast")
        skipped.add_column("station")
        skipped.add_column("reason")
        for station, reason in result.skipped.items():
            skipped.add_row(station, reason)
        console.print(skipped)


def print_scores(scores: HindcastScores, paths: list[Path], console: Console) -> None:
    """Median NSE and KGE over stations, per lead (every station's scores are in ``paths``)."""
    table = Table(title="hindcast scores (median over stations)")
    for column in ("lead", "stations", "NSE", "KGE"):
        table.add_column(column, justify="right")
    for lead, count, nse_median, kge_median in scores.medians():
        table.add_row(str(lead), str(count), f"{nse_median:.3f}", f"{kge_median:.3f}")
    console.print(table)
    for path in paths:
        console.print(f"per station: {path}", soft_wrap=True)
