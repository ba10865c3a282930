"""The served (MLflow pyfunc) model gives the forecast CSV's discharge in m³/s, station names and areas.

The session's tiny run logged its forecaster with the station table of its training file
(``hydroseq/serving/pyfunc_stations.py``); loaded from the registry, it predicts ``value_m3s`` equal to
the CSV that ``hydroseq forecast`` writes for the same issue time. A copy of that model without the
table is what a model logged before it looks like: it still loads and predicts, without the m³/s columns.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import pytest
import yaml
from mlflow.tracking import MlflowClient

from hydroseq.cli import main
from hydroseq.errors import InputDataError
from hydroseq.export import ExportMetadata
from hydroseq.forecast import IngestedFile
from hydroseq.serving.pyfunc_model import frame_from_station_data, output_columns
from hydroseq.training.tracking import use_tracking_uri
from tests.conftest import TrainedRun

ISSUE_DAY = "2014-06-30"
ISSUE_LABEL = np.datetime64("2014-07-01T08:00", "ns")  # the end of the local day 2014-06-30
AT_ISSUE = {"issue_time": "2014-07-01T08:00Z"}
HISTORY = 45  # steps up to the issue step: more than the model's seq_len (30)


@pytest.fixture(scope="module")
def registered(trained: TrainedRun) -> str:
    """The tiny run's registered version: ``models:/<name>/<version>``."""
    with use_tracking_uri(trained.tracking_uri):
        (version,) = MlflowClient().search_model_versions(f"run_id = '{trained.run_id}'")
    return f"models:/{version.name}/{version.version}"


@pytest.fixture(scope="module")
def frame(exported: Path, ingested: Path) -> pd.DataFrame:
    """The model input of every station of the session's file, ``HISTORY`` steps up to the issue step."""
    metadata = ExportMetadata.read(exported)
    with IngestedFile(ingested, metadata) as source:
        end = int(np.flatnonzero(source.times == ISSUE_LABEL)[0])
        data = source.read(end - HISTORY + 1, end + 1)
    return frame_from_station_data(data, metadata)


def _load(trained: TrainedRun, uri: str) -> mlflow.pyfunc.PyFuncModel:
    with use_tracking_uri(trained.tracking_uri):
        return mlflow.pyfunc.load_model(uri)


def test_served_m3s_names_and_areas_equal_the_forecast_csv(trained: TrainedRun, registered: str, frame: pd.DataFrame,
                                                          exported: Path, ingested: Path, tmp_path: Path) -> None:
    out = tmp_path / "forecast.nc"
    assert main(["-q", "forecast", "--model", str(exported), "--data", str(ingested), "--issue-time", ISSUE_DAY,
                 "--out", str(out)]) == 0
    csv = pd.read_csv(out.with_suffix(".csv"), dtype={"station": str})
    predicted = _load(trained, registered).predict(frame, params=AT_ISSUE)
    shared = [column for column in csv.columns if column in predicted.columns]
    assert [column for column in predicted.columns if column in shared] == shared  # the CSV's order
    assert {"value_m3s", "station_name", "area_km2"} <= set(shared)
    merged = predicted.merge(csv, on=["station", "lead"], suffixes=("", "_csv"), validate="one_to_one")
    assert len(merged) == len(csv) >= 25  # every station the CSV forecast, each lead
    assert (merged["station_name"] == merged["station_name_csv"]).all()
    np.testing.assert_array_equal(merged["area_km2"].to_numpy(np.float32), merged["area_km2_csv"].to_numpy(np.float32))
    np.testing.assert_allclose(merged["value_m3s"].to_numpy(np.float32), merged["value_m3s_csv"].to_numpy(np.float32),
                               rtol=1e-6)
    assert np.isfinite(merged["value_m3s"]).all()


def test_an_unknown_station_has_nan_m3s_unless_its_area_is_given(trained: TrainedRun, registered: str,
                                                                 frame: pd.DataFrame) -> None:
    model = _load(trained, registered)
    first, second = frame["station"].unique()[:2]
    two = frame[frame["station"].isin([first, second])].replace({"station": {second: "X1"}})
    predicted = model.predict(two, params=AT_ISSUE)
    unknown, known = predicted[predicted["station"] == "X1"], predicted[predicted["station"] == first]
    assert np.isfinite(unknown["value"]).all() and np.isnan(unknown["value_m3s"]).all()
    assert unknown["station_name"].isna().all() and np.isnan(unknown["area_km2"]).all()
    assert np.isfinite(known["value_m3s"]).all()

    given = two.assign(area_km2=np.where(two["station"] == "X1", 100.0, np.nan))  # NaN: the recorded area
    with_area = model.predict(given, params=AT_ISSUE)
    pd.testing.assert_frame_equal(with_area[with_area["station"] == first], known)
    overridden = with_area[with_area["station"] == "X1"]
    assert (overridden["area_km2"] == 100.0).all()
    np.testing.assert_allclose(overridden["value_m3s"], overridden["value"] * 100.0 * 1000.0 / 86400.0, rtol=1e-6)
    differing = given.assign(area_km2=given["area_km2"].where(given.index != given.index[-1], 7.0))
    with pytest.raises(InputDataError, match="area_km2 differs between the rows of station 'X1'"):
        model.predict(differing, params=AT_ISSUE)


def test_a_model_logged_before_the_station_table_predicts_without_m3s(trained: TrainedRun, registered: str,
                                                                      frame: pd.DataFrame, tmp_path: Path) -> None:
    """The model's files as hydroseq logged them before it recorded the station table: no ``stations``
    artifact, no ``area_km2`` input in the signature. It loads and predicts the same values, without the
    m³/s, name and area columns (an ``area_km2`` input column is ignored)."""
    with use_tracking_uri(trained.tracking_uri):
        local = Path(mlflow.artifacts.download_artifacts(registered, dst_path=str(tmp_path / "new")))
    old = Path(shutil.copytree(local, tmp_path / "old"))
    spec = yaml.safe_load((old / "MLmodel").read_text())
    stations = spec["flavors"]["python_function"]["artifacts"].pop("stations")
    (old / stations["path"]).unlink()
    inputs = json.loads(spec["signature"]["inputs"])
    spec["signature"]["inputs"] = json.dumps([column for column in inputs if column["name"] != "area_km2"])
    (old / "MLmodel").write_text(yaml.safe_dump(spec))

    model = mlflow.pyfunc.load_model(str(old))
    assert model.unwrap_python_model().stations is None
    predicted = model.predict(frame, params=AT_ISSUE)
    metadata = model.unwrap_python_model().exported.metadata
    assert list(predicted.columns) == output_columns(metadata)
    assert not [column for column in predicted.columns if column.endswith("_m3s")]
    current = mlflow.pyfunc.load_model(str(local)).predict(frame, params=AT_ISSUE)
    pd.testing.assert_frame_equal(predicted, current[output_columns(metadata)])
    given = frame.assign(area_km2=500.0)
    pd.testing.assert_frame_equal(model.predict(given, params=AT_ISSUE), predicted)
