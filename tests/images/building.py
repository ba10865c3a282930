"""The image builds of a test run: each once per run, under one lock, started in the background as the run begins.

``images/build.sh local TARGETS`` runs at most once per test run and target set: a record in the run's shared
folder (``built-TARGETS.json``: exit status, seconds, log), written under the run's build lock. As soon as the
collection ends, the run's first pytest-xdist worker (or its only process) starts the builds the selected tests
need in a background process, niced, and the tests that run an image go to the end of the run (the hooks in
``conftest.py``), so that a cold build (the Debian root filesystem, the stand-in base, the forecast target's
dependencies: about two minutes on two cores) overlaps the rest of the suite instead of holding a worker. A
fixture that finds no record yet waits for the lock, then builds what is still missing itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from filelock import FileLock

REPO_ROOT = Path(__file__).resolve().parents[2]
TARGETS = {"forecast_image": "forecast", "images": "all"}  # the session fixtures, and what each has build.sh build


@dataclass(frozen=True)
class Record:
    """One run of ``images/build.sh local TARGETS``."""

    returncode: int
    seconds: float
    log: Path


def build_once(folder: Path, targets: str) -> Record:
    """``images/build.sh local TARGETS`` with buildah, unless this test run has a record of it in ``folder``."""
    with FileLock(str(folder / "build.lock")):
        done = folder / f"built-{targets}.json"
        if not done.exists():
            log = folder / f"build-{targets}.log"
            start = time.monotonic()
            with log.open("w") as out:
                built = subprocess.run(["bash", "images/build.sh", "local", targets], cwd=REPO_ROOT, stdout=out,
                                       stderr=subprocess.STDOUT, timeout=3600,
                                       env={**os.environ, "CONTAINER_TOOL": "buildah"})
            done.write_text(json.dumps({"returncode": built.returncode, "seconds": time.monotonic() - start,
                                        "log": str(log)}))
        record = json.loads(done.read_text())
    return Record(record["returncode"], record["seconds"], Path(record["log"]))


def targets_of(item: pytest.Item) -> str | None:
    """What ``item`` needs built: ``all`` (both images), ``forecast`` or nothing (None)."""
    names = getattr(item, "fixturenames", ())
    needed = [targets for fixture, targets in TARGETS.items() if fixture in names]
    return "all" if "all" in needed else needed[0] if needed else None


def start_in_background(folder: Path, items: list[pytest.Item]) -> subprocess.Popen[bytes] | None:
    """The builds ``items`` need, one after the other in a background process (nice 10), started by the first
    caller of the run (a marker file in ``folder``); None where nothing is needed or another worker started it."""
    needed = [targets for targets in ("forecast", "all") if targets in {targets_of(item) for item in items}]
    if not needed:
        return None
    try:
        (folder / "background.started").open("x").close()
    except FileExistsError:
        return None
    code = ("from pathlib import Path\nfrom tests.images.building import build_once\n"
            f"for targets in {needed!r}:\n    build_once(Path({str(folder)!r}), targets)\n")
    with (folder / "background.log").open("w") as log:
        return subprocess.Popen(["nice", "-n", "10", sys.executable, "-c", code], cwd=REPO_ROOT,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
