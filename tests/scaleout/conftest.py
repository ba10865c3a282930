"""Fixtures of the scale-out tests: one real dask LocalCluster (2 worker processes), the bundled
ingest configs with their paths made absolute, a small really-ingested dataset and tiny train configs."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from hydroseq.config import IngestConfig, TrainConfig, load_config
from tests.fixtures import store_uri

REPO_ROOT = Path(__file__).resolve().parents[2]


def bundled_ingest_config(name: str, **changes: object) -> IngestConfig:
    """``configs/<name>`` with every data path made absolute (tests run from any directory)."""
    config = load_config(REPO_ROOT / "configs" / name, IngestConfig)
    stations = config.stations.model_copy(update={"path": REPO_ROOT / config.stations.path})
    sources = [source.model_copy(update={"path": str(REPO_ROOT / source.path)}) for source in config.sources]
    return config.model_copy(update={"stations": stations, "sources": sources, **changes})


@pytest.fixture(scope="session")
def ingest_config():
    """:func:`bundled_ingest_config` (importlib mode cannot import conftest from a test module)."""
    return bundled_ingest_config


@pytest.fixture(scope="session")
def dask_cluster() -> Iterator[str]:
    """The address of a real LocalCluster with 2 single-threaded worker processes."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        yield cluster.scheduler_address


TRAIN_STATIONS = ["01022500", "02064000", "03015500"]


@pytest.fixture(scope="session")
def small_ingested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three real Caravan basins, 1981-1986, written by the real (serial) ingest."""
    from hydroseq.ingest import ingest

    config = bundled_ingest_config("ingest_caravan_daily.yaml")
    config = config.model_copy(update={
        "stations": config.stations.model_copy(update={"ids": TRAIN_STATIONS}),
        "grid": config.grid.model_copy(update={"end": dt.date(1986, 12, 31)})})
    return ingest(config, tmp_path_factory.mktemp("scaleout_data") / "small.nc", show_progress=False).output


def small_train_config(tmp: Path, data_path: Path, *, batching: dict | None = None, **training: object) -> TrainConfig:
    """A config that trains in seconds on :func:`small_ingested`: hidden 8, 60-day chunks,
    1981-1984 train, 1985 validation, 1986 test; MLflow in a SQLite file under ``tmp``."""
    return TrainConfig.model_validate({
        "data": {"path": str(data_path), "dynamic_inputs": ["total_precipitation_sum", "temperature_2m_mean"],
                 "static_inputs": ["p_mean", "aridity"], "mode": "per_step", "seq_len": 60, "min_len": 10,
                 "cache_dir": str(tmp / "cache"),
                 "splits": {"train": {"start": "1981-01-01", "end": "1984-12-31"},
                            "validation": {"start": "1985-01-01", "end": "1985-12-31"},
                            "test": {"start": "1986-01-01", "end": "1986-12-31"}}},
        "batching": {"strategy": "random", "batch_size": 8, **(batching or {})},
        "model": {"hidden_size": 8, "dropout": 0.0},
        "training": {"epochs": 3, "learning_rate": 0.01, "seed": 5, "device": "cpu", "threads": 1,
                     "output_dir": str(tmp / "out"), "log_every": 1, **training},
        "tracking": {"tracking_uri": store_uri(tmp), "artifact_root": str(tmp / "artifacts"),
                     "experiment": "scaleout"},
    })


@pytest.fixture(scope="session")
def train_config():
    """:func:`small_train_config`."""
    return small_train_config
