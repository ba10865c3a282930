"""Fixtures of the benchmark tests: the real ingested Caravan file, made once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.compare import ingest_dataset


@pytest.fixture(scope="session")
def caravan_nc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 31 bundled Caravan basins ingested by ``hydroseq ingest`` (real data, about 3 s)."""
    path, _ = ingest_dataset(tmp_path_factory.mktemp("bench_ingest"))
    return path
