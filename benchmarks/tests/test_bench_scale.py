"""The growth-with-stations benchmark runs end to end at tiny sizes (no timing is asserted)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.bench_scale import REPO_ROOT, STAGES, main


@pytest.mark.slow
def test_tiny_run_measures_every_stage(tmp_path: Path) -> None:
    figures_path, plot_path = tmp_path / "scale.json", tmp_path / "scale.png"
    assert main(["--stations", "31", "62", "--steps", "2", "--out-dir", str(tmp_path / "work"),
                 "--json", str(figures_path), "--plot", str(plot_path)]) == 0
    figures = json.loads(figures_path.read_text())
    assert [run["stations"] for run in figures["runs"]] == [31, 62]
    for run in figures["runs"]:
        assert set(run["stages"]) == set(STAGES)
        for stage in run["stages"].values():
            assert stage["seconds"] > 0 and stage["peak_rss_mib"] > 0
        assert run["stages"]["ingest"]["output_mib"] > 0
        assert 0 < run["stages"]["first batch"]["load_s"] <= run["stages"]["first batch"]["first_batch_s"]
        assert run["stages"]["train"]["epoch_train_s"] > 0
        assert run["model_arrays_float32_mib"] > run["ingested_float32_mib"] > 0
        assert run["train_peak_over_model_arrays"] > 0
    assert (tmp_path / "work" / "n62" / "csv" / "01022500_r001.csv").read_bytes() == \
        (REPO_ROOT / "data" / "daily_caravan_camels_us" / "01022500.csv").read_bytes()
    assert set(figures["slopes_two_largest"]) == set(STAGES)
    assert plot_path.stat().st_size > 0
