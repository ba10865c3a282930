"""Every NetCDF file hydroseq writes passes the IOOS compliance checker's ``cf:1.8`` test.

The files are made by the project's own code: an ingest and an ``--append`` to it, an ingest with
forecast products (and its append), a forecast and a hindcast of the tiny trained model, and of a
probabilistic model (quantiles, ensemble members, threshold exceedance). Counted as the checker's
report counts them: a failed check of high priority is an error, of medium priority a warning; a check
that stops with an exception fails the test (the checker's command line then exits 2). The command line
itself is run on an ingested file, a forecast and a hindcast.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
import xarray as xr
from compliance_checker.runner import CheckSuite

from hydroseq.cli import main
from hydroseq.config import IngestConfig, validate_config
from hydroseq.dataset import FeatureLayout, Scalers, load_station_data
from hydroseq.export.exporter import export_trained_model
from hydroseq.export.source import read_provenance
from hydroseq.forecast import run_forecast
from hydroseq.ingest import dataset_checksum, ingest
from hydroseq.ingested import open_ingested
from hydroseq.model import get_model
from hydroseq.training.checkpoint import Checkpoint
from tests.conftest import ingest_caravan
from tests.ingest.forecast_builders import caravan_product, caravan_window
from tests.ingest.test_forecast_products import REFERENCES

CHECK = "cf:1.8"
CHECKER = Path(sys.executable).with_name("compliance-checker")
# CF 2.4 recommends every other dimension left of time; forecast products are (station, time, lead),
# the layout the dataset stage reads (docs/dataset-format.md).
PRODUCT_DIMENSION_ORDER = "§2.4 Dimensions"


def cf_report(path: Path) -> tuple[list[str], list[str]]:
    """The checker's errors and warnings for ``path``, each ``"<section>: <messages>"``."""
    suite = CheckSuite()
    with warnings.catch_warnings():  # loading every checker imports the deprecated ioos_sos one
        warnings.simplefilter("ignore", DeprecationWarning)
        suite.load_all_available_checkers()
    dataset = suite.load_dataset(str(path))
    try:
        groups, exceptions = suite.run_all(dataset, [CHECK], skip_checks=[])[CHECK]
    finally:
        dataset.close()
    # the checker reports a check that raised apart from its results (its command line then exits 2); the
    # text ids once did so (station(station) as text: its monotonicity check subtracts the values)
    assert not exceptions, {name: repr(error) for name, (error, _) in exceptions.items()}
    structure = suite.build_structure(CHECK, groups, str(path), limit=1)
    found = {priority: [f"{result.name}: {' | '.join(result.msgs)}" for result in structure[priority]
                        if result.value[0] < result.value[1]]
             for priority in ("high_priorities", "medium_priorities")}
    assert len(found["high_priorities"]) == structure["high_count"]
    return found["high_priorities"], found["medium_priorities"]


def assert_clean(path: Path, allowed_warnings: tuple[str, ...] = ()) -> None:
    errors, warnings = cf_report(path)
    assert errors == [], errors
    assert [w for w in warnings if not w.startswith(allowed_warnings)] == [], warnings


def test_ingested_dataset_and_append(ingested: Path, tmp_path: Path) -> None:
    assert_clean(ingested)
    appended = ingest_caravan(tmp_path / "appended.nc", dt.date(2014, 1, 1), dt.date(2014, 3, 31))
    assert_clean(ingest_caravan(appended, dt.date(2014, 3, 25), dt.date(2014, 4, 30), append=True))


def test_ingested_forecast_products_and_append(tmp_path: Path, data_dir: Path) -> None:
    product = caravan_product(tmp_path / "product.nc", REFERENCES)
    config = caravan_window(tmp_path, data_dir, product)
    first = {**config, "grid": {**config["grid"], "end": "1981-01-25"}}
    rest = {**config, "grid": {**config["grid"], "start": "1981-01-20"}}
    whole = ingest(validate_config(config, IngestConfig), tmp_path / "whole.nc", show_progress=False)
    ingest(validate_config(first, IngestConfig), tmp_path / "appended.nc", show_progress=False)
    ingest(validate_config(rest, IngestConfig), tmp_path / "appended.nc", append=True, show_progress=False)
    for path in (whole.output, tmp_path / "appended.nc"):
        errors, warnings = cf_report(path)
        assert errors == [], errors
        assert len(warnings) == 1 and warnings[0].startswith(PRODUCT_DIMENSION_ORDER), warnings
        # station (I): the checker sees the instance dimension of a CF timeSeries since the ids are a character array
        assert "precipitation_forecast's" in warnings[0] and "station (I), time (T), lead (U)" in warnings[0]


def test_forecast_and_hindcast(exported: Path, ingested: Path, tmp_path: Path) -> None:
    assert run_forecast(exported, ingested, "2014-06-30", out=tmp_path / "f.nc").stations_forecast > 0
    assert run_forecast(exported, ingested, "2014-06-01..2014-06-30", out=tmp_path / "h.nc").stations_forecast > 0
    assert_clean(tmp_path / "f.nc")
    assert_clean(tmp_path / "h.nc")


@pytest.fixture(scope="module")
def quantile_ensemble(trained, ingested: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two untrained per-step quantile members (leads 1-3, five levels) exported as one model."""
    config = trained.config.model_copy(deep=True)
    config.data = config.data.model_copy(update={"leads": [1, 2, 3], "lagged_target": True})
    config = config.model_copy(update={
        "model": config.model.model_copy(update={"quantiles": [0.05, 0.25, 0.5, 0.75, 0.95]}),
        "training": config.training.model_copy(update={"loss": "quantile"})})
    scalers = Scalers.fit(load_station_data(ingested, config.data), config.data)
    names = FeatureLayout.from_config(config.data).names
    states = []
    for seed in (5, 6):
        torch.manual_seed(seed)
        states.append(get_model(config.model, len(names), 3, "per_step", data=config.data).state_dict())
    checkpoint = Checkpoint(states[0], config, names, 3, scalers, "untrained", member_states=states)
    out = tmp_path_factory.mktemp("quantile_ensemble") / "model"
    export_trained_model(checkpoint, config.data.seq_len, out, read_provenance(ingested), pt2=False)
    return out


def test_probabilistic_forecast_and_hindcast(quantile_ensemble: Path, ingested: Path, tmp_path: Path) -> None:
    run_forecast(quantile_ensemble, ingested, "2014-05-31", out=tmp_path / "f.nc")
    run_forecast(quantile_ensemble, ingested, "2014-05-01..2014-05-31", out=tmp_path / "h.nc")
    for path in (tmp_path / "f.nc", tmp_path / "h.nc"):
        with xr.open_dataset(path) as forecast:
            assert {"streamflow_quantile", "streamflow_member", "streamflow_exceedance_probability"} <= set(forecast)
        assert_clean(path)


def test_time_bounds_are_the_grid_intervals_and_stay_out_of_the_checksum(ingested: Path) -> None:
    with xr.open_dataset(ingested) as ds:
        assert ds["time"].attrs["bounds"] == "time_bnds" and ds["time"].encoding["dtype"] == np.float64
        np.testing.assert_array_equal(ds["time_bnds"].values[:, 1], ds["time"].values)
        assert (ds["time_bnds"].values[:, 1] - ds["time_bnds"].values[:, 0] == np.timedelta64(1, "D")).all()
        assert dataset_checksum(ds) == dataset_checksum(ds.drop_vars("time_bnds")) == ds.attrs["dataset_checksum"]
        assert ds["p_mean"].attrs["units"] == "mm d-1" and ds["aridity"].attrs["units"] == "1"
    dataset, _ = open_ingested(ingested)
    with dataset:
        assert "time_bnds" not in dataset.variables and "bounds" not in dataset["time"].attrs


def test_the_checkers_command_line_exits_0_on_every_file(exported: Path, ingested: Path, tmp_path: Path) -> None:
    """``compliance-checker --test=cf:1.8`` on the ingested file, a forecast and a hindcast written by
    ``hydroseq forecast``: exit 0, no error; and each still selects a station by its id."""
    forecast, hindcast = tmp_path / "f.nc", tmp_path / "h.nc"
    for issue, out in (("2014-06-30", forecast), ("2014-06-01..2014-06-30", hindcast)):
        assert main(["-q", "forecast", "--model", str(exported), "--data", str(ingested), "--issue-time", issue,
                     "--out", str(out)]) == 0
    checked = subprocess.run([str(CHECKER), f"--test={CHECK}", str(ingested), str(forecast), str(hindcast)],
                             capture_output=True, text=True, timeout=600)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]
    assert checked.stdout.count("All tests passed!") == 3 and "exceptions occurred" not in checked.stderr
    for path in (ingested, forecast, hindcast):
        with xr.open_dataset(path) as dataset:
            assert str(dataset.sel(station="01022500")["station"].values) == "01022500"
