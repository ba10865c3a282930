"""The one writer of small ingested datasets for the tests, and the daily data config that fits its files.

:func:`write_ingested` turns a few bundled Caravan CSVs into a file that keeps the contract of
``docs/dataset-format.md``, without running the ingest stage, so the dataset, batching and
training tests do not depend on it. The conftests import this module (``from tests.fixtures
import ...``) and hand its functions to the tests as fixtures.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import xarray as xr

from hydroseq import __version__
from hydroseq.config import DataConfig, IngestConfig, Splits, TrainConfig, load_config
from hydroseq.grid import GridSpec

if TYPE_CHECKING:
    import pytest

    from hydroseq.dataset import StationData
    from hydroseq.training.checkpoint import Checkpoint

REPO_ROOT = Path(__file__).resolve().parents[1]
CARAVAN_DIR = REPO_ROOT / "data" / "daily_caravan_camels_us"
DYNAMIC = ["total_precipitation_sum", "temperature_2m_mean", "potential_evaporation_sum"]
TARGET = "streamflow"
UNITS = {"total_precipitation_sum": "mm", "temperature_2m_mean": "degC", "potential_evaporation_sum": "mm",
         TARGET: "mm"}
AREA = "area_km2"

_STORE_TEMPLATE: list[Path] = []

CARAVAN_GRID = GridSpec("1D", "Etc/GMT+8")
SMALL_STATIONS = ["01022500", "01547700", "02064000", "03015500"]
SMALL_STATIC = ["p_mean", "aridity", "frac_snow", AREA]

FramesEdit = Callable[[dict[str, pd.DataFrame]], None]


def write_ingested(path: Path, stations: Sequence[str], grid: GridSpec, static: Sequence[str], *,
                   last_day: str | None = None, transform: FramesEdit | None = None) -> Path:
    """Write the Caravan CSVs of ``stations`` as an ingested file.

    Parameters
    ----------
    path
        The NetCDF file to write.
    stations
        Caravan gauge ids, in the order of the file's ``station`` coordinate.
    grid
        The daily grid the file records; local day ``D`` of a CSV is labelled ``grid.day_end(D)``.
        Its zone must keep a fixed offset (as every daily ingest grid does).
    static
        Station attributes from ``attributes.csv`` written as static variables (``area_km2`` is
        always written, as the coordinate the contract makes it).
    last_day
        The last CSV day written (``YYYY-MM-DD``); all of them when ``None``.
    transform
        Edits the per-station DataFrames (e.g. punches gaps) before they are written.

    Returns
    -------
    ``path``.
    """
    frames = {station: pd.read_csv(CARAVAN_DIR / f"{station}.csv", parse_dates=["date"]) for station in stations}
    if last_day is not None:
        frames = {station: frame[frame["date"] <= pd.Timestamp(last_day)] for station, frame in frames.items()}
    if transform is not None:
        transform(frames)
    days = pd.DatetimeIndex(frames[stations[0]]["date"])
    labels = (grid.day_end(days[0].date()).tz_localize(None) + (days - days[0])).values.astype("datetime64[ns]")
    attributes = pd.read_csv(CARAVAN_DIR / "attributes.csv", dtype={"gauge_id": str}).set_index("gauge_id")
    rows = attributes.loc[list(stations)]
    data_vars: dict[str, tuple] = {}
    for name in [*DYNAMIC, TARGET]:
        values = np.stack([frames[station][name].to_numpy(dtype=np.float32) for station in stations])
        data_vars[name] = (("station", "time"), values, {"units": UNITS[name], "hydroseq_role": "dynamic"})
        data_vars[f"coverage_{name}"] = (("station",), np.mean(np.isfinite(values), axis=1).astype(np.float32),
                                         {"units": "1", "hydroseq_role": "coverage"})
    for name in static:
        if name != AREA:
            data_vars[name] = (("station",), rows[name].to_numpy(dtype=np.float32), {"hydroseq_role": "static"})
    checksum = hashlib.sha256(b"".join(np.ascontiguousarray(variable[1]).tobytes() for variable in data_vars.values()))
    dataset = xr.Dataset(
        data_vars,
        coords={"station": np.array(stations, dtype=object), "time": labels,
                "station_name": ("station", rows["gauge_name"].to_numpy(dtype=object)),
                "lat": ("station", rows["gauge_lat"].to_numpy(dtype=np.float64)),
                "lon": ("station", rows["gauge_lon"].to_numpy(dtype=np.float64)),
                AREA: ("station", rows[AREA].to_numpy(dtype=np.float64))},
        attrs={"Conventions": "CF-1.8", "featureType": "timeSeries", "hydroseq_version": __version__,
               **grid.to_attrs(), "source_files": json.dumps([]), "ingest_config": "written by the tests",
               "dataset_checksum": checksum.hexdigest()},
    )
    dataset.to_netcdf(path, engine="netcdf4", encoding={"time": {"units": "hours since 1970-01-01"}})
    return path


def write_small_caravan(path: Path, stations: Sequence[str] = SMALL_STATIONS,
                        transform: FramesEdit | None = None) -> Path:
    """The dataset and batching tests' file: ``stations`` (four basins by default), 1981-2014, on the
    Caravan grid (local days in ``Etc/GMT+8``, labelled at 08:00 UTC the next day)."""
    return write_ingested(path, stations, CARAVAN_GRID, SMALL_STATIC, transform=transform)


def small_caravan_config(cache_dir: Path | None = None, **overrides: object) -> DataConfig:
    """The data config over :func:`write_small_caravan`'s file: train 1981-1995, validation 1996-2004,
    test 2005-2014; ``overrides`` replace its fields."""
    splits = Splits.model_validate({
        "train": {"start": "1981-01-01", "end": "1995-12-31"},
        "validation": {"start": "1996-01-01", "end": "2004-12-31"},
        "test": {"start": "2005-01-01", "end": "2014-12-31"},
    })
    fields = {"dynamic_inputs": DYNAMIC, "static_inputs": SMALL_STATIC, "splits": splits, "seq_len": 365,
              "min_len": 30, "cache_dir": cache_dir or Path(".hydroseq_cache")}
    fields.update(overrides)
    return DataConfig.model_validate(fields)


def add_forecast_variable(source: Path, path: Path, name: str, observed: str, horizon: int, *,
                          latency_hours: float = 6.0, relative_noise: float = 0.0, seed: int = 0,
                          missing_issues: Sequence[int] = ()) -> Path:
    """Copy the ingested file ``source`` to ``path`` with a forecast variable ``name`` added.

    ``name`` has the layout an ingest forecast source writes (``docs/dataset-format.md``):
    ``(station, time, lead)`` with lead l at issue t = the observed ``observed`` at t + l (NaN past
    the end) times a lognormal factor of spread ``relative_noise``, and ``<name>_reference_time``
    = the issue label minus ``latency_hours`` (the product published just in time). At the issue
    steps ``missing_issues`` no product is valid: values NaN, reference time NaT. Generated from
    observations: not a real forecast.
    """
    with xr.open_dataset(source) as opened:
        dataset = opened.load()
    series = dataset[observed].transpose("station", "time").values.astype(np.float32)
    n_times = series.shape[1]
    values = np.full((*series.shape, horizon), np.nan, np.float32)
    for lead in range(1, horizon + 1):
        values[:, : n_times - lead, lead - 1] = series[:, lead:]
    if relative_noise:
        values *= np.exp(np.random.default_rng(seed).normal(0.0, relative_noise, values.shape)).astype(np.float32)
    reference = dataset["time"].values - np.timedelta64(int(latency_hours * 3600), "s")
    reference = np.broadcast_to(reference, series.shape).astype("datetime64[ns]").copy()
    values[:, list(missing_issues)] = np.nan
    reference[:, list(missing_issues)] = np.datetime64("NaT")
    dataset[name] = (("station", "time", "lead"), values,
                     {"units": dataset[observed].attrs.get("units", ""), "hydroseq_role": "forecast",
                      "forecast_source": "generated from observations by the tests"})
    dataset = dataset.assign_coords(lead=("lead", np.arange(1, horizon + 1, dtype=np.int32)))
    dataset[f"{name}_reference_time"] = (("station", "time"), reference)
    dataset.to_netcdf(path, engine="netcdf4", encoding={"time": {"units": "hours since 1970-01-01"},
                                                        f"{name}_reference_time": {"units": "hours since 1970-01-01"}})
    return path


def caravan_ingest_config(start: dt.date, end: dt.date, stations: Sequence[str] | None = None) -> IngestConfig:
    """``configs/ingest_caravan_daily.yaml`` with its paths made absolute, on ``start..end`` (optionally
    only ``stations``)."""
    config = load_config(REPO_ROOT / "configs" / "ingest_caravan_daily.yaml", IngestConfig)
    config.stations.path = REPO_ROOT / config.stations.path
    if stations is not None:
        config.stations.ids = list(stations)
    for source in config.sources:
        source.path = str(REPO_ROOT / source.path)
    config.grid.start, config.grid.end = start, end
    return config


def per_step_forecast_data_config(**extra: object) -> DataConfig:
    """A per-step data config with leads 1-3 and the observed target as an input (model unit tests)."""
    return DataConfig.model_validate({
        "dynamic_inputs": ["p", "t"], "static_inputs": ["area"], "target": "q", "leads": [1, 2, 3],
        "lagged_target": True, "splits": {"train": {"start": "1990-01-01", "end": "1990-12-31"},
                                          "validation": {"start": "1991-01-01", "end": "1991-12-31"},
                                          "test": {"start": "1992-01-01", "end": "1992-12-31"}}, **extra})


def replace_line(path: Path, line: int, new: str | None) -> None:
    """Replace the 1-based ``line`` of the text file ``path`` with ``new`` (None deletes it)."""
    lines = path.read_text().splitlines()
    if new is None:
        del lines[line - 1]
    else:
        lines[line - 1] = new
    path.write_text("\n".join(lines) + "\n")


def caravan_copies_with_a_duplicated_date(folder: Path, stations: Sequence[str], broken: str) -> Path:
    """Copies of the bundled Caravan CSVs of ``stations`` in ``folder``; in ``broken``'s, one date written twice."""
    folder.mkdir(parents=True, exist_ok=True)
    for station in stations:
        shutil.copy(CARAVAN_DIR / f"{station}.csv", folder / f"{station}.csv")
    path = folder / f"{broken}.csv"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:101] + [lines[100]] + lines[101:]))
    return folder


def assert_same_content(left: xr.Dataset, right: xr.Dataset) -> None:
    """Global and variable attributes, dims, dtypes and value bytes (NaN positions included) are equal."""
    assert left.attrs == right.attrs
    assert sorted(map(str, left.variables)) == sorted(map(str, right.variables))
    for name in left.variables:
        a, b = left[name], right[name]
        assert (a.dims, a.dtype, a.attrs) == (b.dims, b.dtype, b.attrs), name
        assert a.values.tobytes() == b.values.tobytes(), name


def untrained_members(config: TrainConfig, station_data: StationData, seeds: Sequence[int] = (5, 6)) -> Checkpoint:
    """A checkpoint of untrained per-step members of ``config`` (one per seed, torch seeded with it; the first is
    the checkpoint's own state), with the scalers fitted on ``station_data``: what ``hydroseq train`` hands the
    model logger, without the training (torch and the model are imported here, not when the tests load)."""
    import torch

    from hydroseq.dataset import FeatureLayout, Scalers
    from hydroseq.model import get_model
    from hydroseq.training.checkpoint import Checkpoint

    names = FeatureLayout.from_config(config.data).names
    n_leads = len(config.data.lead_steps)
    states = []
    for seed in seeds:
        torch.manual_seed(seed)
        states.append(get_model(config.model, len(names), n_leads, "per_step", data=config.data).state_dict())
    return Checkpoint(states[0], config, names, n_leads, Scalers.fit(station_data, config.data), "untrained",
                      member_states=states)


def export_untrained_forecast_model(data: Path, out: Path, forecast_inputs: Sequence[str],
                                    splits: dict[str, tuple[str, str]], leads: int = 3) -> Path:
    """An untrained per-step model of ``data`` (a Caravan ingest with streamflow) reading the ingested
    ``forecast_inputs`` for leads 1..``leads`` (and forecasting them), exported to ``out`` (torch is imported
    here, not when the tests load)."""
    import torch

    from hydroseq.config import validate_config
    from hydroseq.dataset import FeatureLayout, Scalers, load_station_data
    from hydroseq.export.exporter import export_trained_model
    from hydroseq.export.source import read_provenance
    from hydroseq.model import get_model
    from hydroseq.training.checkpoint import Checkpoint

    train = validate_config({
        "data": {"path": str(data), "dynamic_inputs": ["total_precipitation_sum", "temperature_2m_mean"],
                 "static_inputs": [], "target": "streamflow", "mode": "per_step",
                 "leads": list(range(1, leads + 1)),
                 "lagged_target": True, "seq_len": 20, "min_len": 5,
                 "forecast_inputs": [{"variable": name, "source": "ingested"} for name in forecast_inputs],
                 "splits": {name: {"start": start, "end": end} for name, (start, end) in splits.items()}},
        "model": {"hidden_size": 8, "observed_skip": True, "forecast_rollout": True},
        "training": {"output_dir": str(out.parent / "train")}}, TrainConfig)
    scalers = Scalers.fit(load_station_data(data, train.data), train.data)
    layout = FeatureLayout.from_config(train.data)
    torch.manual_seed(0)
    model = get_model(train.model, len(layout.names), leads, "per_step", data=train.data).eval()
    checkpoint = Checkpoint(model.state_dict(), train, layout.names, leads, scalers, "untrained")
    export_trained_model(checkpoint, train.data.seq_len, out, read_provenance(data), pt2=False)
    return out


def store_uri(folder: Path) -> str:
    """``sqlite:///<folder>/mlruns.db``, an MLflow store with its tables already made (copied from one made
    once per process: making them takes 2-3 s a store). Tests of a store's first creation use their own path."""
    store = folder / "mlruns.db"
    if not store.exists():
        if not _STORE_TEMPLATE:
            from mlflow.tracking import MlflowClient

            template = Path(tempfile.mkdtemp(prefix="store_template_")) / "mlruns.db"
            MlflowClient(f"sqlite:///{template}").search_experiments()
            _STORE_TEMPLATE.append(template)
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(_STORE_TEMPLATE[0], store)
    return f"sqlite:///{store}"


def shared_dir(tmp_path_factory: pytest.TempPathFactory, name: str = "trained_chain") -> Path:
    """One folder ``name`` for every pytest-xdist worker of this run (the workers' base temp's parent)."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if base.name.startswith("popen-gw") else base
    folder = root / name
    folder.mkdir(exist_ok=True)
    return folder
