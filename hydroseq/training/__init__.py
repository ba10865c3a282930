"""Training stage: the loop (``train``), checkpoints, MLflow tracking and evaluation (``evaluate``)."""

from __future__ import annotations

from hydroseq.training.evaluate import evaluate
from hydroseq.training.loop import TrainResult, train

__all__ = ["TrainResult", "evaluate", "train"]
