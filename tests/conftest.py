"""Fixtures shared by several test folders.

The export and forecast tests share a real chain, made once per test run (shared by the
pytest-xdist workers): the bundled Caravan data ingested for 2011-2014 with the project's own
config, a per-step LSTM (hidden 8, 1 epoch, 3 training basins) trained and tracked in a real
MLflow SQLite store (with its pyfunc model logged and registered, as ``hydroseq train`` does), and
that run exported with ``hydroseq.export.export_model``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from filelock import FileLock

from hydroseq.config import TrainConfig, validate_config
from hydroseq.ingest import ingest
from tests.fixtures import caravan_ingest_config, shared_dir, store_uri
from tests.week_ahead import WeekAhead, week_ahead_chain

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


SEQ_LEN = 30
TRAIN_STATIONS = ["01022500", "01547700", "02064000"]
DYNAMIC = ["total_precipitation_sum", "temperature_2m_mean", "potential_evaporation_sum"]
STATIC = ["p_mean", "aridity", "frac_snow"]


@dataclass(frozen=True)
class TrainedRun:
    """A finished tiny training run."""

    run_id: str
    tracking_uri: str
    output_dir: Path
    config: TrainConfig


def ingest_caravan(out: Path, start: dt.date, end: dt.date, append: bool = False) -> Path:
    """Ingest the bundled Caravan basins with ``configs/ingest_caravan_daily.yaml`` on ``start..end``
    (appended to ``out`` with ``append``)."""
    ingest(caravan_ingest_config(start, end), out, append=append, show_progress=False)
    return out


def train_config(data_path: Path, work: Path, mode: str = "per_step") -> TrainConfig:
    """A CPU training config that runs in seconds: 3 basins, 2012 to train, hidden 8, one epoch."""
    return validate_config({
        "data": {"path": str(data_path), "dynamic_inputs": DYNAMIC, "static_inputs": STATIC,
                 "stations": TRAIN_STATIONS, "mode": mode, "seq_len": SEQ_LEN, "min_len": 5,
                 "splits": {"train": {"start": "2012-01-01", "end": "2012-12-31"},
                            "validation": {"start": "2013-01-01", "end": "2013-03-31"},
                            "test": {"start": "2013-04-01", "end": "2014-12-31"}},
                 "cache_dir": str(work / "cache")},
        "batching": {"batch_size": 64},
        "model": {"hidden_size": 8},
        "training": {"epochs": 1, "threads": 1, "output_dir": str(work / "train"), "seed": 3},
        "tracking": {"tracking_uri": store_uri(work), "artifact_root": str(work / "mlartifacts")},
    }, TrainConfig)


@pytest.fixture(scope="session")
def chain(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Ingest, train and export once per test run, shared by the xdist workers through a file lock.

    The first worker to get the lock builds everything and writes ``chain.json``; the others read it.
    """
    folder = shared_dir(tmp_path_factory)
    with FileLock(str(folder / "chain.lock")):
        done = folder / "chain.json"
        if not done.exists():
            done.write_text(json.dumps(_build_chain(folder)))
        return json.loads(done.read_text())


def _build_chain(folder: Path) -> dict[str, str]:
    from hydroseq.export import export_model
    from hydroseq.serving.pyfunc_logging import log_forecast_model
    from hydroseq.training import train

    data = ingest_caravan(folder / "caravan_daily.nc", dt.date(2011, 1, 1), dt.date(2014, 12, 31))
    config = train_config(data, folder)
    result = train(config, log_model=log_forecast_model)
    export_model(result.run_id, seq_len=SEQ_LEN, out_dir=folder / "model", tracking_uri=result.tracking_uri)
    return {"data": str(data), "run_id": result.run_id, "tracking_uri": result.tracking_uri,
            "output_dir": str(result.output_dir), "config": config.model_dump_json(), "model": str(folder / "model")}


@pytest.fixture(scope="session")
def ingested(chain: dict[str, str]) -> Path:
    """The bundled Caravan data, ingested for the local days 2011-01-01 .. 2014-12-31 (read only)."""
    return Path(chain["data"])


@pytest.fixture(scope="session")
def trained(chain: dict[str, str]) -> TrainedRun:
    """A real, tracked training run on ``ingested`` (per-step, 3 basins, hidden 8, 1 epoch)."""
    config = TrainConfig.model_validate_json(chain["config"])
    return TrainedRun(chain["run_id"], chain["tracking_uri"], Path(chain["output_dir"]), config)


@pytest.fixture(scope="session")
def exported(chain: dict[str, str]) -> Path:
    """``trained`` exported with N = 30 by run id (read only)."""
    return Path(chain["model"])


EditCopy = Callable[[Path, Path, Callable[[xr.Dataset], None]], Path]


def _edited_copy(source: Path, target: Path, edit: Callable[[xr.Dataset], None]) -> Path:
    with xr.open_dataset(source) as dataset:
        copy = dataset.load()
    edit(copy)
    copy.to_netcdf(target)
    return target


@pytest.fixture(scope="session")
def edited_copy() -> EditCopy:
    """``edited_copy(source, target, edit)``: a copy of an ingested file after ``edit(dataset)``."""
    return _edited_copy


@pytest.fixture(scope="session")
def grid_index() -> Callable[[Path, str], int]:
    """``grid_index(path, label)``: position of a UTC grid label (``2014-06-01T08:00``) in a file."""
    def index(path: Path, label: str) -> int:
        with xr.open_dataset(path) as dataset:
            return int(np.flatnonzero(dataset["time"].values == np.datetime64(label, "ns"))[0])
    return index


@pytest.fixture(scope="session")
def week_ahead(tmp_path_factory: pytest.TempPathFactory) -> WeekAhead:
    """A 7-lead (daily) quantile model reading ingested 7-day weather forecasts, trained, exported and run: its
    forecasts, hindcast and pages (:mod:`tests.week_ahead`; read only)."""
    return week_ahead_chain(tmp_path_factory)
