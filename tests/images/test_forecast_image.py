"""The forecast image (``--target forecast``), built and run: the daily job as the CronJob runs it.

In the container, as user 10001 with the documented volumes and a read-only root filesystem: ``ingest``
of the bundled basins, ``forecast`` with the shipped probabilistic model, ``report``, then
``pipelines/daily_forecast.sh`` for two days in a row. The same commands run outside the container
(this checkout's ``hydroseq``, a folder laid out like the image's working directory) must leave the same
bytes on the volumes. A SIGTERM to the running job (``podman stop``) ends it with 143 and publishes
nothing; the next run completes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hydroseq.errors import ExitCode
from hydroseq.fileio import verify_set
from tests.images.conftest import REPO_ROOT, Built, Podman, data_volume, give_to_the_image_user, volumes

pytestmark = [pytest.mark.slow, pytest.mark.images]

MODEL = "models/caravan-camels-us-daily-probabilistic"
JOB_ENV = {"HYDROSEQ_INGEST_CONFIG": "data/ingest_daily.yaml", "HYDROSEQ_DATA": "data/ingested.nc",
           "HYDROSEQ_MODEL": MODEL}
START, FIRST, DAYS = "2012-06-01", "2014-06-20", ("2014-06-21", "2014-06-22")


def _data_volume(root: Path) -> Path:
    # from 2012-06: the base model derives its climate indices from at least two years before the issue day
    return data_volume(root, START, FIRST)


def _commands() -> list[list[str]]:
    return [["ingest", "--config", "data/ingest.yaml", "--out", "data/ingested.nc"],
            ["forecast", "--model", MODEL, "--data", "data/ingested.nc", "--issue-time", FIRST,
             "--out", f"forecasts/forecast_{FIRST}.nc"],
            ["report", "--forecast", f"forecasts/forecast_{FIRST}.nc", "--data", "data/ingested.nc",
             "--out", f"forecasts/forecast_{FIRST}.html"]]


def _outside(root: Path) -> list[subprocess.CompletedProcess[str]]:
    """The commands and the two daily runs with this checkout's hydroseq, ``root`` laid out as the image's
    working directory (its configs, pipelines and models beside the volumes)."""
    for name in ("configs", "pipelines", "models"):
        (root / name).symlink_to(REPO_ROOT / name)
    bin_dir = Path(sys.executable).parent
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_TRACKING", "HYDROSEQ_"))},
           "HYDROSEQ": str(bin_dir / "hydroseq"), "PYTHON": sys.executable, **JOB_ENV}
    done = [subprocess.run([str(bin_dir / "hydroseq"), "-q", *command], cwd=root, env=env, capture_output=True,
                           text=True, timeout=300) for command in _commands()]
    done += [subprocess.run(["bash", "pipelines/daily_forecast.sh", day], cwd=root, env=env, capture_output=True,
                            text=True, timeout=300) for day in DAYS]
    return done


def _inside(podman: Podman, image: str, root: Path) -> list[subprocess.CompletedProcess[str]]:
    give_to_the_image_user(root)
    done = [podman.run(root, image, "-q", *command) for command in _commands()]
    done += [podman.run(root, image, "pipelines/daily_forecast.sh", day, env=JOB_ENV, entrypoint="bash")
             for day in DAYS]
    return done


def _contents(folder: Path) -> dict[str, bytes | str]:
    """Every file's bytes and every link's target under ``folder``, by relative path."""
    found: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        name = str(path.relative_to(folder))
        if path.is_symlink():
            found[name] = f"-> {os.readlink(path)}"
        elif path.is_file():
            found[name] = path.read_bytes()
    return found


def test_the_daily_job_in_the_image_publishes_the_bytes_it_publishes_outside(
        podman: Podman, forecast_image: Built, tmp_path: Path) -> None:
    inside = _inside(podman, forecast_image.forecast, _data_volume(tmp_path / "container"))
    for finished in inside:
        assert finished.returncode == 0, f"{finished.args}: {finished.stderr[-3000:]}"
    outside = _outside(_data_volume(tmp_path / "host"))
    for finished in outside:
        assert finished.returncode == 0, f"{finished.args}: {finished.stderr[-3000:]}"

    published = tmp_path / "container" / "forecasts"
    expected = {f"forecast_{day}.{suffix}" for day in DAYS for suffix in ("nc", "csv", "html", "manifest.json")}
    assert expected <= {path.name for path in published.iterdir()}
    assert os.readlink(published / "latest.manifest.json") == f"forecast_{DAYS[-1]}.manifest.json"
    assert set(verify_set(published / "latest.manifest.json") or {}) == {
        f"forecast_{DAYS[-1]}.{suffix}" for suffix in ("nc", "csv", "html")}
    assert "The previous forecast" in (published / f"forecast_{DAYS[-1]}.html").read_text()
    for volume in ("forecasts", "data"):  # the published set and the dataset the job appended to
        container, host = _contents(tmp_path / "container" / volume), _contents(tmp_path / "host" / volume)
        assert sorted(container) == sorted(host), volume
        differing = [name for name in container if container[name] != host[name]]
        assert differing == [], f"{volume}: not the same bytes in and outside the container"


def test_sigterm_stops_the_job_in_the_container_and_the_next_run_completes(
        podman: Podman, forecast_image: Built, tmp_path: Path) -> None:
    """``podman stop`` sends SIGTERM to the job (bash, PID 1 of the container) while it forecasts: it passes it
    on, exits 143, and the published set stays the one before; the next run publishes the day."""
    image = forecast_image.forecast
    root = _data_volume(tmp_path)
    give_to_the_image_user(root)
    first = podman.run(root, image, "-q", *_commands()[0])
    assert first.returncode == 0, first.stderr[-3000:]
    published = root / "forecasts"
    job = podman.run(root, image, "pipelines/daily_forecast.sh", DAYS[0], env=JOB_ENV, entrypoint="bash")
    assert job.returncode == 0, job.stderr[-3000:]
    before = verify_set(published / "latest.manifest.json")
    assert before is not None

    name = f"hydroseq-sigterm-{os.getpid()}"
    started = podman(*podman.run_args(root, image, ["pipelines/daily_forecast.sh", DAYS[1]], JOB_ENV,
                                      "bash", options=("--detach", "--name", name)))
    assert started.returncode == 0, started.stderr
    try:
        deadline = time.monotonic() + 120
        while '"command": "ingest"' not in podman("logs", name).stderr:  # the ingest step is done: forecasting
            assert time.monotonic() < deadline, podman("logs", name).stderr[-3000:]
            time.sleep(0.2)
        stopped = podman("stop", "--time", "60", name)
        assert stopped.returncode == 0, stopped.stderr
        status = podman("wait", name)
        logs = podman("logs", name).stderr
    finally:
        podman("rm", "--force", name)
    assert status.stdout.strip() == str(ExitCode.TERMINATED.value), logs[-3000:]
    assert "stopped by SIGTERM" in logs
    assert verify_set(published / "latest.manifest.json") == before
    assert not list(published.glob(f"forecast_{DAYS[1]}*")) and not list(published.glob(".*"))

    again = podman.run(root, image, "pipelines/daily_forecast.sh", DAYS[1], env=JOB_ENV, entrypoint="bash")
    assert again.returncode == 0, again.stderr[-3000:]
    assert os.readlink(published / "latest.nc") == f"forecast_{DAYS[1]}.nc"
    assert verify_set(published / "latest.manifest.json") is not None


def test_the_forecast_image_holds_no_torch(podman: Podman, forecast_image: Built, tmp_path: Path) -> None:
    root = volumes(tmp_path)
    give_to_the_image_user(root)
    found = podman.run(root, forecast_image.forecast, "-c", "import importlib.util as u; print(u.find_spec('torch'))",
                       entrypoint="python3")
    assert (found.returncode, found.stdout.strip()) == (0, "None"), found.stderr
    train = podman.run(root, forecast_image.forecast, "train", "--config", "configs/train_demo_quick.yaml")
    assert train.returncode == ExitCode.CONFIG and "pip install '.[train]'" in train.stderr, train.stderr[-2000:]
