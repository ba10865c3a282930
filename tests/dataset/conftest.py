"""Fixtures of the dataset/batching tests.

``small_nc`` is a NetCDF written to the ingest contract (docs/dataset-format.md) straight from a
few real Caravan CSVs, so these unit tests do not depend on the ingest stage. ``caravan_nc`` is
the real ingested file, made once per session by ``hydroseq.ingest.ingest``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from hydroseq.config import DataConfig, Splits, TrainConfig, load_config

REPO_ROOT = Path(__file__).resolve().parents[2]
CARAVAN_DIR = REPO_ROOT / "data" / "daily_caravan_camels_us"
SMALL_STATIONS = ["01022500", "01547700", "02064000", "03015500"]
DYNAMIC = ["total_precipitation_sum", "temperature_2m_mean", "potential_evaporation_sum"]
STATIC = ["p_mean", "aridity", "frac_snow", "area_km2"]
GRID_TIMEZONE = "Etc/GMT+8"


def write_contract_netcdf(path: Path, stations: list[str], transform=None) -> Path:
    """Write the Caravan CSVs of ``stations`` as an ingested file (local day D labelled D+1 08:00 UTC).

    ``transform(frames)`` may edit the per-station DataFrames (e.g. punch gaps) before writing.
    """
    frames = {station: pd.read_csv(CARAVAN_DIR / f"{station}.csv", parse_dates=["date"]) for station in stations}
    if transform is not None:
        transform(frames)
    days = pd.DatetimeIndex(frames[stations[0]]["date"])
    times = (days + pd.Timedelta(days=1) + pd.Timedelta(hours=8)).values.astype("datetime64[ns]")
    attributes = pd.read_csv(CARAVAN_DIR / "attributes.csv", dtype={"gauge_id": str}).set_index("gauge_id")
    data_vars = {}
    for name in [*DYNAMIC, "streamflow"]:
        values = np.stack([frames[s][name].to_numpy(dtype=np.float32) for s in stations])
        data_vars[name] = (("station", "time"), values, {"units": "mm", "hydroseq_role": "dynamic"})
    for name in STATIC:
        if name == "area_km2":
            continue
        values = attributes.loc[stations, name].to_numpy(dtype=np.float32)
        data_vars[name] = (("station",), values, {"hydroseq_role": "static"})
    checksum = hashlib.sha256(b"".join(np.ascontiguousarray(v[1]).tobytes() for v in data_vars.values()))
    dataset = xr.Dataset(
        data_vars,
        coords={"station": np.array(stations, dtype=object), "time": times,
                "area_km2": ("station", attributes.loc[stations, "area_km2"].to_numpy(dtype=np.float64))},
        attrs={"Conventions": "CF-1.8", "featureType": "timeSeries", "grid_frequency": "1D",
               "grid_timezone": GRID_TIMEZONE, "grid_day_boundary": "00:00",
               "time_label_convention": "interval_end", "dataset_checksum": checksum.hexdigest()},
    )
    dataset.to_netcdf(path, engine="netcdf4", encoding={"time": {"units": "hours since 1970-01-01"}})
    return path


def make_data_config(cache_dir: Path | None = None, **overrides) -> DataConfig:
    """The tests' default data config: train 1981-1995, validation 1996-2004, test 2005-2014."""
    splits = Splits.model_validate({
        "train": {"start": "1981-01-01", "end": "1995-12-31"},
        "validation": {"start": "1996-01-01", "end": "2004-12-31"},
        "test": {"start": "2005-01-01", "end": "2014-12-31"},
    })
    fields = {"dynamic_inputs": DYNAMIC, "static_inputs": STATIC, "splits": splits, "max_len": 365,
              "min_len": 30, "cache_dir": cache_dir or Path(".hydroseq_cache")}
    fields.update(overrides)
    return DataConfig.model_validate(fields)


@pytest.fixture(scope="session")
def small_nc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four real Caravan basins, 1981-2014, written to the ingest contract."""
    return write_contract_netcdf(tmp_path_factory.mktemp("small") / "small.nc", SMALL_STATIONS)


@pytest.fixture(scope="session")
def caravan_nc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 31 bundled basins ingested by the real ingest stage (skipped until it exists)."""
    ingest_module = pytest.importorskip("hydroseq.ingest")
    config_path = REPO_ROOT / "configs" / "ingest_caravan_daily.yaml"
    if not config_path.exists():
        pytest.skip("configs/ingest_caravan_daily.yaml not written yet")
    from hydroseq.config import IngestConfig

    out = tmp_path_factory.mktemp("caravan") / "caravan_daily.nc"
    ingest_module.ingest(load_config(config_path, IngestConfig), out)
    return out


@pytest.fixture(scope="session")
def per_step_config() -> TrainConfig:
    """The bundled per-step train config."""
    return load_config(REPO_ROOT / "configs" / "train_caravan_per_step.yaml", TrainConfig)
