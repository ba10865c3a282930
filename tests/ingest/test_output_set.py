"""A real ``hydroseq ingest`` process killed while it publishes: the dataset and its report stay together.

The dataset, ``.report.csv``, ``.report.json`` and ``.records.png`` are one set under
``<stem>.manifest.json``. The hook ``HYDROSEQ_TEST_SIGNAL_AT`` (``hydroseq.fileio``) makes the
process signal itself once k files are written (``written:k``) or k renamed (``published:k``).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from hydroseq.config import IngestConfig, dump_config, load_config
from hydroseq.fileio import FAULT_ENV, verify_set
from hydroseq.ingest import ingest

SET = ["d.manifest.json", "d.nc", "d.records.png", "d.report.csv", "d.report.json"]


def _config(repo_root: Path, start: dt.date, end: dt.date) -> IngestConfig:
    config = load_config(repo_root / "configs" / "ingest_caravan_daily.yaml", IngestConfig)
    config.stations.path = repo_root / config.stations.path
    config.stations.ids = ["01022500", "02064000", "03015500"]
    for source in config.sources:
        source.path = str(repo_root / source.path)
    config.grid.start, config.grid.end = start, end
    return config


def _contents(out: Path) -> dict[str, object] | None:
    """The set's checksums as its manifest verifies them, the report JSON read (it names the output's path)."""
    hashes = verify_set(out.with_name("d.manifest.json"))
    if hashes is None:
        return None
    report = json.loads(out.with_name("d.report.json").read_text())
    assert report.pop("output") == str(out)
    return {**{name: sha for name, sha in hashes.items() if name != "d.report.json"}, "report": report}


def _hidden(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.startswith("."))


@pytest.fixture(scope="module")
def configs(repo_root: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("configs")
    paths = {}
    for label, (start, end) in {"old": (dt.date(2014, 1, 1), dt.date(2014, 1, 31)),
                                "new": (dt.date(2014, 2, 1), dt.date(2014, 3, 31))}.items():
        paths[label] = folder / f"{label}.yaml"
        paths[label].write_text(dump_config(_config(repo_root, start, end)))
    return paths


@pytest.fixture(scope="module")
def sets(configs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, object]]:
    """The manifests' checksums of the old set and of the new one (made without interruption)."""
    hashes = {}
    for label, config in configs.items():
        out = tmp_path_factory.mktemp(label) / "d.nc"
        ingest(load_config(config, IngestConfig), out, show_progress=False)
        assert sorted(path.name for path in out.parent.iterdir()) == SET
        hashes[label] = _contents(out)
    return hashes


@pytest.fixture
def old_set(configs: dict[str, Path], tmp_path: Path) -> Path:
    ingest(load_config(configs["old"], IngestConfig), tmp_path / "d.nc", show_progress=False)
    return tmp_path / "d.nc"


def _ingest(config: Path, out: Path, fault: str | None = None) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != FAULT_ENV}
    if fault:
        env[FAULT_ENV] = fault
    command = [str(Path(sys.executable).parent / "hydroseq"), "ingest", "--config", str(config), "--out", str(out)]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


def test_sigkill_before_the_png_keeps_the_old_set_and_the_next_run_cleans_up(configs, old_set, sets):
    killed = _ingest(configs["new"], old_set, fault="written:3:KILL")  # dataset, report CSV and JSON written
    assert killed.returncode == -signal.SIGKILL
    folder = old_set.parent
    assert _contents(old_set) == sets["old"]
    assert len(_hidden(folder)) == 3
    again = _ingest(configs["new"], old_set)
    assert again.returncode == 0, again.stderr[-2000:]
    assert _hidden(folder) == [] and sorted(path.name for path in folder.iterdir()) == SET
    assert _contents(old_set) == sets["new"]


@pytest.mark.parametrize("moment, expected", [("written:1", "old"), ("published:2", "new")])
def test_sigterm_leaves_one_whole_set_and_no_temporaries(configs, old_set, sets, moment, expected):
    stopped = _ingest(configs["new"], old_set, fault=f"{moment}:TERM")
    assert stopped.returncode == 128 + signal.SIGTERM, stopped.stderr[-2000:]
    assert "hydroseq ingest: interrupted (SIGTERM)" in stopped.stderr and "Traceback" not in stopped.stderr
    folder = old_set.parent
    assert _hidden(folder) == [] and sorted(path.name for path in folder.iterdir()) == SET
    assert _contents(old_set) == sets[expected]
