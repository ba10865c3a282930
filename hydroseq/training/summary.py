"""The table printed at the end of ``hydroseq train``."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from hydroseq.training.runtime import EarlyStopping
from hydroseq.training.tracking import where_to_look

COLUMNS = [("epoch", "epoch", "{:.0f}"), ("train loss", "train_loss", "{:.4f}"), ("val loss", "val_loss", "{:.4f}"),
           ("val median NSE", "val_median_nse", "{:.3f}"), ("val median KGE", "val_median_kge", "{:.3f}"),
           ("valid steps/s", "valid_timesteps_per_s", "{:,.0f}"), ("padding", "padding_ratio", "{:.1%}"),
           ("seconds", "epoch_seconds", "{:.1f}")]


def print_training_summary(history: list[dict[str, float]], stopper: EarlyStopping, run_id: str,
                           tracking_uri: str, out_dir: Path, console: Console | None = None) -> None:
    """Per-epoch table, the best epoch, the run id and how to look at it."""
    console = console or Console(width=max(Console().width, 120))
    table = Table(title="training")
    for title, _, _ in COLUMNS:
        table.add_column(title, justify="right", no_wrap=True)
    for row in history:
        style = "bold green" if row["epoch"] == stopper.best_epoch else None
        table.add_row(*[fmt.format(row[key]) for _, key, fmt in COLUMNS], style=style)
    console.print(table)
    console.print(f"best epoch {stopper.best_epoch} (validation median NSE {stopper.best_nse:.3f}); "
                  f"checkpoints in {out_dir}")
    console.print(f"MLflow run id: {run_id}")
    console.print(f"look at it with: {where_to_look(tracking_uri)}")


def print_ensemble_summary(members: dict[str, dict], parent_run_id: str, tracking_uri: str, out_dir: Path) -> None:
    """One row per member (its run and best validation median NSE), then where the ensemble is."""
    table = Table(title="ensemble members")
    for column in ("member", "run id", "best epoch", "val median NSE"):
        table.add_column(column, justify="right")
    for member, info in sorted(members.items(), key=lambda item: int(item[0])):
        table.add_row(member, info["run_id"], str(info["best_epoch"]), f"{info['best_val_median_nse']:.3f}")
    console = Console()
    console.print(table)
    console.print(f"ensemble (member mean) checkpoint in {out_dir}/best.pt")
    console.print(f"MLflow parent run id: {parent_run_id} (evaluate and export take this id)")
    console.print(f"look at it with: {where_to_look(tracking_uri)}")
