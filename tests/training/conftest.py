"""Fixtures of the training tests: a small real-data NetCDF (ingest contract) and tiny train configs.

The NetCDF is written straight from the bundled Caravan CSVs (3 basins, 1981-1988) by
``tests.fixtures``, so these tests do not depend on the ingest stage; the MLflow store is a real
SQLite file in a temporary folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hydroseq.config import TrainConfig
from hydroseq.grid import GridSpec
from tests.fixtures import DYNAMIC, store_uri, write_ingested

STATIONS = ["01022500", "02064000", "03015500"]
STATIC = ["p_mean", "aridity"]
LAST_DAY = "1988-12-31"


@pytest.fixture(scope="session")
def small_nc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three real Caravan basins, 1981-1988 on a UTC daily grid, written to the ingest contract."""
    return write_ingested(tmp_path_factory.mktemp("training_data") / "small.nc", STATIONS, GridSpec("1D"), STATIC,
                          last_day=LAST_DAY)


def tiny_config(tmp: Path, data_path: Path, mode: str = "per_step", **training) -> TrainConfig:
    """A config that trains in seconds: hidden 8, short sequences, 1981-1984 / 1985-1986 / 1987-1988."""
    data = {"path": str(data_path), "dynamic_inputs": DYNAMIC, "static_inputs": STATIC, "mode": mode,
            "seq_len": 60 if mode == "per_step" else 30, "min_len": 10, "cache_dir": str(tmp / "cache"),
            "splits": {"train": {"start": "1981-01-01", "end": "1984-12-31"},
                       "validation": {"start": "1985-01-01", "end": "1986-12-31"},
                       "test": {"start": "1987-01-01", "end": "1988-12-31"}}}
    if mode == "sequence":
        data.update({"leads": [1], "lagged_target": True})
    return TrainConfig.model_validate({
        "data": data,
        "batching": {"batch_size": 64},
        "model": {"hidden_size": 8, "dropout": 0.1},
        "training": {"epochs": 2, "learning_rate": 0.01, "lr_schedule": "cosine", "seed": 3, "threads": 1,
                     "output_dir": str(tmp / "out"), "log_every": 5, **training},
        "tracking": {"tracking_uri": store_uri(tmp), "artifact_root": str(tmp / "artifacts"),
                     "experiment": "tests"},
    })


@pytest.fixture(scope="session")
def make_config():
    """:func:`tiny_config`, for tests that need several variants."""
    return tiny_config
