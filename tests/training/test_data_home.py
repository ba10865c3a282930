"""Where the MLflow store and artifacts live (``HYDROSEQ_HOME``, ``HYDROSEQ_ARTIFACT_ROOT``), and
reading a run from a store that is not there: an error naming the path, never a new store."""

from __future__ import annotations

from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from hydroseq.cli import main
from hydroseq.config import TrackingConfig
from hydroseq.config.stores import local_store_path, rebase_local_store, resolve_tracking_uri
from hydroseq.errors import ConfigError, ExitCode
from hydroseq.training.tracking import load_run_checkpoint, resolve_artifact_root


@pytest.fixture(autouse=True)
def no_store_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MLFLOW_TRACKING_URI", "HYDROSEQ_HOME", "HYDROSEQ_ARTIFACT_ROOT"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("uri, rebased", [
    ("sqlite:///mlruns.db", "sqlite:////home/mlruns.db"),
    ("sqlite:///sub/m.db?timeout=20", "sqlite:////home/sub/m.db?timeout=20"),
    ("sqlite:////abs/m.db", "sqlite:////abs/m.db"),
    ("sqlite://", "sqlite://"),
    ("mlruns", "/home/mlruns"),
    ("file:mlruns", "file:///home/mlruns"),
    ("file:///abs/mlruns", "file:///abs/mlruns"),
    ("http://server:5000", "http://server:5000"),
])
def test_relative_local_stores_move_under_the_home(uri: str, rebased: str) -> None:
    assert rebase_local_store(uri, Path("/home")) == rebased


def test_local_store_paths() -> None:
    assert local_store_path("sqlite:////abs/m.db") == Path("/abs/m.db")
    assert local_store_path("file:///abs/my%20runs") == Path("/abs/my runs")
    assert local_store_path("https://server") is None and local_store_path("sqlite:///:memory:") is None


def test_home_and_artifact_root_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = TrackingConfig()
    monkeypatch.chdir(tmp_path)
    assert resolve_tracking_uri(config) == "sqlite:///mlruns.db"  # unset: as before, the working directory
    assert resolve_artifact_root(config) == tmp_path / "mlartifacts"
    monkeypatch.setenv("HYDROSEQ_HOME", str(tmp_path / "home"))
    assert resolve_tracking_uri(config) == f"sqlite:///{tmp_path / 'home' / 'mlruns.db'}"
    assert resolve_tracking_uri(config, "sqlite:///flag.db") == f"sqlite:///{tmp_path / 'home' / 'flag.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://server:5000")
    assert resolve_tracking_uri(config) == "http://server:5000"
    assert resolve_artifact_root(config) == tmp_path / "home" / "mlartifacts"
    monkeypatch.setenv("HYDROSEQ_ARTIFACT_ROOT", "elsewhere")
    assert resolve_artifact_root(config) == tmp_path / "home" / "elsewhere"
    monkeypatch.setenv("HYDROSEQ_ARTIFACT_ROOT", "/abs/artifacts")
    assert resolve_artifact_root(config) == Path("/abs/artifacts")


@pytest.mark.parametrize("uri_of", [lambda d: f"sqlite:///{d / 'mlruns.db'}", lambda d: str(d / "mlruns"),
                                    lambda d: (d / "mlruns").as_uri()], ids=["sqlite", "path", "file-uri"])
def test_reading_a_run_from_an_absent_store_creates_nothing(tmp_path: Path, uri_of,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # a file store MLflow is not told to allow is refused earlier
    uri = uri_of(tmp_path)
    with pytest.raises(ConfigError, match="no MLflow store at .* does not exist; name the store") as error:
        load_run_checkpoint("0123abcd", uri)
    assert str(tmp_path) in str(error.value)
    assert list(tmp_path.iterdir()) == []


def test_a_run_missing_from_an_existing_store_says_how_to_name_another(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    MlflowClient(uri).search_experiments()  # an initialised, empty store
    with pytest.raises(ConfigError, match="run '0123abcd' not found in the MLflow store .*--tracking-uri"):
        load_run_checkpoint("0123abcd", uri)


@pytest.mark.parametrize("command", [["evaluate", "--run", "0123abcd"],
                                     ["export", "--run", "0123abcd", "--seq-len", "30", "--out", "model"]])
def test_evaluate_and_export_elsewhere_exit_config_without_making_a_store(
        command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(command) == ExitCode.CONFIG
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "no MLflow store at sqlite:///mlruns.db" in error, error
    assert str(tmp_path / "mlruns.db") in error
    assert list(tmp_path.iterdir()) == []
