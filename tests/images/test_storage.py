"""One container store for the build and the run (``images/storage.sh``), on a store of the test's own.

podman records a store's driver in its database and follows it; buildah has none. Where the database records
a driver buildah would not choose by itself, buildah is given podman's, and podman finds the image buildah
committed there (the build of ``make test`` failed with 'short-name "hydroseq:0.1.0" did not resolve' on
such a host). A driver set in ``HYDROSEQ_IMAGE_STORAGE_DRIVER`` against the database is a one-line refusal.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.images.conftest import require_tools, storage_options

pytestmark = pytest.mark.slow


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[Path]:
    """A store of the test's own; its run root (in /tmp, named after the store) is removed afterwards."""
    require_tools()
    yield tmp_path
    options = storage_options("podman", {**os.environ, "HYDROSEQ_IMAGE_STORAGE": str(tmp_path)})
    shutil.rmtree(options[options.index("--runroot") + 1], ignore_errors=True)


def _run(tool: str, options: tuple[str, ...], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([tool, *options, *args], capture_output=True, text=True, timeout=120)


def _recorded(store: Path) -> tuple[str, str]:
    """A store whose podman database records a driver other than buildah's default (vfs, or overlay where the
    host's default is vfs), returned as (recorded, buildah's default)."""
    where = storage_options("podman", {**os.environ, "HYDROSEQ_IMAGE_STORAGE": str(store),
                                       "HYDROSEQ_IMAGE_STORAGE_DRIVER": ""})
    default = _run("buildah", where, "info", "--format", "{{.store.GraphDriverName}}").stdout.strip()
    recorded = "overlay" if default == "vfs" else "vfs"
    made = _run("podman", (*where, "--storage-driver", recorded), "info", "--format", "{{.Store.GraphDriverName}}")
    assert (made.returncode, made.stdout.strip()) == (0, recorded), made.stderr
    return recorded, default


def test_buildah_builds_on_the_driver_podmans_database_records_and_podman_finds_the_image(store: Path) -> None:
    env = {**{k: v for k, v in os.environ.items() if k != "HYDROSEQ_IMAGE_STORAGE_DRIVER"},
           "HYDROSEQ_IMAGE_STORAGE": str(store)}
    recorded, default = _recorded(store)
    assert recorded != default
    podman, buildah = storage_options("podman", env), storage_options("buildah", env)
    assert "--storage-driver" not in podman  # podman keeps its database's driver ...
    assert buildah == (*podman, "--storage-driver", recorded)  # ... and buildah is given it

    container = _run("buildah", buildah, "from", "scratch")
    assert container.returncode == 0, container.stderr
    committed = _run("buildah", buildah, "commit", "--quiet", "--rm", container.stdout.strip(), "hydroseq-probe:1")
    assert committed.returncode == 0, committed.stderr
    assert _run("podman", podman, "image", "exists", "hydroseq-probe:1").returncode == 0
    assert _run("podman", podman, "info", "--format", "{{.Store.GraphDriverName}}").stdout.strip() == recorded


def test_a_driver_set_against_podmans_database_is_refused_in_one_line(store: Path) -> None:
    _, default = _recorded(store)
    env = {**os.environ, "HYDROSEQ_IMAGE_STORAGE": str(store), "HYDROSEQ_IMAGE_STORAGE_DRIVER": default}
    podman = storage_options("podman", env)
    assert podman[-2:] == ("--storage-driver", default)
    refused = _run("podman", podman, "images")
    assert refused.returncode != 0 and "database configuration mismatch" in refused.stderr, refused.stderr
