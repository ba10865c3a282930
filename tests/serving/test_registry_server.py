"""The registry in the CPU image: ``models:/NAME@champion`` resolved against a real ``mlflow server`` process
by the forecast image (``hydroseq-forecast``, the Dockerfile's forecast target: ``pip install '.[forecast]'``,
mlflow-skinny, no torch, no SQLAlchemy), run as the CronJob runs it (user 10001, read-only root filesystem,
the volumes; the host's network, where the server listens); its forecast is the one the exported directory
gives, byte for byte. A local store from that install is one line, exit 3. The image is the one ``make test``
builds for its image smoke test (``tests/images``), so this test adds no build and no install of its own."""

from __future__ import annotations

import shutil
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
from tests.images import conftest as image_fixtures
from tests.images.conftest import IMAGE_ROOT, Built, Podman, give_to_the_image_user, volumes

forecast_image, podman = image_fixtures.forecast_image, image_fixtures.podman  # the image's session fixtures
ISSUE = "2014-09-30"
pytestmark = pytest.mark.slow


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


def test_the_forecast_image_forecasts_from_the_alias_on_a_tracking_server(
        podman: Podman, forecast_image: Built, server: str, exported: Path, ingested: Path, tmp_path: Path) -> None:
    with use_tracking_uri(server):
        experiment = MlflowClient(server).create_experiment("cronjob")
        with mlflow.start_run(experiment_id=experiment) as run:
            log_exported_model("model", exported, ingested)
        mlflow.register_model(f"runs:/{run.info.run_id}/model", "cronjob")
    promote("cronjob", 1, "champion", server, force=True)  # the tiny model logged no validation figures

    root = volumes(tmp_path / "volumes")
    shutil.copy(ingested, root / "data" / "ingested.nc")
    (root / "data" / "mlruns.db").touch()  # a local store that is there: this install cannot read it
    give_to_the_image_user(root)
    absent = podman.run(root, forecast_image.forecast, "-c", "import importlib.util as u; print([m for m in "
                        "('torch', 'sqlalchemy', 'alembic', 'flask') if u.find_spec(m)])", entrypoint="python3")
    assert (absent.returncode, absent.stdout.strip()) == (0, "[]"), absent.stderr  # no training stack, no server

    def forecast(tracking_uri: str, out: str) -> subprocess.CompletedProcess[str]:
        return podman.run(root, forecast_image.forecast, "-q", "forecast", "--model", "models:/cronjob@champion",
                          "--tracking-uri", tracking_uri, "--data", "data/ingested.nc", "--issue-time", ISSUE,
                          "--out", f"forecasts/{out}", network="host")

    done = forecast(server, "served.nc")
    assert done.returncode == 0, done.stderr[-3000:]
    run_forecast(exported, ingested, ISSUE, out=tmp_path / "folder.nc", show_progress=False)
    assert (root / "forecasts" / "served.csv").read_bytes() == (tmp_path / "folder.csv").read_bytes()

    local = forecast(f"sqlite:///{IMAGE_ROOT}/data/mlruns.db", "local.nc")
    lines = local.stderr.strip().splitlines()
    assert local.returncode == ExitCode.CONFIG and len(lines) == 1 and "Traceback" not in local.stderr, local.stderr
    assert "tracking server's registry (http://...) only" in lines[0]
    assert not (root / "forecasts" / "local.nc").exists()
