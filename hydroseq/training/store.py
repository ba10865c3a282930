"""The MLflow store shared by concurrent jobs: created once, retried while locked, each metric once.

A fresh SQLite store is created (MLflow's schema migrations) and the experiment looked up or made
under a file lock beside the database (``<db>.lock``), so jobs started together do not run the
migrations side by side. A store that another process holds locked is retried with a doubling
wait (``tracking.store_lock_retries`` / ``store_lock_backoff_s``), then given up with one line
naming the store. Metrics are logged through :func:`log_new_metrics`, which skips every
(metric, step) the run already holds, so a resumed run never logs a step twice.

Reading a run (``evaluate``, ``export --run``) opens the store with :func:`open_existing`, which
never creates one: a local store that is not there is a :class:`~hydroseq.errors.ConfigError`
naming the URI and the path it looked at.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from filelock import FileLock, Timeout
from mlflow.entities import Metric
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from hydroseq.config import TrackingConfig
from hydroseq.config.stores import local_store_path, sqlite_file
from hydroseq.errors import ConfigError, UnavailableError

T = TypeVar("T")
STEP_KEY = "epoch"  # the key of a metrics row that gives its MLflow step
MAX_METRICS_PER_BATCH = 1000  # MLflow's limit for one log_batch


def is_lock_error(error: BaseException) -> bool:
    """True for SQLite's 'database is locked' (raised by SQLAlchemy under MLflow, or wrapped by MLflow)."""
    return type(error).__module__.split(".")[0] in ("sqlalchemy", "mlflow") and "database is locked" in str(error)


def retry_locked(tracking_uri: str, config: TrackingConfig, action: Callable[[], T]) -> T:
    """``action()``, tried again with a doubling wait while the store is locked.

    Raises
    ------
    UnavailableError
        If the store is still locked after ``config.store_lock_retries`` retries.
    """
    start = time.monotonic()
    for attempt in range(config.store_lock_retries + 1):
        try:
            return action()
        except Exception as error:
            if not is_lock_error(error):
                raise
            if attempt == config.store_lock_retries:
                raise UnavailableError(
                    f"MLflow store {tracking_uri} is locked by another process: gave up after "
                    f"{attempt + 1} tries in {time.monotonic() - start:.0f} s") from None
            time.sleep(config.store_lock_backoff_s * 2**attempt)
    raise AssertionError("unreachable")


@contextlib.contextmanager
def creation_lock(tracking_uri: str, config: TrackingConfig) -> Iterator[None]:
    """Hold ``<db>.lock`` beside a local SQLite store for the block (nothing for other stores)."""
    database = sqlite_file(tracking_uri)
    if database is None:
        yield
        return
    database.parent.mkdir(parents=True, exist_ok=True)
    patience = config.store_lock_backoff_s * (2 ** (config.store_lock_retries + 1)) + 30
    try:
        with FileLock(f"{database}.lock", timeout=patience):
            yield
    except Timeout:
        raise UnavailableError(f"MLflow store {tracking_uri}: another job held {database}.lock for more than "
                               f"{patience:.0f} s") from None


def open_experiment(config: TrackingConfig, tracking_uri: str, artifact_location: str | None) -> str:
    """The id of ``config.experiment`` in the store, creating the store and the experiment if needed."""
    def look_up_or_create() -> str:
        client = MlflowClient(tracking_uri)  # a fresh SQLite store gets its tables here
        experiment = client.get_experiment_by_name(config.experiment)
        if experiment is not None:
            return experiment.experiment_id
        try:
            return client.create_experiment(config.experiment, artifact_location=artifact_location)
        except MlflowException as error:  # made meanwhile by a job on another machine (server store)
            made_meanwhile = None if is_lock_error(error) else client.get_experiment_by_name(config.experiment)
            if made_meanwhile is None:
                raise
            return made_meanwhile.experiment_id

    with creation_lock(tracking_uri, config):
        return retry_locked(tracking_uri, config, look_up_or_create)


def open_existing(tracking_uri: str, config: TrackingConfig | None = None) -> MlflowClient:
    """A client of a store that must exist already: reading a run never creates a store.

    Raises
    ------
    ConfigError
        If ``tracking_uri`` is a local store whose file or folder does not exist.
    UnavailableError
        If the store stays locked by another process (:func:`retry_locked`).
    """
    path = local_store_path(tracking_uri)
    if path is not None and not path.exists():
        raise ConfigError(f"no MLflow store at {tracking_uri}: {path.absolute()} does not exist; name the store "
                          "the run was tracked in with --tracking-uri, MLFLOW_TRACKING_URI or HYDROSEQ_HOME")
    client = MlflowClient(tracking_uri)
    retry_locked(tracking_uri, config or TrackingConfig(), client.search_experiments)
    return client


def log_new_metrics(tracking_uri: str, run_id: str, config: TrackingConfig, rows: list[dict[str, float]]) -> None:
    """Log each row's metrics at step ``row["epoch"]``, except the (metric, step) pairs already logged."""
    if not rows:
        return
    client = MlflowClient(tracking_uri)

    def log() -> None:
        keys = {key for row in rows for key in row if key != STEP_KEY}
        logged = {(metric.key, metric.step) for key in keys for metric in client.get_metric_history(run_id, key)}
        now = int(time.time() * 1000)
        new = [Metric(key, float(value), now, int(row[STEP_KEY])) for row in rows for key, value in row.items()
               if key != STEP_KEY and (key, int(row[STEP_KEY])) not in logged]
        for first in range(0, len(new), MAX_METRICS_PER_BATCH):
            client.log_batch(run_id, metrics=new[first:first + MAX_METRICS_PER_BATCH])

    retry_locked(tracking_uri, config, log)
