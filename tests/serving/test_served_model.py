"""The registered model served by ``mlflow models serve`` forecasts what ``hydroseq forecast`` publishes.

A tiny quantile model (3 basins, hidden 8, one epoch) is trained with ``hydroseq train --config
tiny_quantile.yaml`` as a real process on the session's ingested Caravan file, into a real SQLite store:
its run is named after the config file, its registered version is described, and its input example ends
at ``tracking.example_issue_time`` (2014-06-30). ``hydroseq promote`` points ``@champion`` at it and
``hydroseq forecast --model models:/served@champion`` writes the CSV for that day. Then the documented
serve command runs as a subprocess (the venv's ``bin`` on PATH, for ``uvicorn``) and ``POST /invocations``
gets the example rows with ``...Z`` times (and again with ``+02:00`` offsets and a date as the issue
time): values equal the CSV's within 1e-5 (their m³/s columns within 1e-5 relative) and the flood
probabilities ``p_exceed_*`` equal them.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import pytest
import yaml
from mlflow.tracking import MlflowClient

from hydroseq.cli import main
from hydroseq.training.tracking import use_tracking_uri
from tests.conftest import DYNAMIC, STATIC, TRAIN_STATIONS
from tests.fixtures import store_uri

pytestmark = pytest.mark.slow

MODEL = "served"
ISSUE_DAY = "2014-06-30"
URI = f"models:/{MODEL}@champion"
BIN = Path(sys.executable).parent
SERVER_START_S = 300  # the server imports MLflow and loads the model: minutes on a loaded machine


@pytest.fixture(scope="module")
def served(ingested: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Train (CLI process), promote, forecast (CLI): the store, the run and the forecast CSV."""
    work = tmp_path_factory.mktemp("served")
    store = store_uri(work)
    config = {
        "data": {"path": str(ingested), "dynamic_inputs": DYNAMIC, "static_inputs": STATIC, "stations": TRAIN_STATIONS,
                 "mode": "per_step", "leads": [1, 2], "seq_len": 30, "min_len": 5, "cache_dir": str(work / "cache"),
                 "splits": {"train": {"start": "2011-01-01", "end": "2012-12-31"},
                            "validation": {"start": "2013-01-01", "end": "2013-06-30"},
                            "test": {"start": "2013-07-01", "end": "2014-12-31"}}},
        "batching": {"batch_size": 64},
        "model": {"hidden_size": 8, "quantiles": [0.05, 0.25, 0.5, 0.75, 0.95]},
        "training": {"epochs": 1, "threads": 1, "loss": "quantile", "output_dir": str(work / "train"), "seed": 3},
        "tracking": {"tracking_uri": store, "artifact_root": str(work / "mlartifacts"), "experiment": MODEL,
                     "example_issue_time": ISSUE_DAY},
    }
    path = work / "tiny_quantile.yaml"
    path.write_text(yaml.safe_dump(config))
    trained = subprocess.run([sys.executable, "-m", "hydroseq.cli", "-q", "--json", "train", "--config", str(path)],
                             capture_output=True, text=True, timeout=900)
    assert trained.returncode == 0, trained.stderr[-3000:]
    run_id = json.loads(trained.stdout.strip().splitlines()[-1])["run_id"]
    assert main(["-q", "promote", "--model", MODEL, "--version", "1", "--alias", "champion", "--force",
                 "--tracking-uri", store]) == 0  # a 1-epoch model: maybe worse than persistence
    out = work / "forecast" / f"forecast_{ISSUE_DAY}.nc"
    assert main(["-q", "forecast", "--model", URI, "--tracking-uri", store, "--data", str(ingested),
                 "--issue-time", ISSUE_DAY, "--out", str(out)]) == 0
    csv = pd.read_csv(out.with_suffix(".csv"), dtype={"station": str})
    return {"store": store, "run_id": run_id, "csv": csv, "work": work}


def test_the_run_is_named_after_its_config_and_the_version_described(served: dict, ingested: Path) -> None:
    client = MlflowClient(served["store"])
    assert client.get_run(served["run_id"]).info.run_name == "tiny_quantile"
    version = client.get_model_version_by_alias(MODEL, "champion")
    assert version.run_id == served["run_id"]
    assert f"Trained on {ingested.name}" in version.description and "quantiles 0.05..0.95" in version.description
    assert "Validation median NSE over stations" in version.description
    assert "lead 1 " in version.description and "(persistence " in version.description


def test_the_input_example_is_the_forecast_day_and_gives_the_csv(served: dict) -> None:
    csv = served["csv"]
    assert {"p_exceed_q95", "p_exceed_q99"} <= set(csv.columns)  # 2 training years: no 2-year flow, percentiles
    with use_tracking_uri(served["store"]):
        model = mlflow.pyfunc.load_model(URI)
    example = model.input_example
    assert example["time"].iloc[-1] == csv["issue_time"].iloc[0]  # 2014-07-01T08:00:00Z, the end of 2014-06-30
    assert [column for column in model.metadata.signature.outputs.input_names() if column.startswith("p_exceed_")] \
        == [column for column in csv.columns if column.startswith("p_exceed_")]
    _assert_as_published(model.predict(example), csv)


def test_mlflow_models_serve_returns_the_csv_values_and_flood_probabilities(served: dict) -> None:
    csv = served["csv"]
    with use_tracking_uri(served["store"]):
        example = mlflow.pyfunc.load_model(URI).input_example
    issue_label = csv["issue_time"].iloc[0]
    shifted = example.assign(time=[(pd.Timestamp(t) + pd.Timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S+02:00")
                                   for t in example["time"]])
    requests = [(example, issue_label), (shifted, ISSUE_DAY)]  # ...Z times; +02:00 times and a date
    assert example["time"].str.endswith("Z").all()
    with _server(served["store"], served["work"] / "serve.log") as port:
        for frame, issue in requests:
            body = {"dataframe_split": json.loads(frame.to_json(orient="split", index=False)),
                    "params": {"issue_time": issue}}
            request = urllib.request.Request(f"http://127.0.0.1:{port}/invocations", json.dumps(body).encode(),
                                             {"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=120) as response:
                predictions = pd.DataFrame(json.loads(response.read())["predictions"])
            _assert_as_published(predictions, csv)


def _assert_as_published(predicted: pd.DataFrame, csv: pd.DataFrame) -> None:
    """Every predicted row equals the CSV's row of its station and lead: values within 1e-5, probabilities equal."""
    predicted = predicted.assign(station=predicted["station"].astype(str))
    merged = predicted.merge(csv, on=["station", "lead"], suffixes=("", "_csv"), validate="one_to_one")
    assert len(merged) == len(predicted) == 2 * 2  # the example's 2 stations, leads 1 and 2
    assert (pd.to_datetime(merged["issue_time"], utc=True) == pd.to_datetime(merged["issue_time_csv"], utc=True)).all()
    values = [column for column in predicted.columns
              if (column == "value" or column.startswith("value_q")) and not column.endswith("_m3s")]
    difference = max(float(np.max(np.abs(merged[c].to_numpy(float) - merged[f"{c}_csv"].to_numpy(float))))
                     for c in values)
    as_float32 = max(float(np.max(np.abs(merged[c].to_numpy(np.float32) - merged[f"{c}_csv"].to_numpy(np.float32))))
                     for c in values)  # the CSV writes the shortest text of each float32
    print(f"served vs CSV: max |difference| of {values} = {difference:.3g} ({as_float32:.3g} as float32)")
    assert difference <= 1e-5
    in_m3s = [column for column in predicted.columns if column.endswith("_m3s")]
    assert in_m3s == [f"{column}_m3s" for column in values]  # the CSV's m3/s columns, from the stations' areas
    for column in in_m3s:
        np.testing.assert_allclose(merged[column].to_numpy(np.float32), merged[f"{column}_csv"].to_numpy(np.float32),
                                   rtol=1e-5)
    exceeding = [column for column in predicted.columns if column.startswith("p_exceed_")]
    assert exceeding and np.isfinite(merged[exceeding].to_numpy(float)).any()
    for column in exceeding:
        np.testing.assert_array_equal(merged[column].to_numpy(np.float32), merged[f"{column}_csv"].to_numpy(np.float32))


class _server:
    """``mlflow models serve -m models:/served@champion -h 127.0.0.1 -p <free port> --env-manager local`` as in the
    docs, with the venv's bin on PATH; the port once ``/ping`` answers; the process group killed on exit."""

    def __init__(self, store: str, log: Path) -> None:
        self.store, self.log = store, log

    def __enter__(self) -> int:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
               "MLFLOW_TRACKING_URI": self.store}
        command = [str(BIN / "mlflow"), "models", "serve", "-m", URI, "-h", "127.0.0.1", "-p", str(self.port),
                   "--env-manager", "local"]
        with open(self.log, "w") as sink:
            self.process = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        try:
            self._wait()
        except BaseException:
            self.__exit__()
            raise
        return self.port

    def _wait(self) -> None:
        deadline = time.monotonic() + SERVER_START_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"mlflow models serve exited with {self.process.returncode}: "
                            f"{self.log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/ping", timeout=5):
                    return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(1)
        pytest.fail(f"mlflow models serve did not answer within {SERVER_START_S} s: {self.log.read_text()[-3000:]}")

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
