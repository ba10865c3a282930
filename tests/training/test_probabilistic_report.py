"""A quantile model through ``train`` and ``evaluate``: CRPS, coverage and threshold scores, logged to MLflow (a few
as metrics, all in files)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
from mlflow.tracking import MlflowClient
from rich.console import Console

from hydroseq.cli.training import print_split_report
from hydroseq.config import TrainConfig
from hydroseq.training import evaluate, train
from hydroseq.training.checkpoint import Checkpoint
from hydroseq.training.logged_metrics import headline_keys
from hydroseq.training.report import SplitReport

LEVELS = [0.05, 0.25, 0.5, 0.75, 0.95]


def test_evaluating_a_quantile_model_scores_its_distribution(tmp_path: Path, small_nc: Path, make_config) -> None:
    base = make_config(tmp_path, small_nc).model_dump()
    base["data"].update({"leads": [1, 2], "lagged_target": True})
    base["model"].update({"quantiles": LEVELS, "observed_skip": True})
    base["training"].update({"loss": "quantile", "median_nse_weight": 0.5})
    config = TrainConfig.model_validate(base)
    result = train(config)
    scale = np.array(Checkpoint.load(result.output_dir / "best.pt").quantile_scale)
    assert scale.shape == (2, len(LEVELS)) and (scale[:, 2] == 1).all() and not np.allclose(scale, 1.0)
    report = evaluate(result.run_id, "test", tracking_uri=config.tracking.tracking_uri, show_progress=False).report

    assert report.probabilistic is not None
    table = pd.read_csv(report.probabilistic.csv_path, dtype={"station": str})
    assert sorted(table["lead"].unique()) == [1, 2] and len(table) == 2 * 3
    assert {"crps", "crps_climatology", "crps_persistence", "crpss_climatology", "coverage50", "coverage90",
            "brier_2-year", "bss_2-year"} <= set(table.columns)
    assert (table["crps"] > 0).all() and table["coverage90"].between(0, 1).all()
    assert (table["coverage90"] >= table["coverage50"]).all()
    # the point scores are those of the median
    model_rows = report.scores.query("forecast == 'model'")
    assert np.isfinite(model_rows["nse"]).all()

    printed = io.StringIO()
    print_split_report(report, "test", Console(file=printed, width=200))
    assert "test: predictive distribution (median over stations" in printed.getvalue()
    assert "lead 2 model, median over stations: FHV" in printed.getvalue()
    assert "lead 1 model, flood events over stations (hits/misses/false alarms): q95 " in printed.getvalue()

    client = MlflowClient(config.tracking.tracking_uri)
    artifacts = {item.path for item in client.list_artifacts(result.run_id, "evaluation")}
    assert {"evaluation/probabilistic_test.csv", "evaluation/pit_test_lead1.png",
            "evaluation/reliability_test.png"} <= artifacts
    _check_logged_metrics_and_tables(client, result.run_id, report, tmp_path / "downloaded")


def _check_logged_metrics_and_tables(client: MlflowClient, run_id: str, report: SplitReport, folder: Path) -> None:
    """The run's metrics: the epochs' and 11 headline figures per split and lead; the rest in its files."""
    logged = client.get_run(run_id).data.metrics
    scored = {key for key in logged if key.startswith(("validation_", "test_"))}
    assert scored == {*headline_keys("validation", [1, 2]), *headline_keys("test", [1, 2])}
    assert len(scored) == 2 * 2 * 11 and len(logged) <= 60
    assert {"test_lead2_median_coverage90", "test_lead1_median_crpss_climatology",
            "validation_persistence_lead2_median_nse", "test_lead1_stations_beating_persistence"} <= scored
    assert "train_loss" in logged and "val_median_nse" in logged
    folder.mkdir()

    def downloaded(path: str) -> Path:
        return Path(client.download_artifacts(run_id, path, str(folder)))

    summary = json.loads(downloaded("evaluation/summary_test.json").read_text())
    assert set(summary) == set(report.summary)
    for key in ("test_lead1_median_crps", "test_lead1_bss_2-year", "test_lead1_stations_crpss_climatology_positive",
                "test_model_hidden7_lead2_median_nse", "test_model_lead1_mean_nse", "test_model_lead1_event_csi_q95"):
        assert key in summary and key not in logged
    per_station = pd.read_csv(downloaded("evaluation/metrics_test.csv"), dtype={"station": str})
    assert len(per_station) == len(report.scores) == 3 * 2 * 8  # stations x leads x forecasts (late gauges too)
    assert set(per_station["forecast"]) >= {"model", "persistence", "climatology", "model_always_hidden"}
    assert len(pd.read_csv(downloaded("evaluation/events_test.csv"))) == len(report.events)
    assert len(pd.read_csv(downloaded("probabilistic_validation.csv"))) == 3 * 2
    assert "validation_lead1_median_crps" in json.loads(downloaded("summary_validation.json").read_text())
