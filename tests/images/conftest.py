"""The two images of the Dockerfile, built once per test run with buildah and run with podman.

``images`` builds both targets with ``images/build.sh local`` (buildah, the stand-in bases of
``images/stand_in_bases.sh``), once for every pytest-xdist worker of the run (a file lock), on the layer
cache of buildah's storage, so that a run after an unchanged or code-only change rebuilds in seconds.
Without buildah and podman the tests are skipped, except under ``make test`` (``HYDROSEQ_REQUIRE_IMAGES=1``),
where that is a failure (``make install-test`` installs them).

:class:`Podman` runs a container as the deployment does: the image's user (10001), the four volumes of
the Dockerfile from folders of the test, a read-only root filesystem (``--read-only``: podman mounts a
tmpfs on /tmp, /var/tmp and /run, nothing else is writable but the volumes) and no network. Its
``containers.conf`` holds what this host needs and the commands leave out: runc (crun refuses a host
with cgroups v1 and v2 side by side), cgroupfs, and the host's hard limits of open files and processes
(the engine's defaults are above them).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from filelock import FileLock

from tests.fixtures import shared_dir

REPO_ROOT = Path(__file__).resolve().parents[2]
IMAGE_ROOT = "/srv/hydroseq"
VOLUMES = ("data", "mlflow", "runs", "forecasts")
USER = 10001
TOOLS = ("buildah", "podman", "mmdebstrap")


def _version() -> str:
    for line in (REPO_ROOT / "pyproject.toml").read_text().splitlines():
        if line.startswith("version = "):
            return line.split('"')[1]
    raise AssertionError("no version in pyproject.toml")


FORECAST_IMAGE = f"hydroseq-forecast:{_version()}"
TRAIN_IMAGE = f"hydroseq:{_version()}"


@dataclass(frozen=True)
class Built:
    """What the session's build made and how long it took."""

    forecast: str
    train: str
    seconds: float  # the whole build.sh run: stand-in bases and both targets
    log: Path


def _require_tools() -> None:
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


@pytest.fixture(scope="session")
def images(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """Both images, built once per test run (the first worker to get the lock builds, the others wait)."""
    _require_tools()
    folder = shared_dir(tmp_path_factory, "images")
    with FileLock(str(folder / "build.lock")):
        done = folder / "built.json"
        if not done.exists():
            log = folder / "build.log"
            start = time.monotonic()
            with log.open("w") as out:
                built = subprocess.run(["bash", "images/build.sh", "local"], cwd=REPO_ROOT, stdout=out,
                                       stderr=subprocess.STDOUT, timeout=3600,
                                       env={**os.environ, "CONTAINER_TOOL": "buildah"})
            assert built.returncode == 0, f"images/build.sh local: {log.read_text()[-5000:]}"
            done.write_text(json.dumps({"seconds": time.monotonic() - start, "log": str(log)}))
        record = json.loads(done.read_text())
    return Built(FORECAST_IMAGE, TRAIN_IMAGE, record["seconds"], Path(record["log"]))


def give_to_the_image_user(path: Path) -> None:
    """Hand ``path`` (recursively) to the image's user, as a deployment does with its volumes."""
    if os.geteuid() == 0:
        subprocess.run(["chown", "-R", f"{USER}:{USER}", str(path)], check=True)
    else:  # rootless podman: the user's namespace maps 10001 to one of its subordinate ids
        subprocess.run(["podman", "unshare", "chown", "-R", f"{USER}:{USER}", str(path)], check=True)


class Podman:
    """``podman`` with this host's containers.conf, and ``podman run`` the way the deployment runs the image."""

    def __init__(self, conf: Path) -> None:
        self.env = {**os.environ, "CONTAINERS_CONF": str(conf)}

    def __call__(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["podman", *args], env=self.env, capture_output=True, text=True, timeout=timeout)

    def run_args(self, root: Path, image: str, args: Sequence[str], env: dict[str, str] | None = None,
                 entrypoint: str | None = None, options: Sequence[str] = ("--rm",)) -> list[str]:
        """``run`` with ``root``'s four folders as the volumes, read-only root filesystem, no network."""
        volumes = [word for name in VOLUMES for word in ("-v", f"{root / name}:{IMAGE_ROOT}/{name}")]
        environment = [word for name, value in (env or {}).items() for word in ("-e", f"{name}={value}")]
        return ["run", *options, "--network", "none", "--read-only", *volumes, *environment,
                *(["--entrypoint", entrypoint] if entrypoint else []), image, *args]

    def run(self, root: Path, image: str, *args: str, env: dict[str, str] | None = None,
            entrypoint: str | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return self(*self.run_args(root, image, args, env, entrypoint), timeout=timeout)


@pytest.fixture(scope="session")
def podman(images: Built, tmp_path_factory: pytest.TempPathFactory) -> Podman:
    """``podman`` for the tests (after the images are built)."""
    return Podman(_containers_conf(tmp_path_factory.mktemp("podman")))


def volumes(root: Path) -> Path:
    """The four volume folders under ``root`` (made if missing), returned as ``root``."""
    for name in VOLUMES:
        (root / name).mkdir(parents=True, exist_ok=True)
    return root
