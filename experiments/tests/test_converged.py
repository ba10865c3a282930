"""The converged head-to-head: both tools see the same days, and the quick run writes the whole report."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from experiments.converged import HYDROSEQ_TOOL, NH_TOOL, QUICK_SETTINGS, converged_protocol, main
from experiments.converged_report import MARKDOWN_NAME, PLOT_NAME, RAW_NAME
from experiments.hydroseq_side import hydroseq_config
from experiments.nh import venv as nh_venv
from experiments.nh.config import nh_config
from experiments.protocol import CARAVAN_DIR


@pytest.mark.parametrize("lagged", [False, True])
def test_both_tools_read_the_same_days_for_the_target_day(lagged: bool, tmp_path: Path) -> None:
    protocol = dataclasses.replace(converged_protocol(quick=False, settings=QUICK_SETTINGS), lagged_target=lagged)
    nh = nh_config(protocol, data_dir=tmp_path, basin_file=tmp_path / "basins.txt", run_dir=tmp_path)
    ours = hydroseq_config(protocol, "per_step", tmp_path / "data.nc", tmp_path, own_batch_size=True)
    assert ours.data.lagged_target is lagged
    if lagged:  # hydroseq: Q(d) as the lead-1 forecast issued on d - 1; NH: Q(d) from inputs shifted one day
        assert ours.data.lead_steps == [1]
        assert nh["lagged_features"] == {name: 1 for name in (*protocol.dynamic_inputs, "streamflow")}
        assert nh["dynamic_inputs"] == [f"{name}_shift1" for name in (*protocol.dynamic_inputs, "streamflow")]
    else:  # both simulate Q(d) from the forcing up to d
        assert ours.data.lead_steps == [0]
        assert "lagged_features" not in nh and nh["dynamic_inputs"] == list(protocol.dynamic_inputs)
    assert ours.batching.batch_size == 16 and nh["batch_size"] == 256  # each tool's own recipe
    assert nh["epochs"] == QUICK_SETTINGS.nh_max_checks
    assert nh["max_updates_per_epoch"] == QUICK_SETTINGS.nh_updates_per_check


@pytest.mark.slow
@pytest.mark.skipif(not nh_venv.is_ready(), reason="NeuralHydrology's venv (python -m experiments.nh.venv) is absent")
def test_neuralhydrology_shifts_a_lagged_input_to_the_day_before(tmp_path: Path) -> None:
    """NeuralHydrology's own ``_add_lagged_features`` on a real basin: ``<name>_shift1`` on day d is day d - 1."""
    raw = pd.read_csv(CARAVAN_DIR / "01022500.csv", index_col="date", parse_dates=True)
    raw[["total_precipitation_sum", "streamflow"]].iloc[:400].to_csv(tmp_path / "basin.csv")
    script = (
        "import sys, types, pandas as pd\n"
        "from neuralhydrology.datasetzoo.basedataset import BaseDataset\n"
        "df = pd.read_csv(sys.argv[1], index_col='date', parse_dates=True).asfreq('D')\n"
        "cfg = types.SimpleNamespace(lagged_features={'total_precipitation_sum': 1, 'streamflow': 1},"
        " autoregressive_inputs=[])\n"
        "BaseDataset._add_lagged_features(types.SimpleNamespace(cfg=cfg, _check_autoregressive_inputs=lambda: None),"
        " df).to_csv(sys.argv[2])\n")
    subprocess.run([str(nh_venv.venv_python()), "-c", script, str(tmp_path / "basin.csv"), str(tmp_path / "out.csv")],
                   check=True, capture_output=True)
    shifted = pd.read_csv(tmp_path / "out.csv", index_col="date", parse_dates=True)
    for name in ("total_precipitation_sum", "streamflow"):
        assert np.isnan(shifted[f"{name}_shift1"].iloc[0])
        np.testing.assert_allclose(shifted[f"{name}_shift1"].iloc[1:].to_numpy(), shifted[name].iloc[:-1].to_numpy())


@pytest.mark.slow
def test_quick_converged_run_writes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "results"
    assert main(["--quick", "--out", str(out), "--work-dir", str(tmp_path / "work")]) == 0
    markdown = (out / MARKDOWN_NAME).read_text()
    raw = json.loads((out / RAW_NAME).read_text())
    assert (out / PLOT_NAME).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    tools = [HYDROSEQ_TOOL, NH_TOOL] if nh_venv.is_ready() else [HYDROSEQ_TOOL]
    assert len(raw["runs"]) == 2 * len(tools)
    for tool in tools:
        for lagged in ("no", "with"):
            assert f"| {tool}, {lagged} lagged Q, seed 0 |" in markdown
    for run in raw["runs"]:
        checks = run["checks"]
        assert 1 <= len(checks) <= 3 and [c["number"] for c in checks] == list(range(1, len(checks) + 1))
        assert run["best_check"] in [c["number"] for c in checks]
        best = max(checks, key=lambda c: c["validation_median_nse"])["validation_median_nse"]
        assert next(c for c in checks if c["number"] == run["best_check"])["validation_median_nse"] == best
        assert run["test"]["n_basins"] == 2 and run["compared_with_persistence"] == 2
    for row in ("| baseline: persistence |", "| baseline: climatology |", "## Validation curves",
                "## What each tool sees, and what differs"):
        assert row in markdown
    if nh_venv.is_ready():
        assert markdown.count("both tools score the same test observations") == 2
    else:
        assert "NeuralHydrology skipped" in markdown


@pytest.mark.slow
@pytest.mark.skipif(not nh_venv.is_ready(), reason="needs NeuralHydrology's venv (python -m experiments.nh.venv)")
def test_a_resumed_run_keeps_hydroseq_and_continues_neuralhydrology(tmp_path: Path) -> None:
    work = tmp_path / "work"
    common = ["--quick", "--work-dir", str(work), "--nh-patience", "9"]
    assert main([*common, "--out", str(tmp_path / "first"), "--nh-max-checks", "2"]) == 0
    hydroseq_results = sorted(work.glob("hydroseq_*/run/result.json"))
    written = [path.stat().st_mtime_ns for path in hydroseq_results]
    assert main([*common, "--out", str(tmp_path / "second"), "--nh-max-checks", "4", "--resume", "--nh-jobs", "2"]) == 0
    assert [path.stat().st_mtime_ns for path in hydroseq_results] == written
    first = json.loads((tmp_path / "first" / RAW_NAME).read_text())
    second = json.loads((tmp_path / "second" / RAW_NAME).read_text())
    for before, after in zip(first["runs"], second["runs"], strict=True):
        numbers = [check["number"] for check in after["checks"]]
        if after["tool"] == HYDROSEQ_TOOL:
            assert after == before
            continue
        assert numbers == [1, 2, 3, 4] and after["checks"][:2] == before["checks"]
        assert after["wall_s"] > before["wall_s"]
    markdown = (tmp_path / "second" / MARKDOWN_NAME).read_text()
    assert markdown.count("continued from its saved check(s) 2 with NeuralHydrology's `continue_training`") == 2
