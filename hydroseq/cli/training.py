"""``hydroseq train`` and ``hydroseq evaluate``: run the training API and print what it reports."""

from __future__ import annotations

import argparse
import os

from rich.console import Console
from rich.table import Table

from hydroseq.config import TrainConfig, load_config
from hydroseq.forecast.pyfunc_logging import log_forecast_model
from hydroseq.training import TrainResult, evaluate, train
from hydroseq.training.distributed import LaunchOptions, launch
from hydroseq.training.report import SplitReport
from hydroseq.training.tracking import ARTIFACT_ROOT_VARIABLE, where_to_look

COLUMNS = [("epoch", "epoch", "{:.0f}"), ("train loss", "train_loss", "{:.4f}"), ("val loss", "val_loss", "{:.4f}"),
           ("val median NSE", "val_median_nse", "{:.3f}"), ("val median KGE", "val_median_kge", "{:.3f}"),
           ("valid steps/s", "valid_timesteps_per_s", "{:,.0f}"), ("padding", "padding_ratio", "{:.1%}"),
           ("seconds", "epoch_seconds", "{:.1f}")]


def train_command(args: argparse.Namespace) -> int:
    """Train ``--config`` (with ``--nproc`` DDP processes if more than one); exit status 0.

    ``--artifact-root`` is handed on as ``HYDROSEQ_ARTIFACT_ROOT``, so that it wins over the variable
    and reaches every DDP process.
    """
    config = load_config(args.config, TrainConfig)
    if args.artifact_root is not None:
        os.environ[ARTIFACT_ROOT_VARIABLE] = str(args.artifact_root.absolute())
    if args.nproc and args.nproc > 1:
        launch(config, LaunchOptions(args.nproc, args.data, args.resume, args.tracking_uri))
        return 0
    patience = config.training.patience
    result = train(config, data_path=args.data, resume=args.resume, tracking_uri=args.tracking_uri,
                   on_epoch=print_epoch, on_member=lambda member: print_train_result(member, patience),
                   log_model=log_forecast_model)
    print_train_result(result, patience)
    return 0


def evaluate_command(args: argparse.Namespace) -> int:
    """Score ``--run`` on ``--period``; print the scores over stations; exit status 0."""
    evaluation = evaluate(args.run, period=args.period, tracking_uri=args.tracking_uri, data_path=args.data)
    if not evaluation.trained_on_this_data:
        print(f"warning: {evaluation.data_path} is not the dataset this run was trained on (checksum differs)")
    print_split_report(evaluation.report, evaluation.period)
    return 0


def print_epoch(entry: dict[str, float]) -> None:
    """One line per epoch: training loss, validation median NSE, throughput and time."""
    print(f"epoch {entry['epoch']:.0f}: train loss {entry['train_loss']:.4f}, val median NSE "
          f"{entry['val_median_nse']:.3f}, {entry['valid_timesteps_per_s']:,.0f} valid steps/s, "
          f"{entry['epoch_seconds']:.0f} s", flush=True)


def print_train_result(result: TrainResult, patience: int | None) -> None:
    """Early stopping, the best checkpoint's validation scores, then the run's (or the ensemble's) summary.

    Only the early stopping line on DDP ranks other than 0 (they hold no validation scores).
    """
    if result.stopped_early_after is not None:
        print(f"early stopping after epoch {result.stopped_early_after}: no better validation median NSE "
              f"for {patience} epochs")
    if result.validation is None:
        return
    print_split_report(result.validation, "validation (best epoch)")
    if result.members:
        print_ensemble_summary(result)
    else:
        print_training_summary(result)


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
            console.print(f"{key}: {int(value)} of {report.scores['station'].nunique()} stations")
