"""Stage ``serving``: the forecast as an MLflow model, and the model registry that holds it.

* The served model (:mod:`.pyfunc_model`: a long table of raw inputs in, the forecast table out, checked
  by :mod:`.served_input` against the bounds of :mod:`.input_bounds`) and its logging with a training run
  (:mod:`.pyfunc_logging`, with the station table and the flood thresholds, :mod:`.pyfunc_stations` and
  :mod:`.pyfunc_thresholds`). It runs the exported network through the forecast stage.
* The registry (:mod:`.model_uri`, :mod:`.stores`) and promotion (:mod:`.promote`, through the gate of
  :mod:`.promotion_gate`, recorded by :mod:`.promotion_trail`).

``hydroseq train`` registers every finished run's forecaster (an MLflow pyfunc model whose artifact
``exported_model/`` is the exported model directory) as a new version of a registered model, with a
description of what was trained on which data and how it scored. An operator then promotes a version
by pointing an alias at it (:func:`hydroseq.serving.promote.promote`, ``hydroseq promote --model NAME
--version N --alias champion``: refused when the version scores worse than the one the alias names or than
persistence), and the forecast reads whichever version the alias names
(:func:`hydroseq.serving.model_uri.registered_model`, ``hydroseq forecast --model models:/NAME@champion``;
``models:/NAME/N`` names a version). The store is ``--tracking-uri`` > ``MLFLOW_TRACKING_URI`` >
``sqlite:///mlruns.db`` under ``HYDROSEQ_HOME`` (:mod:`hydroseq.config.stores`).

This module imports nothing heavy: :func:`is_model_uri` tells a URI from a model directory without
MLflow, so that a forecast from a directory never needs it. The submodules import MLflow; only the
logging (:mod:`.pyfunc_logging`, which ``hydroseq train`` calls) imports torch and the training code.
"""

from __future__ import annotations

from pathlib import Path

MODEL_URI_PREFIX = "models:/"
DEFAULT_ALIAS = "champion"

__all__ = ["DEFAULT_ALIAS", "MODEL_URI_PREFIX", "is_model_uri"]


def is_model_uri(model: str | Path) -> bool:
    """True for a registered model's URI (``models:/NAME@ALIAS``, ``models:/NAME/VERSION``), False for a path."""
    return isinstance(model, str) and model.startswith(MODEL_URI_PREFIX)
