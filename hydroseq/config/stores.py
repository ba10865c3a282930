"""Which MLflow store a command uses: ``--tracking-uri`` > ``MLFLOW_TRACKING_URI`` > ``tracking.tracking_uri``.

The default store is a local SQLite file (``sqlite:///mlruns.db``) in the data directory
``HYDROSEQ_HOME`` (default: the working directory): a relative store path resolves against it.
Training (:mod:`hydroseq.training.tracking`) and the registry (:mod:`hydroseq.serving.stores`) both
resolve their store here. Only :func:`file_store_allowed` asks MLflow (imported there, so that
reading a config never loads it).
"""

from __future__ import annotations

import os
import urllib.parse
from pathlib import Path

from hydroseq.config.tracking import TrackingConfig
from hydroseq.errors import ConfigError

HOME_VARIABLE = "HYDROSEQ_HOME"  # the data directory of the default store and artifacts


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
    import mlflow.environment_variables

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
    import mlflow

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
