"""Fixtures of the batching tests: the dataset tests' small file and config, and the real ingested file.

``small_nc`` is written to the ingest contract straight from a few real Caravan CSVs by
``tests.fixtures``; ``caravan_nc`` is the real ingested file, made once per session by
``hydroseq.ingest.ingest``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hydroseq.config import IngestConfig, load_config
from hydroseq.ingest import ingest
from tests.fixtures import small_caravan_config, write_small_caravan

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def small_nc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four real Caravan basins, 1981-2014, written to the ingest contract."""
    return write_small_caravan(tmp_path_factory.mktemp("small") / "small.nc")


@pytest.fixture(scope="session")
def make_config():
    """``small_caravan_config`` itself: ``make_config(mode="sequence", ...)`` (no cache folder unless given)."""
    return small_caravan_config


@pytest.fixture(scope="session")
def caravan_nc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 31 bundled basins ingested by the real ingest stage with ``configs/ingest_caravan_daily.yaml``."""
    out = tmp_path_factory.mktemp("caravan") / "caravan_daily.nc"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(REPO_ROOT)  # the config's paths are relative to the project root
        ingest(load_config(REPO_ROOT / "configs" / "ingest_caravan_daily.yaml", IngestConfig), out,
               show_progress=False)
    return out
