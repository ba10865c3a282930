"""Fixtures of the fetch tests: a source server on a temporary folder, fast retries, Herbie's config kept here."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hydroseq.fetch import RetryPolicy
from tests.fetch.sources import SourceServer, serving


@pytest.fixture(autouse=True, scope="session")
def _herbie_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Herbie writes its config file on first import, where HERBIE_CONFIG_PATH says: here, not in the home folder."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HERBIE_CONFIG_PATH", str(tmp_path_factory.mktemp("herbie")))
        yield


@pytest.fixture
def server(tmp_path: Path) -> Iterator[SourceServer]:
    """A source server on an empty folder (the tests lay a source out in ``server.root``)."""
    root = tmp_path / "source"
    root.mkdir()
    with serving(root) as running:
        yield running


@pytest.fixture
def fast() -> RetryPolicy:
    """Three attempts, milliseconds apart, short timeouts."""
    return RetryPolicy(attempts=3, first_wait_s=0.01, max_wait_s=0.05, connect_timeout_s=2, read_timeout_s=5)
