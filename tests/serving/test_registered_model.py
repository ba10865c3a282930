"""The registry in the operational path: a version described, promoted to ``@champion``, forecast from by URI.

The session's tiny run (``tests/conftest.py``) registered its forecaster as version 1 of ``hydroseq`` in a real
SQLite store; each test works on a copy of that store (the artifacts stay where they are, read only), so an
alias set here is never seen by another test. Everything runs through ``hydroseq.cli.main``, as a user would.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import socket
from pathlib import Path

import pytest
import xarray as xr
from mlflow.tracking import MlflowClient

from hydroseq.cli import main
from hydroseq.errors import ConfigError, ExitCode
from hydroseq.serving.model_uri import parse_model_uri, registered_model
from hydroseq.training import train
from tests.conftest import TrainedRun
from tests.fixtures import store_uri

ISSUE = "2014-06-30"


@pytest.fixture
def store(trained: TrainedRun, tmp_path: Path) -> str:
    """A copy of the session's store, its version 1 of ``hydroseq`` the tiny run's forecaster."""
    database = Path(trained.tracking_uri.removeprefix("sqlite:///"))
    shutil.copy(database, tmp_path / "mlruns.db")
    return f"sqlite:///{tmp_path / 'mlruns.db'}"


def _json(capsys: pytest.CaptureFixture[str]) -> dict:
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def _one_line_error(capfd: pytest.CaptureFixture[str], *names: str) -> str:
    err = capfd.readouterr().err
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    for name in names:
        assert name in lines[0], lines[0]
    return lines[0]


def test_the_version_is_described_and_the_run_named(trained: TrainedRun, store: str, ingested: Path) -> None:
    client = MlflowClient(store)
    (version,) = client.search_model_versions(f"run_id = '{trained.run_id}'")
    run = client.get_run(trained.run_id)
    assert run.info.run_name == trained.config.tracking.experiment  # the Python API's default: not a random name
    description = version.description
    assert f"Trained on {ingested.name}" in description and run.data.tags["dataset_checksum"][:12] in description
    assert "train 2012-01-01..2012-12-31, validation 2013-01-01..2013-03-31" in description
    nse = run.data.metrics["validation_model_lead0_median_nse"]
    assert f"Validation median NSE over stations (best epoch 0): lead 0 {nse:.3f}" in description
    assert f"({trained.run_id})" in description and "per_step LSTM (hidden 8)" in description


def test_promote_then_forecast_by_alias_equals_the_exported_folder(store: str, exported: Path, ingested: Path,
                                                                   tmp_path: Path, capsys) -> None:
    # the gate reads the run's logged validation figures; the 1-epoch model may be worse than persistence
    promoting = ["--json", "-q", "promote", "--model", "hydroseq", "--version", "1", "--tracking-uri", store]
    assert main([*promoting, "--force"]) == 0
    promoted = _json(capsys)
    assert promoted["uri"] == "models:/hydroseq@champion" and promoted["version"] == "1"
    assert promoted["previous_version"] is None and "Trained on" in promoted["description"]
    metrics = MlflowClient(store).get_run(promoted["run_id"]).data.metrics
    (lead0,) = promoted["figures"]
    assert (lead0["candidate"], lead0["persistence"]) == (metrics["validation_model_lead0_median_nse"],
                                                          metrics["validation_persistence_lead0_median_nse"])
    assert promoted["forced"] == (lead0["candidate"] < lead0["persistence"])
    assert MlflowClient(store).get_registered_model("hydroseq").aliases == {"champion": 1}

    common = ["--data", str(ingested), "--issue-time", ISSUE]
    assert main(["-q", "forecast", "--model", str(exported), *common, "--out", str(tmp_path / "folder.nc")]) == 0
    for name, uri in (("alias", "models:/hydroseq@champion"), ("version", "models:/hydroseq/1")):
        args = ["--json", "-q", "forecast", "--model", uri, "--tracking-uri", store, *common]
        assert main([*args, "--out", str(tmp_path / f"{name}.nc")]) == 0
        summary = _json(capsys)
        assert summary["model"]["version"] == "1"
        assert summary["model"]["alias"] == ("champion" if name == "alias" else None)
        assert summary["stations"]["forecast"] > 0
        assert (tmp_path / f"{name}.csv").read_bytes() == (tmp_path / "folder.csv").read_bytes()
        with xr.open_dataset(tmp_path / f"{name}.nc") as registered, \
                xr.open_dataset(tmp_path / "folder.nc") as folder:  # the same forecast, naming its model
            assert registered.attrs.pop("model_name") == "hydroseq" and registered.attrs.pop("model_version") == "1"
            assert registered.attrs.pop("model_alias", None) == ("champion" if name == "alias" else None)
            assert folder.attrs.pop("model_name") == exported.name
            xr.testing.assert_identical(registered, folder)

    assert main(promoting) == 0
    assert _json(capsys)["previous_version"] == "1"  # promoting again changes nothing, with no gate


def test_the_python_api_downloads_into_a_folder_it_removes(store: str) -> None:
    with registered_model("models:/hydroseq/1", store) as model:
        folder = model.model_dir
        assert (folder / "metadata.json").is_file() and (folder / "model.onnx").is_file()
        assert (model.name, model.version, model.alias) == ("hydroseq", "1", None)
    assert not folder.exists()


@pytest.mark.parametrize(("uri", "names"), [
    ("models:/hydroseq", ["models:/NAME@ALIAS"]),
    ("models:/hydroseq/Production", ["models:/NAME/VERSION"]),
    ("models:/hydroseq@champion", ["no alias 'champion'", "hydroseq promote --model hydroseq"]),
    ("models:/hydroseq/9", ["no version 9", "versions: 1"]),
    ("models:/nothing@champion", ["no registered model 'nothing'", "registered: hydroseq"]),
])
def test_a_model_uri_naming_nothing_is_one_line_and_exit_3(uri: str, names: list[str], store: str, ingested: Path,
                                                           tmp_path: Path, capfd) -> None:
    status = main(["forecast", "--model", uri, "--tracking-uri", store, "--data", str(ingested), "--issue-time",
                   ISSUE, "--out", str(tmp_path / "f.nc")])
    assert status == ExitCode.CONFIG
    _one_line_error(capfd, uri, *names)
    assert not list(tmp_path.glob("f.*"))


def test_an_absent_store_is_exit_3_and_one_that_does_not_answer_exit_6(ingested: Path, tmp_path: Path, capfd,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    common = ["--data", str(ingested), "--issue-time", ISSUE, "--out", str(tmp_path / "f.nc")]
    absent = f"sqlite:///{tmp_path / 'none.db'}"
    assert main(["forecast", "--model", "models:/hydroseq@champion", "--tracking-uri", absent, *common]) == 3
    _one_line_error(capfd, "no MLflow store", str(tmp_path / "none.db"))
    assert not (tmp_path / "none.db").exists()  # reading the registry never creates a store

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    server = f"http://127.0.0.1:{port}"
    assert main(["forecast", "--model", "models:/hydroseq@champion", "--tracking-uri", server, *common]) == 6
    _one_line_error(capfd, f"MLflow store {server} did not answer")
    assert main(["promote", "--model", "hydroseq", "--version", "1", "--tracking-uri", server]) == 6
    _one_line_error(capfd, "did not answer")


@pytest.mark.parametrize(("args", "names"), [
    (["--version", "4"], ["no version 4", "versions: 1"]),
    (["--version", "1", "--alias", "v2"], ["--alias 'v2' is reserved"]),
    (["--version", "1", "--alias", "best model"], ["--alias 'best model'"]),
])
def test_promote_refuses_what_is_not_there(args: list[str], names: list[str], store: str, capfd) -> None:
    assert main(["promote", "--model", "hydroseq", *args, "--tracking-uri", store]) == ExitCode.CONFIG
    _one_line_error(capfd, *names)
    assert MlflowClient(store).get_registered_model("hydroseq").aliases == {}


def test_promote_needs_a_version_number(store: str, capfd) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["promote", "--model", "hydroseq", "--version", "one", "--tracking-uri", store])
    assert stopped.value.code == ExitCode.USAGE and "expected a version number" in capfd.readouterr().err


def test_parse_model_uri() -> None:
    assert parse_model_uri("models:/demo@champion") == ("demo", None, "champion")
    assert parse_model_uri(" models:/demo/12 ") == ("demo", "12", None)
    for bad in ("models:/demo/latest", "models:/m-0123abcd", "models:/demo@", "runs:/abc/model"):
        with pytest.raises(ConfigError, match="models:/NAME@ALIAS"):
            parse_model_uri(bad)


def test_an_example_issue_time_outside_the_data_stops_before_training(trained: TrainedRun, tmp_path: Path) -> None:
    config = trained.config.model_copy(deep=True)
    config.tracking.tracking_uri = store_uri(tmp_path)
    config.training.output_dir = tmp_path / "train"
    config.tracking.example_issue_time = dt.date(2030, 1, 31)
    with pytest.raises(ConfigError, match=r"tracking.example_issue_time 2030-01-31: the data \(caravan_daily.nc\)"):
        train(config)
    assert not (tmp_path / "train" / "last.pt").exists()
