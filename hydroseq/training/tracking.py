"""MLflow helpers: which store to use, the experiment, params from a config, provenance tags.

The default store is a local SQLite file (``sqlite:///mlruns.db``) with artifacts in a local folder
(``mlartifacts``), both in the data directory ``HYDROSEQ_HOME`` (default: the working directory):
relative store and artifact paths resolve against it. The store: ``--tracking-uri`` >
``MLFLOW_TRACKING_URI`` > ``tracking.tracking_uri`` (a server then decides where artifacts go); the
artifact root of a new experiment in a local store: ``hydroseq train --artifact-root`` (which sets
the variable) > ``HYDROSEQ_ARTIFACT_ROOT`` > ``tracking.artifact_root``.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")  # no internet here; telemetry would try it

import mlflow
from mlflow.entities import Dataset, DatasetInput, InputTag
from mlflow.exceptions import MlflowException
from mlflow.utils.mlflow_tags import MLFLOW_DATASET_CONTEXT, MLFLOW_GIT_COMMIT

import hydroseq.training.store as store
from hydroseq.config import TrackingConfig
from hydroseq.config.stores import data_home, resolve_tracking_uri
from hydroseq.dataset import StationData
from hydroseq.errors import ConfigError
from hydroseq.training.checkpoint import Checkpoint

MAX_PARAM_LENGTH = 6000  # MLflow's limit on a param value
BEST_CHECKPOINT_ARTIFACT = "checkpoints"  # artifact folder holding a run's best checkpoint
ARTIFACT_ROOT_VARIABLE = "HYDROSEQ_ARTIFACT_ROOT"
GIT_COMMIT_TAG = MLFLOW_GIT_COMMIT  # mlflow.source.git.commit: the commit MLflow's UI shows and links
MAX_DIGEST_LENGTH = 36  # MLflow's limit on a dataset digest


def resolve_artifact_root(config: TrackingConfig) -> Path:
    """The absolute artifact root of a new experiment in a local store: ``HYDROSEQ_ARTIFACT_ROOT``,
    else ``config.artifact_root``; a relative one resolves against ``HYDROSEQ_HOME`` (default: the
    working directory)."""
    root = Path(os.environ.get(ARTIFACT_ROOT_VARIABLE) or config.artifact_root)
    return ((data_home() or Path.cwd()) / root).resolve()


def is_local_store(tracking_uri: str) -> bool:
    """True for a SQLite or file store, where this process chooses the artifact location."""
    return tracking_uri.startswith(("sqlite:", "file:")) or "://" not in tracking_uri


@contextlib.contextmanager
def use_tracking_uri(tracking_uri: str) -> Iterator[None]:
    """Point MLflow's fluent API at ``tracking_uri`` for the block, then restore the previous target.

    ``mlflow.set_tracking_uri`` also writes ``MLFLOW_TRACKING_URI`` into the environment; left
    there, it would override the next config's store in the same process (tests, notebooks).
    """
    previous_env = os.environ.get("MLFLOW_TRACKING_URI")
    previous_uri = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(tracking_uri)
    try:
        yield
    finally:
        mlflow.set_tracking_uri(previous_uri)
        if previous_env is None:
            os.environ.pop("MLFLOW_TRACKING_URI", None)
        else:
            os.environ["MLFLOW_TRACKING_URI"] = previous_env


def ensure_experiment(config: TrackingConfig, tracking_uri: str) -> str:
    """The id of ``config.experiment`` in the store ``tracking_uri``, creating it if needed.

    With a local store a new experiment's artifacts go to :func:`resolve_artifact_root` (an
    existing experiment keeps the location it was made with). A fresh SQLite store is created
    under a file lock, and a locked one retried (:func:`hydroseq.training.store.open_experiment`).
    """
    location = resolve_artifact_root(config).as_uri() if is_local_store(tracking_uri) else None
    return store.open_experiment(config, tracking_uri, location)


def flatten_params(values: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """Flatten a nested config dict into dotted keys with string values (MLflow params)."""
    flat: dict[str, str] = {}
    for key, value in values.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten_params(value, f"{name}."))
        else:
            flat[name] = str(value)[:MAX_PARAM_LENGTH]
    return flat


def git_commit(repo: str | Path | None = None) -> str:
    """The current commit of the code (with ``-dirty`` if there are uncommitted changes), or ``unknown``."""
    cwd = Path(repo) if repo else Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True,
                                check=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd,
                               capture_output=True, text=True, check=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{commit}-dirty" if dirty else commit


def dataset_input(path: Path, station_data: StationData) -> DatasetInput:
    """The ingested file as a run's training input: a dataset of source type ``local`` (its absolute path)
    whose digest is the start of its ``dataset_checksum`` and whose profile holds the whole checksum,
    the stations and the grid steps."""
    checksum = station_data.checksum
    profile = {"dataset_checksum": checksum, "stations": station_data.n_stations, "time_steps": station_data.n_times}
    dataset = Dataset(name=path.name, digest=checksum[:MAX_DIGEST_LENGTH], source_type="local",
                      source=json.dumps({"uri": str(path.resolve())}), profile=json.dumps(profile))
    return DatasetInput(dataset, tags=[InputTag(MLFLOW_DATASET_CONTEXT, "training")])


def where_to_look(tracking_uri: str) -> str:
    """A one-line hint telling the user how to browse the runs of ``tracking_uri``."""
    if tracking_uri.startswith(("http://", "https://")):
        return f"open {tracking_uri} in a browser"
    return f"mlflow ui --backend-store-uri {tracking_uri}"


def ingest_report(data_path: str | Path) -> str:
    """A YAML summary of how the dataset was made: its global attributes and per-station coverage.

    It is built from the dataset itself, NetCDF file or Zarr store (``source_files``,
    ``ingest_config``, ``dataset_checksum`` and the ``coverage_*`` variables of
    ``docs/dataset-format.md``), so it exists for any ingested dataset.
    """
    import json

    import yaml

    from hydroseq.ingested import open_ingested

    dataset, _ = open_ingested(data_path)
    with dataset:
        attrs = {key: value for key, value in dataset.attrs.items() if key != "ingest_config"}
        if isinstance(attrs.get("source_files"), str):
            try:
                attrs["source_files"] = json.loads(attrs["source_files"])
            except ValueError:
                pass
        coverage = {name.removeprefix("coverage_"): {str(s): round(float(v), 4) for s, v in
                                                     zip(dataset["station"].values, dataset[name].values, strict=True)}
                    for name in map(str, dataset.data_vars) if name.startswith("coverage_")}
        report = {"file": str(data_path), "attributes": {k: _plain(v) for k, v in attrs.items()},
                  "coverage": coverage, "ingest_config": dataset.attrs.get("ingest_config", "")}
    return yaml.safe_dump(report, sort_keys=False, allow_unicode=True)


def _plain(value: Any) -> Any:
    """NetCDF attribute values (numpy scalars and arrays) as plain YAML-able values."""
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


def load_run_checkpoint(run_id: str, tracking_uri: str | None = None) -> tuple[Checkpoint, Any]:
    """The best checkpoint of a tracked run, and the MLflow run (for its tags).

    ``tracking_uri`` defaults to ``MLFLOW_TRACKING_URI``, else the default local store (under
    ``HYDROSEQ_HOME``). The store is only read: one that does not exist is an error, not created.

    Raises
    ------
    ConfigError
        If the store does not exist, the run is not in it or has no checkpoint artifact (its
        training did not finish).
    """
    uri = resolve_tracking_uri(TrackingConfig(), tracking_uri)
    client = store.open_existing(uri)
    try:
        run = client.get_run(run_id)
    except MlflowException:
        raise ConfigError(f"run {run_id!r} not found in the MLflow store {uri}; name the store it was "
                          "tracked in with --tracking-uri, MLFLOW_TRACKING_URI or HYDROSEQ_HOME") from None
    with tempfile.TemporaryDirectory() as tmp:
        try:
            local = Path(client.download_artifacts(run_id, BEST_CHECKPOINT_ARTIFACT, tmp))
        except (MlflowException, OSError):
            local = Path(tmp)
        found = sorted(local.glob("*.pt"))
        if not found:
            raise ConfigError(f"run {run_id} has no '{BEST_CHECKPOINT_ARTIFACT}/' artifact in {run.info.artifact_uri}: "
                              "did its training finish, and is that folder still there?")
        checkpoint = Checkpoint.load(found[0])
    return checkpoint, run
