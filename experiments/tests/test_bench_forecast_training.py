"""The per-step vs sequence training benchmark runs end to end in its --quick form (no timing is asserted)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.bench_forecast_training import main


@pytest.mark.slow
def test_quick_run_writes_both_modes_figures(repo_root: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(repo_root)
    assert main(["--quick", "--json", str(tmp_path / "figures.json")]) == 0
    figures = json.loads((tmp_path / "figures.json").read_text())
    assert set(figures["throughput"]) == set(figures["time_to_accuracy"]) == {"per-step", "sequence"}
    for mode in ("per-step", "sequence"):
        assert figures["throughput"][mode]["targets_per_s"] > 0 and figures["throughput"][mode]["targets_per_pass"] > 0
        assert figures["time_to_accuracy"][mode]["epochs"] >= 1
    assert figures["ratio_per_step_to_sequence"] > 0
