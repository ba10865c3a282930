"""``hydroseq train`` and ``hydroseq evaluate``: run the training API, print what it reports and its summary."""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console
from rich.table import Table

from hydroseq.cli.output import console_for, finish
from hydroseq.config import TrainConfig, load_config
from hydroseq.errors import ExitCode
from hydroseq.scoring.signature_errors import summary_errors
from hydroseq.serving.pyfunc_logging import log_forecast_model
from hydroseq.training import TrainResult, evaluate, train
from hydroseq.training.distributed import LaunchOptions, launch
from hydroseq.training.evaluate import Evaluation
from hydroseq.training.report import SplitReport
from hydroseq.training.tracking import ARTIFACT_ROOT_VARIABLE, where_to_look

LOGGER = logging.getLogger(__name__)
COLUMNS = [("epoch", "epoch", "{:.0f}"), ("train loss", "train_loss", "{:.4f}"), ("val loss", "val_loss", "{:.4f}"),
           ("val median NSE", "val_median_nse", "{:.3f}"), ("val median KGE", "val_median_kge", "{:.3f}"),
           ("valid steps/s", "valid_timesteps_per_s", "{:,.0f}"), ("padding", "padding_ratio", "{:.1%}"),
           ("seconds", "epoch_seconds", "{:.1f}")]


def train_command(args: argparse.Namespace) -> int:
    """Train ``--config`` (with ``--nproc`` DDP processes if more than one); exit status 0.

    ``--artifact-root`` is handed on as ``HYDROSEQ_ARTIFACT_ROOT``, so that it wins over the variable
    and reaches every DDP process; so are the global options, and rank 0 prints the summary. Without
    ``tracking.run_name`` the MLflow run is named after the config file (``train_demo_cpu``).
    """
    config = load_config(args.config, TrainConfig)
    if config.tracking.run_name is None:
        config.tracking.run_name = Path(args.config).stem
    if args.init_from is not None:
        config.training.init_from = args.init_from
    if args.artifact_root is not None:
        os.environ[ARTIFACT_ROOT_VARIABLE] = str(args.artifact_root.absolute())
    if args.nproc and args.nproc > 1:
        launch(config, LaunchOptions(args.nproc, args.data, args.resume, args.tracking_uri, global_options(args)))
        return ExitCode.OK
    patience = config.training.patience
    out = console_for(args, min_width=120)
    result = train(config, data_path=args.data, resume=args.resume, tracking_uri=args.tracking_uri,
                   show_progress=not args.quiet, on_epoch=lambda entry: print_epoch(entry, out),
                   on_member=lambda member: print_train_result(member, patience, out),
                   log_model=log_forecast_model)
    print_train_result(result, patience, out)
    if result.validation is None:  # a DDP rank other than 0: rank 0 reports
        return ExitCode.OK
    if args.resume and result.resumed_from_epoch is None and not result.members:
        out.print(f"--resume: no checkpoint in {result.output_dir} yet (no epoch had been committed): this run "
                  "started fresh", markup=False, highlight=False, soft_wrap=True)
    return finish(args, train_summary(result), ExitCode.OK)


def evaluate_command(args: argparse.Namespace) -> int:
    """Score ``--run`` on ``--period``; print the scores over stations; exit status 0."""
    evaluation = evaluate(args.run, period=args.period, tracking_uri=args.tracking_uri, data_path=args.data,
                          show_progress=not args.quiet)
    if not evaluation.trained_on_this_data:
        LOGGER.warning(f"hydroseq evaluate: warning: {evaluation.data_path} is not the dataset this run was trained on "
                       "(checksum differs)")
    print_split_report(evaluation.report, evaluation.period, console_for(args, min_width=120))
    return finish(args, evaluate_summary(args.run, evaluation), ExitCode.OK)


def global_options(args: argparse.Namespace) -> tuple[str, ...]:
    """``-q``, ``-v``, ``--log-file``, ``--json`` as given, for the training processes of ``--nproc``."""
    options = [flag for flag, given in (("--quiet", args.quiet), ("--verbose", args.verbose), ("--json", args.json))
               if given]
    return (*options, *(("--log-file", str(args.log_file.absolute())) if args.log_file else ()))


def train_summary(result: TrainResult) -> dict[str, Any]:
    """The ``--json`` summary: the run, its best epoch and validation median NSE (the ensemble's members; with
    ``--init-from`` the base model's before fine-tuning, ``base_val_median_nse``),
    the epochs a resumed run continued from (None: trained from the start), the validation summary
    metrics of the best checkpoint, and where it all is."""
    return {"run_id": result.run_id, "tracking_uri": result.tracking_uri, "output_dir": result.output_dir,
            "best_epoch": result.best_epoch, "best_val_median_nse": result.best_val_median_nse,
            "epochs_completed": result.epochs_completed, "stopped_early_after": result.stopped_early_after,
            "resumed_from_epoch": result.resumed_from_epoch, "members": result.members,
            "base_val_median_nse": result.base_val_median_nse,
            "validation": result.validation.summary if result.validation else {}}


def evaluate_summary(run_id: str, evaluation: Evaluation) -> dict[str, Any]:
    """The ``--json`` summary: the period's summary metrics, the data scored and the files written."""
    report = evaluation.report
    return {"run_id": run_id, "period": evaluation.period, "data": evaluation.data_path,
            "trained_on_this_data": evaluation.trained_on_this_data, "summary": report.summary,
            "files": [report.csv_path, report.signatures_csv_path, *report.plot_paths]}


def print_epoch(entry: dict[str, float], console: Console) -> None:
    """One line per epoch: training loss, validation median NSE, throughput and time."""
    console.print(f"epoch {entry['epoch']:.0f}: train loss {entry['train_loss']:.4f}, val median NSE "
                  f"{entry['val_median_nse']:.3f}, {entry['valid_timesteps_per_s']:,.0f} valid steps/s, "
                  f"{entry['epoch_seconds']:.0f} s", markup=False, highlight=False)
    console.file.flush()


def print_train_result(result: TrainResult, patience: int | None, console: Console) -> None:
    """Early stopping, the best checkpoint's validation scores, then the run's (or the ensemble's) summary.

    Only the early stopping line on DDP ranks other than 0 (they hold no validation scores).
    """
    if result.stopped_early_after is not None:
        console.print(f"early stopping after epoch {result.stopped_early_after}: no better validation median NSE "
                      f"for {patience} epochs", markup=False, highlight=False)
    if result.validation is None:
        return
    print_split_report(result.validation, "validation (best epoch)", console)
    if result.base_val_median_nse is not None:
        console.print(f"--init-from: validation median NSE {result.base_val_median_nse:.3f} of the base model on these "
                      f"stations before fine-tuning, {result.best_val_median_nse:.3f} fine-tuned (best epoch)",
                      markup=False, highlight=False)
    if result.members:
        print_ensemble_summary(result, console)
    else:
        print_training_summary(result, console)


def print_training_summary(result: TrainResult, console: Console | None = None) -> None:
    """Per-epoch table, the best epoch, the run id and how to look at it."""
    console = console or Console(width=max(Console().width, 120))
    table = Table(title="training")
    for title, _, _ in COLUMNS:
        table.add_column(title, justify="right", no_wrap=True)
    for row in result.history:
        style = "bold green" if row["epoch"] == result.best_epoch else None
        table.add_row(*[fmt.format(row[key]) for _, key, fmt in COLUMNS], style=style)
    console.print(table)
    console.print(f"best epoch {result.best_epoch} (validation median NSE {result.best_val_median_nse:.3f}); "
                  f"checkpoints in {result.output_dir}")
    console.print(f"MLflow run id: {result.run_id}")
    console.print(f"look at it with: {where_to_look(result.tracking_uri)}")


def print_ensemble_summary(result: TrainResult, console: Console | None = None) -> None:
    """One row per member (its run and best validation median NSE), then where the ensemble is."""
    table = Table(title="ensemble members")
    for column in ("member", "run id", "best epoch", "val median NSE"):
        table.add_column(column, justify="right")
    for member, info in sorted(result.members.items(), key=lambda item: int(item[0])):
        table.add_row(member, info["run_id"], str(info["best_epoch"]), f"{info['best_val_median_nse']:.3f}")
    console = console or Console()
    console.print(table)
    console.print(f"ensemble (member mean) checkpoint in {result.output_dir}/best.pt")
    console.print(f"MLflow parent run id: {result.run_id} (evaluate and export take this id)")
    console.print(f"look at it with: {where_to_look(result.tracking_uri)}")


def print_split_report(report: SplitReport, split: str, console: Console | None = None) -> None:
    """A table of the median and mean over stations of NSE and KGE (and medians of RMSE, bias) per forecast."""
    table = Table(title=f"{split}: scores over stations")
    columns = ("lead", "forecast", "NSE median", "NSE mean", "KGE median", "KGE mean", "RMSE median",
               "bias median", "stations")
    for column in columns:
        table.add_column(column, justify="left" if column == "forecast" else "right", no_wrap=True)
    for (lead, forecast), group in report.scores.groupby(["lead", "forecast"], sort=True):
        cells = [f"{group['nse'].median():.3f}", f"{group['nse'].mean():.3f}", f"{group['kge'].median():.3f}",
                 f"{group['kge'].mean():.3f}", f"{group['rmse'].median():.3f}", f"{group['bias'].median():.3f}"]
        table.add_row(str(lead), forecast, *cells, str(int(group["nse"].notna().sum())))
    console = console or Console(width=max(Console().width, 120))
    console.print(table)
    for key, value in report.summary.items():
        if key.endswith("stations_beating_persistence"):
            compared = report.summary[key.replace("beating", "compared_with")]
            console.print(f"{key}: {int(value)} of {int(compared)} stations scored against persistence")
    for lead, group in report.scores.query("forecast == 'model'").groupby("lead", sort=True):
        for line in signature_lines(int(lead), group, report.events.query("forecast == 'model' and lead == @lead")):
            console.print(line)
        console.print(signature_error_line(int(lead), report.signatures.query("forecast == 'model' and lead == @lead")),
                      markup=False, highlight=False)
    if report.probabilistic is not None:
        print_probabilistic_report(report.probabilistic.scores, split, console)


def signature_lines(lead: int, scores: pd.DataFrame, events: pd.DataFrame) -> list[str]:
    """The model's flow-duration and peak metrics (medians over stations), then its flood events summed over stations.

    Events read ``<level> <hits>/<misses>/<false alarms>`` per threshold level that some station has.
    """
    median = scores[["fhv", "fms", "flv", "peak_timing", "missed_peaks", "peak_mape"]].median()
    lines = [f"lead {lead} model, median over stations: FHV {median['fhv']:+.1f} %, FMS {median['fms']:+.1f} %, "
             f"FLV {median['flv']:+.1f} %, peak timing {median['peak_timing']:.2f} steps, "
             f"missed peaks {median['missed_peaks']:.0%}, Peak-MAPE {median['peak_mape']:.1f} %"]
    counts = events.dropna(subset=["hits"]).groupby("level", sort=False)[["hits", "misses", "false_alarms"]].sum()
    if len(counts):
        lines.append(f"lead {lead} model, flood events over stations (hits/misses/false alarms): " + ", ".join(
            f"{level} {int(row.hits)}/{int(row.misses)}/{int(row.false_alarms)}" for level, row in counts.iterrows()))
    return lines


def signature_error_line(lead: int, signatures: pd.DataFrame) -> str:
    """The model's hydrological signatures, the median over stations of each one's error (those defined): a percent
    of the observed value for those far from zero (``q_mean -4.3 %``), a difference in their unit for those that can
    be zero or near it (``zero_q_freq +0.0002``, ``hfd_mean +2 steps``:
    :data:`hydroseq.scoring.signature_errors.RELATIVE_SIGNATURES`)."""
    relative, absolute = summary_errors(signatures)
    parts = [", ".join(f"{name} {value:+.1f} %" for name, value in relative.items()),
             ", ".join(f"{name} {value:+.3g}" + (f" {unit}" if unit not in ("", "1", "fraction") else "")
                       for name, (value, unit) in absolute.items())]
    if not any(parts):
        return f"lead {lead} model, signatures' median error over stations: none defined"
    return (f"lead {lead} model, signatures' median error over stations: {parts[0] or '-'}; "
            f"as a difference: {parts[1] or '-'}")


def print_probabilistic_report(scores: pd.DataFrame, split: str, console: Console) -> None:
    """Per lead, over stations: CRPS skill, interval coverage and the 2-year flow's Brier skill (median)."""
    table = Table(title=f"{split}: predictive distribution (median over stations; CRPSS against climatology "
                        "and persistence)")
    for column in ("lead", "CRPS", "CRPSS clim", "CRPSS pers", "CRPSS clim > 0", "cover 50 %", "cover 90 %",
                   "BSS 2-year"):
        table.add_column(column, justify="right", no_wrap=True)
    for lead, group in scores.groupby("lead", sort=True):
        bss = f"{group['bss_2-year'].median():.3f}" if "bss_2-year" in group else "-"
        table.add_row(str(lead), f"{group['crps'].median():.3f}", f"{group['crpss_climatology'].median():.3f}",
                      f"{group['crpss_persistence'].median():.3f}",
                      f"{int((group['crpss_climatology'] > 0).sum())} of {len(group)}",
                      f"{group['coverage50'].median():.1%}", f"{group['coverage90'].median():.1%}", bss)
    console.print(table)
