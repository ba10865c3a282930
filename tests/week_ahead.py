"""A week-ahead chain for the tests: leads 1-7 (daily) from weather-forecast inputs, end to end, made once per run.

Six bundled Caravan basins are ingested for 2011-2014 with ``configs/ingest_caravan_daily.yaml``; a GENERATED
7-day product (``pipelines/make_forecast_product.py``: the observed forcing plus noise growing with the lead,
not a real forecast) is ingested beside it by a station-layout forecast source of horizon 7, so the data file
holds ``total_precipitation_sum_forecast`` and ``temperature_2m_mean_forecast`` as ``(station, time, lead)``
with leads 1-7, written by the ingest itself. A per-step quantile model reading both for leads 1-7 through the
forecast roll-out (hidden 8, one epoch on 2012, four basins) is trained and tracked in MLflow and exported by
its run id. It forecasts the end of 2014-09-29 and 2014-09-30 (with PI-XML) and a hindcast of
2014-07-01..2014-09-30, all with a thresholds table (two levels per station at its 80th and 97th percentile
of 2013-2014), and the forecast page and the verification page are written.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from filelock import FileLock

from hydroseq.config import TrainConfig, validate_config
from tests.fixtures import caravan_ingest_config, shared_dir, store_uri

STATIONS = ["01022500", "01547700", "02064000", "03015500", "08066300", "14325000"]
TRAIN_STATIONS = STATIONS[:4]
LEADS = list(range(1, 8))
FORCING = ["total_precipitation_sum", "temperature_2m_mean"]
FORECAST_INPUTS = [f"{name}_forecast" for name in FORCING]
LEVELS = [0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95]
ISSUE, PREVIOUS, HINDCAST = "2014-09-30", "2014-09-29", "2014-07-01..2014-09-30"
ISSUE_LABEL = np.datetime64("2014-10-01T08:00", "ns")  # the end of local day 2014-09-30 on the Caravan grid
SEQ_LEN = 30


@dataclass(frozen=True)
class WeekAhead:
    """The chain's files (``paths``: data, model, thresholds, forecasts, hindcast, pages) and its training run."""

    paths: dict[str, Path]
    run_id: str
    tracking_uri: str

    def __getitem__(self, name: str) -> Path:
        return self.paths[name]


def week_ahead_chain(tmp_path_factory: pytest.TempPathFactory) -> WeekAhead:
    """The chain (see the module docstring), built by the first xdist worker, read by the others."""
    folder = shared_dir(tmp_path_factory, "week_ahead")
    with FileLock(str(folder / "build.lock")):
        done = folder / "chain.json"
        if not done.exists():
            done.write_text(json.dumps(_build(folder)))
        built = json.loads(done.read_text())
    return WeekAhead({name: Path(path) for name, path in built["paths"].items()}, built["run_id"],
                     built["tracking_uri"])


def forecast_source(product: Path, horizon: int = 7) -> dict:
    """The station-layout forecast source that reads a product of ``pipelines/make_forecast_product.py``."""
    return {"name": "generated week-ahead product (observed forcing plus noise)", "path": str(product),
            "layout": "station", "latency": "6h", "issue_frequency": "1D", "horizon": horizon,
            "on_missing_product": "fail",
            "variables": {"total_precipitation_sum_forecast": {"source": "total_precipitation_sum", "units": "m",
                                                               "aggregation": "sum", "accumulation": "since_reference"},
                          "temperature_2m_mean_forecast": {"source": "temperature_2m_mean", "units": "K",
                                                           "aggregation": "mean"}}}


def train_config(data: Path, folder: Path) -> TrainConfig:
    """A 7-lead quantile model with the forecast roll-out over both forecast inputs, trained in seconds."""
    return validate_config({
        "data": {"path": str(data), "dynamic_inputs": [*FORCING, "potential_evaporation_sum"],
                 "static_inputs": ["p_mean", "aridity", "frac_snow"], "stations": TRAIN_STATIONS,
                 "mode": "per_step", "leads": LEADS, "lagged_target": True, "seq_len": SEQ_LEN, "min_len": 5,
                 "forecast_inputs": [{"variable": name, "source": "ingested"} for name in FORECAST_INPUTS],
                 "forecast_hiding": {"step_rate": 0.05, "chunk_rate": 0.05},
                 "splits": {"train": {"start": "2012-01-01", "end": "2012-12-31"},
                            "validation": {"start": "2013-01-01", "end": "2013-03-31"},
                            "test": {"start": "2013-04-01", "end": "2014-12-31"}},
                 "cache_dir": str(folder / "cache")},
        "batching": {"batch_size": 64},
        "model": {"hidden_size": 8, "observed_skip": True, "forecast_rollout": True, "quantiles": LEVELS},
        "training": {"epochs": 1, "threads": 1, "output_dir": str(folder / "train"), "seed": 3, "loss": "quantile"},
        "tracking": {"tracking_uri": store_uri(folder), "artifact_root": str(folder / "mlartifacts")},
    }, TrainConfig)


def _build(folder: Path) -> dict:
    from hydroseq.config.forecast_source import ForecastSourceConfig
    from hydroseq.export import export_model
    from hydroseq.forecast import run_forecast
    from hydroseq.ingest import ingest
    from hydroseq.report import write_report
    from hydroseq.training import train
    from pipelines.make_forecast_product import make_product

    start, end = dt.date(2011, 1, 1), dt.date(2014, 12, 31)
    observed = ingest(caravan_ingest_config(start, end, STATIONS), folder / "observed.nc", show_progress=False).output
    product = folder / "product.nc"
    make_product(observed, FORCING, product, [0.1 + 0.05 * k for k in range(7)], 7, "6h", seed=0)
    config = caravan_ingest_config(start, end, STATIONS)
    config.forecast_sources = [ForecastSourceConfig.model_validate(forecast_source(product))]
    data = ingest(config, folder / "data.nc", show_progress=False).output
    run = train(train_config(data, folder), show_progress=False)
    model = folder / "model"
    export_model(run.run_id, seq_len=SEQ_LEN, out_dir=model, tracking_uri=run.tracking_uri)
    thresholds = _thresholds(data, folder / "thresholds.csv")
    paths = {"observed": observed, "product": product, "data": data, "model": model, "thresholds": thresholds,
             "forecast": folder / "forecast_2014-09-30.nc", "previous": folder / "forecast_2014-09-29.nc",
             "hindcast": folder / "hindcast.nc", "forecast_page": folder / "forecast.html",
             "verification_page": folder / "verification.html"}
    for name, issue in (("forecast", ISSUE), ("previous", PREVIOUS), ("hindcast", HINDCAST)):
        run_forecast(model, data, issue, out=paths[name], thresholds=thresholds, show_progress=False,
                     formats=["pi-xml"] if name == "forecast" else [])
    write_report(paths["forecast_page"], forecast=paths["forecast"], data=data, hindcast=paths["hindcast"],
                 previous=paths["previous"])
    write_report(paths["verification_page"], hindcast=paths["hindcast"], data=data)
    return {"paths": {name: str(path) for name, path in paths.items()}, "run_id": run.run_id,
            "tracking_uri": run.tracking_uri}


def _thresholds(data: Path, out: Path) -> Path:
    """Two levels per station at its 80th and 97th percentile of 2013-2014."""
    with xr.open_dataset(data) as dataset:
        flows = dataset["streamflow"].sel(time=slice("2013-01-01", "2014-12-31")).load()
    column = f"discharge [{flows.attrs['units']}]"  # the table names its units
    rows = [{"station": station, "level": level, column: float(np.nanquantile(flows.sel(station=station), q))}
            for station in flows["station"].values for level, q in (("action", 0.8), ("flood", 0.97))]
    pd.DataFrame(rows).to_csv(out, index=False)
    return out
