"""The two images of the Dockerfile, built with buildah and run with podman, in one container store.

``images`` builds both targets with ``images/build.sh local all`` (buildah, the stand-in bases of
``images/stand_in_bases.sh``), ``forecast_image`` the forecast target alone (``images/build.sh local forecast``:
no torch stand-in, the build ``make test``'s one image test needs). Each is built once per test run, on the
layer cache of the store, so that a run after an unchanged or code-only change rebuilds in seconds; the build
starts in the background as the run begins and the tests that run an image go last (``building.py``). Without
buildah and podman the tests are skipped, except under ``make test`` and ``make test-images``
(``HYDROSEQ_REQUIRE_IMAGES=1``), where that is a failure (``make install-test`` installs them).

The store: ``images/storage.sh`` names it (``HYDROSEQ_IMAGE_STORAGE``, a folder, else the engine's default
store) and its driver (``HYDROSEQ_IMAGE_STORAGE_DRIVER``, else podman's own, which buildah is given), and
the build and :class:`Podman` pass those options, so that podman runs what buildah built.

:class:`Podman` runs a container as the deployment does: the image's user (10001), the four volumes of
the Dockerfile from folders of the test, a read-only root filesystem (``--read-only``: podman mounts a
tmpfs on /tmp, /var/tmp and /run, nothing else is writable but the volumes) and no network. Its
``containers.conf`` holds what this host needs and the commands leave out: runc (crun refuses a host
with cgroups v1 and v2 side by side), cgroupfs, and the host's hard limits of open files and processes
(the engine's defaults are above them).
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import resource
import shutil
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from hydroseq.config import IngestConfig, dump_config, load_config
from tests.fixtures import shared_dir
from tests.images.building import build_once, start_in_background, targets_of

REPO_ROOT = Path(__file__).resolve().parents[2]
IMAGE_ROOT = "/srv/hydroseq"
VOLUMES = ("data", "mlflow", "runs", "forecasts")
USER = 10001
TOOLS = ("buildah", "podman", "mmdebstrap")
_BACKGROUND: list[subprocess.Popen[bytes]] = []  # the build this process started in the background


def _version() -> str:
    for line in (REPO_ROOT / "pyproject.toml").read_text().splitlines():
        if line.startswith("version = "):
            return line.split('"')[1]
    raise AssertionError("no version in pyproject.toml")


FORECAST_IMAGE = f"hydroseq-forecast:{_version()}"
TRAIN_IMAGE = f"hydroseq:{_version()}"


@dataclass(frozen=True)
class Built:
    """What one of the session's builds made (``train`` empty where only the forecast target was built)."""

    forecast: str
    train: str
    seconds: float  # the whole build.sh run: stand-in bases and the targets
    log: Path


def require_tools() -> None:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        message = f"no {', '.join(missing)}: apt-get install buildah podman runc mmdebstrap (make install-test does)"
        if os.environ.get("HYDROSEQ_REQUIRE_IMAGES") == "1":
            pytest.fail(message)
        pytest.skip(message)


def _containers_conf(folder: Path) -> Path:
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    nproc = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    nofile = 1048576 if nofile == resource.RLIM_INFINITY else nofile
    nproc = 4096 if nproc == resource.RLIM_INFINITY else min(nproc, 4096)
    engine = ['cgroup_manager = "cgroupfs"'] + (['runtime = "runc"'] if shutil.which("runc") else [])
    path = folder / "containers.conf"
    path.write_text("[containers]\n" f'default_ulimits = ["nofile={nofile}:{nofile}", "nproc={nproc}:{nproc}"]\n'
                    "[engine]\n" + "\n".join(engine) + "\n")
    return path


def storage_options(tool: str, env: dict[str, str] | None = None) -> tuple[str, ...]:
    """The global options of ``tool`` (podman or buildah) that name the store and its driver
    (``images/storage.sh``, with ``env``, by default this process's environment)."""
    printed = subprocess.run(["bash", "images/storage.sh", tool], cwd=REPO_ROOT, capture_output=True, text=True,
                             timeout=120, env=env)
    assert printed.returncode == 0, f"images/storage.sh {tool}: {printed.stderr}"
    return tuple(printed.stdout.splitlines())


@functools.cache
def podman_storage() -> tuple[str, ...]:
    """podman's options for the store the images are built in."""
    return storage_options("podman")


def _build(tmp_path_factory: pytest.TempPathFactory, targets: str) -> Built:
    """``images/build.sh local TARGETS`` once per test run (``tests/images/building.py``: usually started in the
    background as the run began; a fixture that comes first waits for it, or builds)."""
    require_tools()
    record = build_once(shared_dir(tmp_path_factory, "images"), targets)
    assert record.returncode == 0, f"images/build.sh local {targets}: {record.log.read_text()[-5000:]}"
    return Built(FORECAST_IMAGE, TRAIN_IMAGE if targets == "all" else "", record.seconds, record.log)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests that run an image go last (their order kept), so that the builds started in the background
    have the rest of the run to finish in."""
    items.sort(key=lambda item: targets_of(item) is not None)


def pytest_collection_finish(session: pytest.Session) -> None:
    """The first worker starts the builds the selected tests need, in the background (``building.py``)."""
    if session.config.option.collectonly or any(shutil.which(tool) is None for tool in TOOLS):
        return
    started = start_in_background(shared_dir(session.config._tmp_path_factory, "images"), session.items)
    if started is not None:
        _BACKGROUND.append(started)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """An interrupted run stops its background build; otherwise it ends by itself (another worker may wait on it)."""
    if exitstatus == pytest.ExitCode.INTERRUPTED:
        for process in _BACKGROUND:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)


@pytest.fixture(scope="session")
def images(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """Both images, built once per test run."""
    return _build(tmp_path_factory, "all")


@pytest.fixture(scope="session")
def forecast_image(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The forecast image alone (no torch stand-in, no train target), built once per test run."""
    return _build(tmp_path_factory, "forecast")


def give_to_the_image_user(path: Path) -> None:
    """Hand ``path`` (recursively) to the image's user, as a deployment does with its volumes."""
    if os.geteuid() == 0:
        subprocess.run(["chown", "-R", f"{USER}:{USER}", str(path)], check=True)
    else:  # rootless podman: the user's namespace maps 10001 to one of its subordinate ids
        subprocess.run(["podman", *podman_storage(), "unshare", "chown", "-R", f"{USER}:{USER}", str(path)],
                       check=True)


class Podman:
    """``podman`` with this host's containers.conf and the build's store, and ``podman run`` the way the
    deployment runs the image."""

    def __init__(self, conf: Path, storage: Sequence[str]) -> None:
        self.env = {**os.environ, "CONTAINERS_CONF": str(conf)}
        self.storage = list(storage)

    def __call__(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["podman", *self.storage, *args], env=self.env, capture_output=True, text=True,
                              timeout=timeout)

    def run_args(self, root: Path, image: str, args: Sequence[str], env: dict[str, str] | None = None,
                 entrypoint: str | None = None, options: Sequence[str] = ("--rm",), network: str = "none") -> list[str]:
        """``run`` with ``root``'s four folders as the volumes, read-only root filesystem, no network (or
        ``network``: ``host`` reaches a server of the test on 127.0.0.1)."""
        volumes = [word for name in VOLUMES for word in ("-v", f"{root / name}:{IMAGE_ROOT}/{name}")]
        environment = [word for name, value in (env or {}).items() for word in ("-e", f"{name}={value}")]
        return ["run", *options, "--network", network, "--read-only", *volumes, *environment,
                *(["--entrypoint", entrypoint] if entrypoint else []), image, *args]

    def run(self, root: Path, image: str, *args: str, env: dict[str, str] | None = None,
            entrypoint: str | None = None, timeout: float = 600, network: str = "none"
            ) -> subprocess.CompletedProcess[str]:
        return self(*self.run_args(root, image, args, env, entrypoint, network=network), timeout=timeout)


@pytest.fixture(scope="session")
def podman(tmp_path_factory: pytest.TempPathFactory) -> Podman:
    """``podman`` for the tests, on the store the images are built in."""
    require_tools()
    return Podman(_containers_conf(tmp_path_factory.mktemp("podman")), podman_storage())


def volumes(root: Path) -> Path:
    """The four volume folders under ``root`` (made if missing), returned as ``root``."""
    for name in VOLUMES:
        (root / name).mkdir(parents=True, exist_ok=True)
    return root


def data_volume(root: Path, start: str, first: str) -> Path:
    """``root``'s volumes, the data volume holding the bundled raw files and two ingest configs as shipped (paths
    relative to the working directory): ``data/ingest.yaml``, the first ingest from ``start`` up to ``first``, and
    ``data/ingest_daily.yaml``, the daily job's (its window is the job's)."""
    volumes(root)
    for folder in ("stations", "daily_caravan_camels_us"):
        shutil.copytree(REPO_ROOT / "data" / folder, root / "data" / folder)
    config = load_config(REPO_ROOT / "configs" / "ingest_caravan_daily.yaml", IngestConfig)
    config.grid.start, config.grid.end = dt.date.fromisoformat(start), dt.date.fromisoformat(first)
    (root / "data" / "ingest.yaml").write_text(dump_config(config))
    config.grid.start = config.grid.end
    (root / "data" / "ingest_daily.yaml").write_text(dump_config(config))
    return root
