"""What :func:`hydroseq.training.train` returns, and the callbacks through which it reports as it goes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hydroseq.dataset import StationData
from hydroseq.training.checkpoint import Checkpoint
from hydroseq.training.report import SplitReport


@dataclass
class TrainResult:
    """The MLflow run, where the checkpoints are, the history and the scores of the best checkpoint.

    Attributes
    ----------
    history
        One entry per committed epoch (``epoch`` and its metrics), for an ensemble those of the
        members trained by this call.
    stopped_early_after
        The epoch after which early stopping ended this call's training; None if it did not.
    validation
        The best checkpoint scored on the validation split; None on DDP ranks other than 0, which
        do not score.
    members
        An ensemble's members (``{member: {"run_id", "best_epoch", "best_val_median_nse"}}``, also
        those finished by an earlier call); empty for a single run.
    base_val_median_nse
        With ``training.init_from``: the base model's validation median NSE on this run's stations before
        the first update (first lead), to read beside ``best_val_median_nse``; None otherwise (and when
        resuming).
    resumed_from_epoch
        How many epochs ``last.pt`` had committed when ``resume`` continued the run from it; None when
        training started fresh (also under ``resume`` before any epoch was committed) and for an
        ensemble's parent.
    """

    run_id: str
    tracking_uri: str
    output_dir: Path
    best_epoch: int
    best_val_median_nse: float
    epochs_completed: int
    history: list[dict[str, float]] = field(default_factory=list)
    stopped_early_after: int | None = None
    validation: SplitReport | None = None
    members: dict[str, dict[str, Any]] = field(default_factory=dict)
    resumed_from_epoch: int | None = None
    base_val_median_nse: float | None = None


EpochCallback = Callable[[dict[str, float]], None]
"""Called on every rank after each epoch with its history entry (``epoch`` and the metrics)."""

MemberCallback = Callable[[TrainResult], None]
"""Called after each ensemble member has been trained, with that member's result."""

ModelLogger = Callable[[str, Checkpoint, StationData], None]
"""Logs the model of the best checkpoint, under the name given, to the active MLflow run, from the data it was
trained on (``hydroseq train`` passes :func:`hydroseq.serving.pyfunc_logging.log_forecast_model`)."""
