"""Training stage: the loop (``train``), checkpoints, MLflow tracking and evaluation (``evaluate``).

``train`` and ``evaluate`` are what ``hydroseq train`` and ``hydroseq evaluate`` call. The loop's
building blocks are public too, for callers that drive epochs themselves (the training benchmark,
``benchmarks/bench_forecast_training.py``, alternates two models epoch by epoch):
:func:`load_training_data` (:class:`TrainingData`), :func:`train_one_epoch`, :func:`validate`,
:func:`lr_factor` (the schedule), :func:`resolve_device` and :func:`resolve_lstm_path`.
:class:`Checkpoint` is the file ``train`` writes after each epoch (``last.pt``, ``best.pt``) and
``hydroseq export`` reads.
"""

from __future__ import annotations

from hydroseq.training.checkpoint import Checkpoint
from hydroseq.training.data import TrainingData, load_training_data
from hydroseq.training.evaluate import Evaluation, evaluate
from hydroseq.training.loop import train, train_one_epoch, validate
from hydroseq.training.result import TrainResult
from hydroseq.training.runtime import lr_factor, resolve_device, resolve_lstm_path

__all__ = ["Checkpoint", "Evaluation", "TrainResult", "TrainingData", "evaluate", "load_training_data", "lr_factor",
           "resolve_device", "resolve_lstm_path", "train", "train_one_epoch", "validate"]
