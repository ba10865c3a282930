"""Training stage: the loop (``train``), checkpoints, MLflow tracking and evaluation (``evaluate``)."""

from __future__ import annotations

from hydroseq.training.evaluate import Evaluation, evaluate
from hydroseq.training.loop import train
from hydroseq.training.result import TrainResult

__all__ = ["Evaluation", "TrainResult", "evaluate", "train"]
