"""The noise-table benchmark runs end to end in its --quick form (no skill is asserted: one epoch)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.noise_table import main


@pytest.mark.slow
def test_quick_run_scores_every_level_on_both_periods(repo_root: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(repo_root)
    assert main(["--quick", "--json", str(tmp_path / "figures.json")]) == 0
    members = json.loads((tmp_path / "figures.json").read_text())["members"]
    assert set(members) == {"0", "8"} and all(set(seeds) == {"0"} for seeds in members.values())
    scores = members["8"]["0"]
    assert len(scores) == 2 * 3 * 2  # periods x leads x (median, mean)
    assert all(-1e3 < value <= 1.0 for value in scores.values())
    assert scores != members["0"]["0"], "the noise changed nothing"
