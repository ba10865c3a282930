"""Training stage: the loop (``train``) with MLflow tracking, and evaluation (``evaluate``).

Public API: :func:`train` (what ``hydroseq train`` calls; returns a :class:`TrainResult`) and
:func:`evaluate` (what ``hydroseq evaluate`` calls; returns an :class:`Evaluation`). The checkpoint
``train`` writes after each epoch (``last.pt``, ``best.pt``) and ``hydroseq export`` reads is
:class:`hydroseq.training.checkpoint.Checkpoint`. The loop's building blocks (``load_training_data``,
``train_one_epoch``, ``validate``, the schedule and device choices in :mod:`hydroseq.training.runtime`)
are internal: import them from their modules.
"""

from __future__ import annotations

from hydroseq.training.evaluate import Evaluation, evaluate
from hydroseq.training.loop import train
from hydroseq.training.result import TrainResult

__all__ = ["Evaluation", "TrainResult", "evaluate", "train"]
