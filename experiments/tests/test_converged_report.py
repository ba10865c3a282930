"""The converged report's validation-curve rows and stop reasons."""

from __future__ import annotations

import math

from experiments import measures
from experiments.converged_report import Check, ConvergedRun, curve_points, seed_rows


def _checks(n: int) -> tuple[Check, ...]:
    return tuple(Check(number=i, updates=39 * i, elapsed_s=2.0 * i, validation_median_nse=i / n)
                 for i in range(1, n + 1))


def _run(checks: tuple[Check, ...], best: int, stopped_by: str | None, tool: str = "t", seed: int = 0,
         median_nse: float = 0.5) -> ConvergedRun:
    scores = measures.TestScores(median_nse=median_nse, mean_nse=0.4, median_kge=0.5, mean_kge=0.4, n_basins=31)
    return ConvergedRun(tool=tool, lagged_target=True, seed=seed, test=scores, station_nse={}, beating_persistence=0,
                        compared_with_persistence=31, checks=checks, best_check=best, stopped_by=stopped_by,
                        max_checks=15, patience=4, wall_s=math.nan, peak_rss_mib=math.nan, recipe="")


def test_curve_points_keep_the_first_the_best_and_the_last_check() -> None:
    checks = _checks(97)
    kept = [check.number for check in curve_points(checks, best=67)]
    assert kept[0] == 1 and kept[-1] == 97 and 67 in kept
    assert len(kept) <= 11 and kept == sorted(set(kept))
    assert [check.number for check in curve_points(checks[:8], best=3)] == list(range(1, 9))


def test_a_run_says_why_it_stopped() -> None:
    assert _run(_checks(9), best=5, stopped_by="patience").stop == "patience (4 checks) after check 9"
    assert _run(_checks(6), best=4, stopped_by="time budget (21 min)").stop == "time budget (21 min) after check 6"
    assert (_run(_checks(6), best=6, stopped_by="time budget (21 min)").stop
            == "time budget (21 min) after check 6 (best was the last check)")
    assert _run(_checks(15), best=15, stopped_by=None).stop == "cap of 15 checks hit (best was the last check)"
    assert _run(_checks(15), best=12, stopped_by=None).stop == "cap of 15 checks hit"
    assert _run(_checks(15), best=12, stopped_by=None).best.updates == 39 * 12


def test_the_seed_table_has_a_row_per_tool_run_with_several_seeds() -> None:
    runs = [_run(_checks(9), best=5, stopped_by="patience", tool="a", seed=0, median_nse=0.70),
            _run(_checks(9), best=3, stopped_by="patience", tool="a", seed=1, median_nse=0.66),
            _run(_checks(9), best=5, stopped_by="patience", tool="b", seed=0, median_nse=0.60)]
    (row,) = seed_rows(runs)
    assert row[:5] == ["a, with lagged Q", "0, 1", "0.700 / 0.660", "**0.680** (spread 0.040)", "0.400"]
