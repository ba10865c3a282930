"""``model.onnx`` describes itself: its ``metadata_props`` alone, with plain onnxruntime, give the forecast CSV.

``plain_onnxruntime_forecast.py`` (beside this file) reads the props and the ingested NetCDF with numpy, pandas,
xarray and onnxruntime in a separate process that never imports hydroseq, and its forecast must match the CSV
``hydroseq forecast`` writes: for the shared trained model (dynamic and static inputs, lead 0, one scaling for all
basins), for an untrained per-step quantile ensemble that reads the observed discharge with its flag (late
gauges), scales it per basin, reads an ingested weather forecast for leads 1-3 (a product missing at one step)
and meets short histories, and for an untrained sequence model that needs the observed discharge on every step.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hydroseq import __version__
from hydroseq.cli import main
from hydroseq.dataset import FeatureLayout, Scalers, load_station_data
from hydroseq.export import ONNX_FILE, ExportMetadata
from hydroseq.export.exporter import export_trained_model
from hydroseq.export.onnx_props import read_metadata_props
from hydroseq.export.source import read_provenance
from hydroseq.fileio import sha256_file
from hydroseq.model import get_model
from hydroseq.training.checkpoint import Checkpoint
from tests.fixtures import add_forecast_variable, untrained_members

SERVER = Path(__file__).with_name("plain_onnxruntime_forecast.py")
ISSUE_DAY = "2014-05-31"  # its last step: 2014-06-01T08:00Z on the Caravan grid
ISSUE_LABEL = "2014-06-01T08:00"
KEY = ["station", "issue_time", "lead", "valid_time"]
SHORT = {"01052500": 2, "02011460": 4, "03144000": 9}  # inputs only for the last k steps
LATE = {"01022500": 1, "01547700": 7}  # discharge missing for the last k steps


def _matches_the_forecast_csv(model_dir: Path, data: Path, work: Path) -> pd.DataFrame:
    """Serve ``model.onnx`` without hydroseq and compare with ``hydroseq forecast``'s CSV; the published table."""
    assert main(["forecast", "--model", str(model_dir), "--data", str(data), "--issue-time", ISSUE_DAY,
                 "--out", str(work / "forecast.nc")]) == 0
    published = pd.read_csv(work / "forecast.csv", dtype={"station": str})
    done = subprocess.run([sys.executable, str(SERVER), str(model_dir / ONNX_FILE), str(data), ISSUE_DAY,
                           str(work / "served.csv")], cwd=work, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    served = pd.read_csv(work / "served.csv", dtype={"station": str})
    assert served[KEY].values.tolist() == published[KEY].values.tolist()  # the same stations, leads and times
    values = [column for column in served.columns if column.startswith("value")]
    for column in values:
        np.testing.assert_allclose(served[column], published[column], rtol=1e-4, atol=1e-6, err_msg=column)
    return published


def test_props_describe_the_model_and_the_checksum_covers_them(exported: Path) -> None:
    metadata = ExportMetadata.read(exported)
    props = read_metadata_props(exported / ONNX_FILE)
    assert metadata.files[ONNX_FILE] == sha256_file(exported / ONNX_FILE)  # written before the file was hashed
    assert props["hydroseq_version"] == __version__ == metadata.hydroseq_version
    assert json.loads(props["feature_names"]) == metadata.feature_names
    assert [source["name"] for source in json.loads(props["feature_sources"])] == metadata.feature_names
    assert json.loads(props["scalers"]) == metadata.scalers
    assert json.loads(props["grid"]) == metadata.grid.to_attrs()
    assert json.loads(props["input_units"]) == metadata.input_units and props["target_units"] == "mm d-1"
    assert json.loads(props["leads"]) == [0] and props["seq_len"] == "30" and props["scaling_in_graph"] == "false"
    assert json.loads(props["quantiles"]) == [] and props["members"] == "0" and props["target_scaling"] == "global"
    assert "negative values set to 0" in props["preprocessing"] and "right" in props["preprocessing"]


def test_served_from_the_props_alone_matches_the_forecast_csv(exported: Path, ingested: Path, tmp_path: Path) -> None:
    published = _matches_the_forecast_csv(exported, ingested, tmp_path)
    assert published["station"].nunique() == 31 and set(published["lead"]) == {0}


@pytest.fixture(scope="module")
def forecast_input_data(ingested: Path, tmp_path_factory: pytest.TempPathFactory, edited_copy, grid_index) -> Path:
    """The shared data with short histories, late gauges and a forecast of rain for leads 1-3 (none two steps
    before the issue step)."""
    end = grid_index(ingested, ISSUE_LABEL)
    folder = tmp_path_factory.mktemp("self_describing")

    def edit(dataset) -> None:
        stations = list(dataset["station"].values)
        for station, k in SHORT.items():
            for name in ("total_precipitation_sum", "temperature_2m_mean", "potential_evaporation_sum"):
                dataset[name].values[stations.index(station), : end - k + 1] = np.nan
        for station, k in LATE.items():
            dataset["streamflow"].values[stations.index(station), end - k + 1: end + 1] = np.nan
    edited = edited_copy(ingested, folder / "edited.nc", edit)
    return add_forecast_variable(edited, folder / "products.nc", "rain_forecast", "total_precipitation_sum", 3,
                                 relative_noise=0.3, missing_issues=[end - 2])


def test_a_quantile_ensemble_with_flags_per_basin_scaling_and_forecast_inputs(trained, forecast_input_data: Path,
                                                                              tmp_path: Path) -> None:
    levels = [0.05, 0.5, 0.95]
    config = trained.config.model_copy(deep=True)
    config.data = config.data.model_validate({
        **config.data.model_dump(), "leads": [1, 2, 3], "lagged_target": True, "per_station_target_scaling": True,
        "stations": None, "forecast_inputs": [{"variable": "rain_forecast", "source": "ingested"}]})
    config = config.model_copy(update={  # model and loss change together
        "model": config.model.model_copy(update={"observed_skip": True, "quantiles": levels}),
        "training": config.training.model_copy(update={"loss": "quantile"})})
    checkpoint = untrained_members(config, load_station_data(forecast_input_data, config.data))
    export_trained_model(checkpoint, config.data.seq_len, tmp_path / "model", read_provenance(forecast_input_data),
                         pt2=False)
    props = read_metadata_props(tmp_path / "model" / ONNX_FILE)
    kinds = [source["kind"] for source in json.loads(props["feature_sources"])]
    assert kinds == ["dynamic"] * 3 + ["observed_target", "observed_flag"] + ["forecast"] * 3 + \
        ["forecast_present"] * 3 + ["static"] * 3
    assert props["target_scaling"] == "per_station" and props["members"] == "2"
    assert json.loads(props["quantiles"]) == levels and "scalers.target.per_station" in props["preprocessing"]

    published = _matches_the_forecast_csv(tmp_path / "model", forecast_input_data, tmp_path)
    assert {"value_q05", "value_q95", "value_member0", "value_member1"} <= set(published.columns)
    forecast = set(published["station"])
    assert len(forecast) == 29 and not {"01052500", "02011460"} & forecast  # 2 and 4 valid steps: below min_len 5
    assert set(LATE) | {"03144000"} <= forecast


def test_a_sequence_model_that_needs_the_observed_discharge_on_every_step(trained, forecast_input_data: Path,
                                                                         tmp_path: Path) -> None:
    import torch

    config = trained.config.model_copy(deep=True)
    config.data = config.data.model_copy(update={"mode": "sequence", "leads": [1, 3], "lagged_target": True})
    names = FeatureLayout.from_config(config.data).names
    torch.manual_seed(2)
    model = get_model(config.model, len(names), 2, "sequence")
    scalers = Scalers.fit(load_station_data(forecast_input_data, config.data), config.data)
    checkpoint = Checkpoint(model.state_dict(), config, names, 2, scalers, "untrained")
    export_trained_model(checkpoint, config.data.seq_len, tmp_path / "model", read_provenance(forecast_input_data),
                         pt2=False)
    props = read_metadata_props(tmp_path / "model" / ONNX_FILE)
    assert "every dynamic input and the target is present" in props["preprocessing"]

    published = _matches_the_forecast_csv(tmp_path / "model", forecast_input_data, tmp_path)
    assert set(published["lead"]) == {1, 3} and not set(LATE) & set(published["station"])  # no discharge at T
