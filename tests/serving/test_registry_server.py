"""The registry in the CPU image: ``models:/NAME@champion`` resolved against a real ``mlflow server`` process
by a forecast-only install (``pip install '.[forecast]'`` in a fresh virtual environment: mlflow-skinny, no
torch, no SQLAlchemy), as the CronJob does; its forecast is the one the exported directory gives, byte for
byte. A local store from that install is one line, exit 3."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import mlflow
import pytest
from mlflow.tracking import MlflowClient

from hydroseq.errors import ExitCode
from hydroseq.forecast import run_forecast
from hydroseq.serving.promote import promote
from hydroseq.serving.pyfunc_logging import log_exported_model
from hydroseq.training.tracking import use_tracking_uri

REPO_ROOT = Path(__file__).resolve().parents[2]
ISSUE = "2014-09-30"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def forecast_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``hydroseq`` command of a fresh virtual environment holding the forecast extra only."""
    venv = tmp_path_factory.mktemp("forecast_only") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # --no-compile: the .pyc files are written on first import instead, 40 % of the install's CPU time saved
    installed = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--no-compile",
                                f"{REPO_ROOT}[forecast]"], capture_output=True, text=True, timeout=1200)
    assert installed.returncode == 0, installed.stderr[-3000:]
    absent = subprocess.run([str(venv / "bin" / "python"), "-c", "import importlib.util as u; print([m for m in "
                             "('torch', 'sqlalchemy', 'alembic', 'flask') if u.find_spec(m)])"],
                            capture_output=True, text=True, check=True)
    assert absent.stdout.strip() == "[]", absent.stdout  # the training stack and MLflow's server are not there
    return venv / "bin" / "hydroseq"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real tracking server: SQLite behind it, artifacts served over HTTP (mlflow-artifacts:)."""
    folder = tmp_path_factory.mktemp("mlflow_server")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [str(Path(sys.executable).parent / "mlflow"), "server", "--backend-store-uri",
               f"sqlite:///{folder / 'server.db'}", "--artifacts-destination", str(folder / "artifacts"),
               "--host", "127.0.0.1", "--port", str(port), "--workers", "1"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=(folder / "server.log").open("w"))
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail(f"mlflow server did not start: {(folder / 'server.log').read_text()[-2000:]}")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_the_forecast_only_install_forecasts_from_the_alias_on_a_tracking_server(
        forecast_only: Path, server: str, exported: Path, ingested: Path, tmp_path: Path) -> None:
    with use_tracking_uri(server):
        experiment = MlflowClient(server).create_experiment("cronjob")
        with mlflow.start_run(experiment_id=experiment) as run:
            log_exported_model("model", exported, ingested)
        mlflow.register_model(f"runs:/{run.info.run_id}/model", "cronjob")
    promote("cronjob", 1, "champion", server, force=True)  # the tiny model logged no validation figures

    env = {key: value for key, value in os.environ.items() if not key.startswith(("MLFLOW_", "HYDROSEQ_"))}
    done = subprocess.run([str(forecast_only), "-q", "forecast", "--model", "models:/cronjob@champion",
                           "--tracking-uri", server, "--data", str(ingested), "--issue-time", ISSUE,
                           "--out", str(tmp_path / "served.nc")], env=env, capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    run_forecast(exported, ingested, ISSUE, out=tmp_path / "folder.nc", show_progress=False)
    assert (tmp_path / "served.csv").read_bytes() == (tmp_path / "folder.csv").read_bytes()

    (tmp_path / "mlruns.db").touch()  # a local store that is there: this install cannot read it
    local = subprocess.run([str(forecast_only), "-q", "forecast", "--model", "models:/cronjob@champion",
                            "--tracking-uri", f"sqlite:///{tmp_path / 'mlruns.db'}", "--data", str(ingested),
                            "--issue-time", ISSUE, "--out", str(tmp_path / "local.nc")], env=env,
                           capture_output=True, text=True, timeout=300, cwd=tmp_path)
    lines = local.stderr.strip().splitlines()
    assert local.returncode == ExitCode.CONFIG and len(lines) == 1 and "Traceback" not in local.stderr, local.stderr
    assert "tracking server's registry (http://...) only" in lines[0]
