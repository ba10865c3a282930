"""Fixtures of the training tests: a small real-data NetCDF (ingest contract) and tiny train configs.

The NetCDF is written straight from the bundled Caravan CSVs (3 basins, 1981-1988), so these tests do
not depend on the ingest stage; the MLflow store is a real SQLite file in a temporary folder.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from hydroseq.config import TrainConfig
from hydroseq.grid import GridSpec

REPO_ROOT = Path(__file__).resolve().parents[2]
CARAVAN_DIR = REPO_ROOT / "data" / "daily_caravan_camels_us"
STATIONS = ["01022500", "02064000", "03015500"]
DYNAMIC = ["total_precipitation_sum", "temperature_2m_mean", "potential_evaporation_sum"]
STATIC = ["p_mean", "aridity"]
LAST_DAY = "1988-12-31"


def write_small_netcdf(path: Path) -> Path:
    """Write the Caravan CSVs of ``STATIONS`` up to ``LAST_DAY`` as an ingested file (UTC days)."""
    frames = {s: pd.read_csv(CARAVAN_DIR / f"{s}.csv", parse_dates=["date"]).query("date <= @LAST_DAY")
              for s in STATIONS}
    days = pd.DatetimeIndex(frames[STATIONS[0]]["date"])
    attributes = pd.read_csv(CARAVAN_DIR / "attributes.csv", dtype={"gauge_id": str}).set_index("gauge_id")
    data_vars = {name: (("station", "time"), np.stack([frames[s][name].to_numpy(np.float32) for s in STATIONS]),
                        {"units": "mm", "hydroseq_role": "dynamic"}) for name in [*DYNAMIC, "streamflow"]}
    data_vars.update({name: (("station",), attributes.loc[STATIONS, name].to_numpy(np.float32),
                             {"hydroseq_role": "static"}) for name in STATIC})
    data_vars["coverage_streamflow"] = (("station",), np.ones(len(STATIONS), np.float32), {"hydroseq_role": "coverage"})
    checksum = hashlib.sha256(b"".join(np.ascontiguousarray(v[1]).tobytes() for v in data_vars.values()))
    dataset = xr.Dataset(
        data_vars, coords={"station": np.array(STATIONS, dtype=object),
                           "time": (days + pd.Timedelta(days=1)).values.astype("datetime64[ns]")},
        attrs={"Conventions": "CF-1.8", "featureType": "timeSeries", **GridSpec("1D").to_attrs(),
               "dataset_checksum": checksum.hexdigest(), "source_files": "[]", "ingest_config": "test fixture"})
    dataset.to_netcdf(path, engine="netcdf4", encoding={"time": {"units": "hours since 1970-01-01"}})
    return path


@pytest.fixture(scope="session")
def small_nc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three real Caravan basins, 1981-1988, written to the ingest contract."""
    return write_small_netcdf(tmp_path_factory.mktemp("training_data") / "small.nc")


def tiny_config(tmp: Path, data_path: Path, mode: str = "per_step", **training) -> TrainConfig:
    """A config that trains in seconds: hidden 8, short sequences, 1981-1984 / 1985-1986 / 1987-1988."""
    data = {"path": str(data_path), "dynamic_inputs": DYNAMIC, "static_inputs": STATIC, "mode": mode,
            "max_len": 60 if mode == "per_step" else 30, "min_len": 10, "cache_dir": str(tmp / "cache"),
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
        "tracking": {"tracking_uri": f"sqlite:///{tmp / 'mlruns.db'}", "artifact_root": str(tmp / "artifacts"),
                     "experiment": "tests"},
    })


@pytest.fixture(scope="session")
def make_config():
    """:func:`tiny_config`, for tests that need several variants."""
    return tiny_config
