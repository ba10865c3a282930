"""Fixtures of the dataset tests.

``small_nc`` is a NetCDF written to the ingest contract (docs/dataset-format.md) straight from a
few real Caravan CSVs by ``tests.fixtures``, so these unit tests do not depend on the ingest stage.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hydroseq.config import DataConfig, Splits
from hydroseq.dataset import StationData
from hydroseq.grid import GridSpec
from tests.fixtures import small_caravan_config, write_small_caravan


@pytest.fixture(scope="session")
def small_nc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four real Caravan basins, 1981-2014, written to the ingest contract."""
    return write_small_caravan(tmp_path_factory.mktemp("small") / "small.nc")


def synthetic_station_data(dynamic: np.ndarray, target: np.ndarray, static: np.ndarray | None = None,
                           start: str = "1990-01-01") -> StationData:
    """Daily ``StationData`` from arrays (UTC grid, days labelled at their end), for property tests."""
    n_stations, n_times = target.shape
    days = pd.date_range(start, periods=n_times, freq="D") + pd.Timedelta(days=1)
    static = np.zeros((n_stations, 0), np.float32) if static is None else static
    return StationData(
        path=Path("synthetic.nc"), station_ids=tuple(f"s{i}" for i in range(n_stations)),
        times=days.values.astype("datetime64[ns]"), dynamic=np.ascontiguousarray(dynamic, dtype=np.float32),
        target=np.ascontiguousarray(target, dtype=np.float32), static=static.astype(np.float32),
        dynamic_names=tuple(f"x{i}" for i in range(dynamic.shape[-1])),
        static_names=tuple(f"a{i}" for i in range(static.shape[-1])), target_name="q",
        checksum=hashlib.sha256(dynamic.tobytes() + target.tobytes()).hexdigest(), grid=GridSpec("1D"))


def synthetic_config(n_times: int, start: str = "1990-01-01", **overrides) -> DataConfig:
    """A config over a synthetic daily record: train = first half, validation, test = the rest."""
    days = pd.date_range(start, periods=n_times, freq="D")
    half, three_quarters = n_times // 2, (3 * n_times) // 4
    splits = Splits.model_validate({
        "train": {"start": days[0].date(), "end": days[half - 1].date()},
        "validation": {"start": days[half].date(), "end": days[three_quarters - 1].date()},
        "test": {"start": days[three_quarters].date(), "end": days[-1].date()},
    })
    fields = {"dynamic_inputs": ["x0"], "splits": splits, "seq_len": 20, "min_len": 3}
    fields.update(overrides)
    return DataConfig.model_validate(fields)


@pytest.fixture(scope="session")
def synthetic() -> tuple:
    """``(synthetic_station_data, synthetic_config)`` builders (importlib mode cannot import conftest)."""
    return synthetic_station_data, synthetic_config


@pytest.fixture(scope="session")
def contract_writer():
    """``write_small_caravan(path, stations, transform=None)``, for tests that need a modified small file."""
    return write_small_caravan


@pytest.fixture
def data_config(tmp_path: Path):
    """``small_caravan_config`` bound to a fresh cache folder: ``data_config(mode="sequence", ...)``."""
    return lambda **overrides: small_caravan_config(cache_dir=tmp_path / "cache", **overrides)


@pytest.fixture(scope="session")
def make_config():
    """``small_caravan_config`` itself, for module-scoped fixtures (no cache folder unless given)."""
    return small_caravan_config
