"""Which MLflow store a command uses, and opening one that must already exist, without the training stage.

The default store is a local SQLite file (``sqlite:///mlruns.db``) in the data directory
``HYDROSEQ_HOME`` (default: the working directory): a relative store path resolves against it. The
store: ``--tracking-uri`` > ``MLFLOW_TRACKING_URI`` > the config's ``tracking.tracking_uri``. These
helpers import MLflow but neither torch nor the training code, so that ``hydroseq forecast`` and
``hydroseq promote`` can find a registered model in a light environment;
:mod:`hydroseq.training.tracking` and :mod:`hydroseq.training.store` re-export them.
"""

from __future__ import annotations

import contextlib
import os
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")  # no internet here; telemetry would try it

import mlflow
import mlflow.environment_variables
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from hydroseq.config import TrackingConfig
from hydroseq.errors import ConfigError, HydroseqError, UnavailableError

HOME_VARIABLE = "HYDROSEQ_HOME"  # the data directory of the default store and artifacts
NOT_THERE = ("RESOURCE_DOES_NOT_EXIST", "NOT_FOUND", "INVALID_PARAMETER_VALUE", "BAD_REQUEST")  # MLflow error codes


def data_home() -> Path | None:
    """``HYDROSEQ_HOME`` as an absolute folder, or None when unset (paths stay relative to the working directory)."""
    home = os.environ.get(HOME_VARIABLE)
    return Path(home).absolute() if home else None


def sqlite_file(tracking_uri: str) -> Path | None:
    """The database file of a ``sqlite:///`` tracking URI (None for other stores and ``:memory:``)."""
    if not tracking_uri.startswith("sqlite:///"):
        return None
    name = tracking_uri.removeprefix("sqlite:///").split("?", 1)[0]
    return Path(name) if name and name != ":memory:" else None


def local_store_path(tracking_uri: str) -> Path | None:
    """The database file (``sqlite:///``) or folder (``file:`` URI or a plain path) of a local store;
    None for a server and for SQLite's ``:memory:``."""
    if tracking_uri.startswith("sqlite:"):
        return sqlite_file(tracking_uri)
    if tracking_uri.startswith("file:"):
        return Path(urllib.parse.unquote(urllib.parse.urlparse(tracking_uri).path))
    return None if "://" in tracking_uri else Path(tracking_uri)


def rebase_local_store(tracking_uri: str, home: Path) -> str:
    """``tracking_uri`` with the relative path of a local store made relative to ``home`` (absolute)."""
    path = local_store_path(tracking_uri)
    if path is None or path.is_absolute():
        return tracking_uri
    if tracking_uri.startswith("sqlite:"):
        query = tracking_uri.partition("?")[2]
        return f"sqlite:///{home / path}" + (f"?{query}" if query else "")
    if tracking_uri.startswith("file:"):
        return (home / path).as_uri()
    return str(home / path)


def is_file_store(tracking_uri: str) -> bool:
    """True for MLflow's file store: a ``file:`` URI or a plain path (``mlruns``, ``./mlruns``)."""
    if tracking_uri.startswith("databricks"):
        return False
    return urllib.parse.urlparse(tracking_uri).scheme in ("", "file")


def file_store_allowed() -> bool:
    """Whether the installed MLflow opens a file store: recent versions refuse one unless
    ``MLFLOW_ALLOW_FILE_STORE`` is true (MLflow's own variable, read as MLflow reads it)."""
    allow = getattr(mlflow.environment_variables, "MLFLOW_ALLOW_FILE_STORE", None)
    if allow is None:  # an MLflow from before the refusal
        return True
    try:
        return bool(allow.get())
    except ValueError:  # not one of true, false, 1, 0: MLflow would refuse the store too
        return False


def check_file_store(tracking_uri: str, setting: str) -> None:
    """Refuse a file store the installed MLflow would refuse (:func:`file_store_allowed`), naming ``setting``
    (``--tracking-uri``, ``MLFLOW_TRACKING_URI`` or ``tracking.tracking_uri``) and the two ways on.

    Raises
    ------
    ConfigError
        If ``tracking_uri`` is a file store and ``MLFLOW_ALLOW_FILE_STORE`` is not true.
    """
    if not is_file_store(tracking_uri) or file_store_allowed():
        return
    example = {"--tracking-uri": "--tracking-uri sqlite:///mlruns.db",
               "MLFLOW_TRACKING_URI": "MLFLOW_TRACKING_URI=sqlite:///mlruns.db"}.get(
        setting, "tracking.tracking_uri: sqlite:///mlruns.db")
    raise ConfigError(f"{setting} {tracking_uri} is an MLflow file store, which MLflow {mlflow.__version__} refuses "
                      f"unless MLFLOW_ALLOW_FILE_STORE=true: use a database store ({example}; `mlflow "
                      "migrate-filestore` moves existing runs into one), or set MLFLOW_ALLOW_FILE_STORE=true to "
                      "keep the file store")


def resolve_tracking_uri(config: TrackingConfig, override: str | None = None) -> str:
    """The tracking URI to use: ``override`` (the CLI flag), else ``MLFLOW_TRACKING_URI``, else the config.

    A relative path of a local store resolves against ``HYDROSEQ_HOME`` when it is set.

    Raises
    ------
    ConfigError
        If it names a file store that the installed MLflow refuses (:func:`check_file_store`).
    """
    if override:
        uri, setting = override, "--tracking-uri"
    elif os.environ.get("MLFLOW_TRACKING_URI"):
        uri, setting = os.environ["MLFLOW_TRACKING_URI"], "MLFLOW_TRACKING_URI"
    else:
        uri, setting = config.tracking_uri, "tracking.tracking_uri"
    check_file_store(uri, setting)
    home = data_home()
    return rebase_local_store(uri, home) if home else uri


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
    client = MlflowClient(uri, registry_uri=os.environ.get("MLFLOW_REGISTRY_URI") or uri)
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
