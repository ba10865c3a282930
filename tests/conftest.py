"""Fixtures shared by every test folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = REPO_ROOT / "data"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The project's root folder (configs in ``configs/`` use paths relative to it)."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The bundled real data."""
    return DATA_DIR
