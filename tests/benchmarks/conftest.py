"""Fixtures of the benchmark tests: the real ingested Caravan file, made once per session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# `benchmarks` is a folder of the repository, not an installed package (pytest runs with
# --import-mode=importlib, which does not put the root on sys.path).
REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks.compare import ingest_dataset  # noqa: E402


@pytest.fixture(scope="session")
def caravan_nc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 31 bundled Caravan basins ingested by ``hydroseq ingest`` (real data, about 3 s)."""
    path, _ = ingest_dataset(tmp_path_factory.mktemp("bench_ingest"))
    return path
