"""Fixtures of the dataset/batching tests.

``small_nc`` is a NetCDF written to the ingest contract (docs/dataset-format.md) straight from a
few real Caravan CSVs, so these unit tests do not depend on the ingest stage. ``caravan_nc`` is
the real ingested file, made once per session by ``hydroseq.ingest.ingest``.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from hydroseq.config import DataConfig, Splits, TrainConfig, load_config
from hydroseq.dataset import StationData
from hydroseq.grid import GridSpec

REPO_ROOT = Path(__file__).resolve().parents[2]
CARAVAN_DIR = REPO_ROOT / "data" / "daily_caravan_camels_us"
SMALL_STATIONS = ["01022500", "01547700", "02064000", "03015500"]
DYNAMIC = ["total_precipitation_sum", "temperature_2m_mean", "potential_evaporation_sum"]
STATIC = ["p_mean", "aridity", "frac_snow", "area_km2"]
GRID = GridSpec("1D", "Etc/GMT+8")


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
        attrs={"Conventions": "CF-1.8", "featureType": "timeSeries", **GRID.to_attrs(),
               "dataset_checksum": checksum.hexdigest()},
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
    previous = Path.cwd()
    os.chdir(REPO_ROOT)  # the config's paths are relative to the project root
    try:
        ingest_module.ingest(load_config(config_path, IngestConfig), out, show_progress=False)
    finally:
        os.chdir(previous)
    return out


@pytest.fixture(scope="session")
def per_step_config() -> TrainConfig:
    """The bundled per-step train config."""
    return load_config(REPO_ROOT / "configs" / "train_caravan_per_step.yaml", TrainConfig)


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
    fields = {"dynamic_inputs": ["x0"], "splits": splits, "max_len": 20, "min_len": 3}
    fields.update(overrides)
    return DataConfig.model_validate(fields)


@pytest.fixture(scope="session")
def synthetic() -> tuple:
    """``(synthetic_station_data, synthetic_config)`` builders (importlib mode cannot import conftest)."""
    return synthetic_station_data, synthetic_config


@pytest.fixture(scope="session")
def contract_writer():
    """``write_contract_netcdf`` (see above) for tests that need a modified copy of the small file."""
    return write_contract_netcdf


@pytest.fixture
def data_config(tmp_path: Path):
    """``make_data_config`` bound to a fresh cache folder: ``data_config(mode="sequence", ...)``."""
    return lambda **overrides: make_data_config(cache_dir=tmp_path / "cache", **overrides)


@pytest.fixture(scope="session")
def make_config():
    """``make_data_config`` itself, for module-scoped fixtures (no cache folder unless given)."""
    return make_data_config
