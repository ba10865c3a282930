"""Fixtures of the experiments' tests (``make bench-test``; not part of ``make test``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from experiments.compare import ingest_dataset
from experiments.protocol import REPO_ROOT

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The project's root folder (configs in ``configs/`` use paths relative to it)."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def caravan_nc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 31 bundled Caravan basins ingested by ``hydroseq ingest`` (real data, about 3 s)."""
    path, _ = ingest_dataset(tmp_path_factory.mktemp("bench_ingest"))
    return path
