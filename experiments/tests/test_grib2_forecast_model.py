"""The weather-forecast-runs experiment runs end to end in its --quick form (no skill is asserted: one epoch)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.grib2_forecast_model import main


@pytest.mark.slow
def test_quick_run_trains_scores_and_hindcasts_from_both_example_products(repo_root: Path, tmp_path: Path,
                                                                           monkeypatch) -> None:
    monkeypatch.chdir(repo_root)
    main(["--quick", "--out", str(tmp_path / "work"), "--json", str(tmp_path / "figures.json")])
    figures = json.loads((tmp_path / "figures.json").read_text())
    assert figures["test_noisy_inputs"] != figures["test_perfect_inputs"], "the noise changed nothing"
    for kind in ("hres", "ensemble"):
        assert len(figures[f"hindcast_grib2_{kind}"]["hindcast"]) == 3  # one row per lead
    assert any(name.endswith("_probabilistic.csv") for name in figures["hindcast_grib2_ensemble"]["files"])
