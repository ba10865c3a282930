"""Fixtures of the scale-out tests: one real dask LocalCluster (2 worker processes) shared by the
module, and the bundled ingest configs with their paths made absolute."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hydroseq.config import IngestConfig, load_config

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

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        yield cluster.scheduler_address
