"""Opening the MLflow store a registered model lives in, and the one-line errors of its calls.

Reading the registry never creates a store (:func:`open_registry`); which store it is comes from
:mod:`hydroseq.config.stores`. These helpers import MLflow but neither torch nor the training code, so
that ``hydroseq forecast --model models:/...`` and ``hydroseq promote`` run in a light environment.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")  # no internet here; telemetry would try it

import mlflow
import mlflow.environment_variables
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient
from mlflow.tracking.registry import UnsupportedModelRegistryStoreURIException

from hydroseq.config.stores import local_store_path, resolve_tracking_uri
from hydroseq.config.tracking import TrackingConfig
from hydroseq.errors import ConfigError, HydroseqError, UnavailableError

NOT_THERE = ("RESOURCE_DOES_NOT_EXIST", "NOT_FOUND", "INVALID_PARAMETER_VALUE", "BAD_REQUEST")  # MLflow error codes


def open_registry(tracking_uri: str | None = None) -> tuple[MlflowClient, str]:
    """A client of the store ``tracking_uri`` (default: ``MLFLOW_TRACKING_URI``, else ``sqlite:///mlruns.db``
    under ``HYDROSEQ_HOME``) that must exist already, and its URI: reading the registry never creates a store.

    Raises
    ------
    ConfigError
        If it is a local store whose file or folder does not exist, or a file store MLflow refuses.
    UnavailableError
        If the store does not answer (:func:`store_error`).
    """
    uri = resolve_tracking_uri(TrackingConfig(), tracking_uri)
    path = local_store_path(uri)
    if path is not None and not path.exists():
        raise ConfigError(f"no MLflow store at {uri}: {path.absolute()} does not exist; name the store the model "
                          "was registered in with --tracking-uri, MLFLOW_TRACKING_URI or HYDROSEQ_HOME")
    try:
        client = MlflowClient(uri, registry_uri=os.environ.get("MLFLOW_REGISTRY_URI") or uri)
    except UnsupportedModelRegistryStoreURIException:
        raise ConfigError(f"MLflow store {uri}: this install reads a tracking server's registry (http://...) only "
                          "(the forecast extra holds mlflow-skinny); a local store needs pip install '.[train]' in the "
                          "hydroseq clone, or point --tracking-uri or MLFLOW_TRACKING_URI at the server") from None
    try:
        client.search_registered_models(max_results=1)
    except Exception as error:
        raise store_error(error, uri, "the model registry") from None
    return client, uri


def store_error(error: BaseException, tracking_uri: str, what: str) -> HydroseqError:
    """The one-line error of a failed MLflow call about ``what``: a store that does not answer, is locked or
    times out is :class:`~hydroseq.errors.UnavailableError` (retry later), anything else a
    :class:`~hydroseq.errors.ConfigError` quoting MLflow's first line."""
    first = (str(error).strip().splitlines() or [type(error).__name__])[0]
    code = getattr(error, "error_code", "")
    unanswered = (not isinstance(error, MlflowException) and type(error).__module__.split(".")[0]
                  in ("requests", "urllib3")) or "database is locked" in first
    if unanswered or (code not in NOT_THERE and first.startswith("API request to")):
        return UnavailableError(f"MLflow store {tracking_uri} did not answer about {what}: {first}")
    return ConfigError(f"MLflow store {tracking_uri}, {what}: {first}")


@contextlib.contextmanager
def no_artifact_progress_bars() -> Iterator[None]:
    """No MLflow artifact progress bar in the block: one would be drawn into a forecast's or a training's log."""
    name = mlflow.environment_variables.MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR.name
    previous = os.environ.get(name)
    os.environ[name] = "false"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = previous
