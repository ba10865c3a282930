"""The MLflow model registry in the operational path: which version a ``models:/`` URI names, promotion.

``hydroseq train`` registers every finished run's forecaster (an MLflow pyfunc model whose artifact
``exported_model/`` is the exported model directory) as a new version of a registered model, with a
description of what was trained on which data and how it scored. An operator then promotes a version
by pointing an alias at it (:func:`hydroseq.registry.promote.promote`, ``hydroseq promote --model NAME
--version N --alias champion``), and the forecast reads whichever version the alias names
(:func:`hydroseq.registry.model_uri.registered_model`, ``hydroseq forecast --model models:/NAME@champion``;
``models:/NAME/N`` names a version). The store is ``--tracking-uri`` > ``MLFLOW_TRACKING_URI`` >
``sqlite:///mlruns.db`` under ``HYDROSEQ_HOME`` (:mod:`hydroseq.registry.stores`).

This module imports nothing heavy: :func:`is_model_uri` tells a URI from a model directory without
MLflow, so that a forecast from a directory never needs it. The submodules import MLflow, never
torch nor the training code.
"""

from __future__ import annotations

from pathlib import Path

MODEL_URI_PREFIX = "models:/"
DEFAULT_ALIAS = "champion"

__all__ = ["DEFAULT_ALIAS", "MODEL_URI_PREFIX", "is_model_uri"]


def is_model_uri(model: str | Path) -> bool:
    """True for a registered model's URI (``models:/NAME@ALIAS``, ``models:/NAME/VERSION``), False for a path."""
    return isinstance(model, str) and model.startswith(MODEL_URI_PREFIX)
