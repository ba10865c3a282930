"""Report quantities and target checks: definitions that must hold whatever the run."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from experiments.measures import EpochPoint, OverheadRun, PaddingRun, ToolRun, score_series
from experiments.measures import TestScores as Scores
from experiments.protocol import CARAVAN_DIR
from experiments.targets import accuracy_check, bucket_padding, check_all, pipeline_overhead, time_to_accuracy
from hydroseq.scoring import metrics


def make_run(name: str, loading: float, epoch_seconds: list[float], nse: list[float], test_nse: float = 0.5) -> ToolRun:
    epochs = tuple(EpochPoint(epoch=i + 1, train_s=s, samples=100, valid_steps=36500, target_steps=100,
                              validation_s=1.0, validation_median_nse=v)
                   for i, (s, v) in enumerate(zip(epoch_seconds, nse, strict=True)))
    return ToolRun(name=name, data_loading_s=loading, epochs=epochs, peak_rss_mib=100.0,
                   test=Scores(test_nse, test_nse, 0.0, 0.0, 3), test_epoch=1, wall_s=0.0)


def test_time_to_accuracy_counts_loading_and_training_not_validation() -> None:
    run = make_run("x", 5.0, [10.0, 20.0], [0.3, 0.6])
    assert run.time_to_accuracy() == [(15.0, 0.3), (35.0, 0.6)]
    assert run.seconds_to_reach(0.5) == 35.0
    assert math.isinf(run.seconds_to_reach(0.7))
    assert run.samples_per_s == pytest.approx(200 / 30)
    assert run.valid_steps_per_s == pytest.approx(73000 / 30)


def test_time_to_accuracy_target_uses_the_references_best() -> None:
    reference = make_run("NH", 10.0, [100.0] * 4, [0.3, 0.5, 0.6, 0.55])  # best 0.6 after 310 s
    fast = make_run("ours", 1.0, [10.0] * 10, [0.2, 0.4, 0.5, 0.61, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7])  # 41 s
    slow = make_run("slow", 1.0, [100.0] * 3, [0.2, 0.4, 0.65])  # 301 s
    assert time_to_accuracy(fast, reference).met is True
    assert time_to_accuracy(slow, reference).met is False
    never = time_to_accuracy(make_run("never", 1.0, [1.0], [0.1]), reference)
    assert never.met is False and "never reached" in never.measured


def test_accuracy_overhead_and_padding_targets() -> None:
    reference = make_run("NH", 0.0, [1.0], [0.5], test_nse=0.6)
    assert accuracy_check(make_run("a", 0.0, [1.0], [0.5], test_nse=0.61), reference).met is True
    assert accuracy_check(make_run("b", 0.0, [1.0], [0.5], test_nse=0.59), reference).met is False
    assert pipeline_overhead(OverheadRun("per_step", 4, (1.0, 1.05, 1.02), (0.95, 0.96, 0.97))).met is True
    assert pipeline_overhead(OverheadRun("per_step", 4, (2.0, 2.0), (1.0, 1.0))).met is False
    assert bucket_padding(PaddingRun("bucketed, padded", 10, 100, (1.0,), epoch_padding=0.05)).met is True
    assert bucket_padding(PaddingRun("bucketed, padded", 10, 100, (1.0,), epoch_padding=0.2)).met is False


def test_without_the_reference_run_the_comparison_is_not_measured() -> None:
    checks = check_all([make_run("hydroseq per-step", 0.0, [1.0], [0.5])], "NeuralHydrology CudaLSTM", [], [])
    assert [check.status for check in checks] == ["not measured"]


def test_score_series_matches_hydroseq_metrics_on_real_streamflow() -> None:
    obs = np.stack([pd.read_csv(CARAVAN_DIR / f"{b}.csv")["streamflow"].to_numpy()[-2000:]
                    for b in ("01022500", "01547700", "02064000")])
    sim = np.roll(obs, 1, axis=1)  # persistence-like simulation
    scores = score_series(obs, sim)
    per_basin = [metrics.nse(o, s) for o, s in zip(obs, sim, strict=True)]
    assert scores.median_nse == pytest.approx(float(np.median(per_basin)))
    assert scores.mean_nse == pytest.approx(float(np.mean(per_basin)))
    assert scores.n_basins == 3
