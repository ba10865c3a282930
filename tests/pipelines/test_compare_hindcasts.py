"""pipelines/compare_hindcasts.py: two hindcasts' scores side by side, with the baselines of the first."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from pipelines.compare_hindcasts import main


def _scores(path: Path, model_nse: list[float]) -> str:
    rows = []
    for lead in (1, 2):
        for station, nse in zip(("a", "b", "c"), model_nse, strict=True):
            rows += [(station, lead, "model", 10, nse - 0.1 * lead, 0.5), (station, lead, "persistence", 10, 0.5, 0.5),
                     (station, lead, "climatology", 10, 0.0, 0.1)]
    pd.DataFrame(rows, columns=["station", "lead", "forecast", "n", "nse", "kge"]).to_csv(path, index=False)
    return str(path)


def test_the_table_gives_each_hindcast_its_median_mean_and_stations_beating_persistence(tmp_path: Path, capsys) -> None:
    first = _scores(tmp_path / "first.csv", [0.4, 0.7, 0.9])
    second = _scores(tmp_path / "second.csv", [0.8, 0.9, -0.5])
    assert main([f"observed only={first}", f"with forecasts={second}"]) == 0
    lines = capsys.readouterr().out.splitlines()
    observed = next(line for line in lines if "observed only" in line)
    assert "0.600" in observed and "0.567" in observed and "2 of 3" in observed  # lead 1: 0.3, 0.6, 0.8
    forecasts = next(line for line in lines if "with forecasts" in line)
    assert "0.700" in forecasts and "0.300" in forecasts and "2 of 3" in forecasts
    assert sum("beats" not in line and "persistence" in line for line in lines) == 2  # one per lead


def test_an_unreadable_scores_file_is_one_line(tmp_path: Path, capsys) -> None:
    assert main([f"x={tmp_path / 'missing.csv'}"]) == 2
    message = capsys.readouterr().err.strip()
    assert "missing.csv" in message and "\n" not in message


def test_a_hindcast_without_a_label_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        main([str(tmp_path / "scores.csv")])
