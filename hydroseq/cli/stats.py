"""``hydroseq stats``: run :func:`hydroseq.batching.stats.run_stats`, print its tables and its summary."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from hydroseq.batching.stats import PERCENTILES, StatsReport, run_stats
from hydroseq.cli.output import console_for, finish
from hydroseq.cli.tables import add_column, add_id_column
from hydroseq.config import TrainConfig, load_config
from hydroseq.errors import ExitCode


def stats_command(args: argparse.Namespace) -> int:
    """Length and padding statistics of ``--config`` on ``--data``, histogram in ``--out``; exit status 0.

    The ``--json`` summary is the report's own mapping (what ``stats.json`` holds)."""
    config = load_config(args.config, TrainConfig)
    report = run_stats(config, data_path=args.data, out_dir=args.out)
    print_stats(report, config, console_for(args))
    return finish(args, report.to_dict(), ExitCode.OK)


def print_stats(report: StatsReport, config: TrainConfig, console: Console | None = None) -> None:
    """Sample lengths per split, then padding per batching strategy (``config``: the batching it used)."""
    console = console or Console()
    lengths = Table(title=f"Sample lengths ({report.mode} mode) - {report.data_path}\n"
                          f"fixed N: samples that fixed N-step windows would keep; extra: what variable lengths add",
                    show_edge=False, pad_edge=False)
    add_id_column(lengths, "split", [item.split for item in report.lengths])
    for column in ["count", "mean", *[f"P{p}" for p in PERCENTILES], "max", f"fixed {config.data.seq_len}", "extra"]:
        add_column(lengths, column, "right")
    for item in report.lengths:
        extra = f"+{item.extra_samples:,} ({item.extra_samples / max(item.fixed_window_count, 1):+.1%})"
        lengths.add_row(item.split, f"{item.count:,}", f"{item.mean:.1f}",
                        *[f"{item.percentiles[p]:.0f}" for p in PERCENTILES], str(item.max),
                        f"{item.fixed_window_count:,}", extra)
    console.print(lengths)
    padding = Table(title=f"Padding per strategy, train split (batch size {config.batching.batch_size}, "
                          f"token budget {config.batching.token_budget}, bucket width {config.batching.bucket_width})")
    add_id_column(padding, "strategy", [figures.strategy for figures in report.padding.values()])
    for column in ["batches", "padding", "valid steps/batch", "padded steps/batch"]:
        add_column(padding, column, "right")
    for figures in report.padding.values():
        padding.add_row(figures.strategy, f"{figures.batches:,}", f"{figures.padding_ratio:.2%}",
                        f"{figures.valid_steps_per_batch:,.0f}",
                        f"{figures.padded_steps / max(figures.batches, 1):,.0f}")
    console.print(padding)
    console.print(f"histogram: {report.histogram}")
