"""What a scored split puts in its MLflow run: a handful of headline metrics per lead, every figure in files.

The run's metrics are the figures worth comparing across runs, per split and lead (see
:func:`headline_keys`); the rest of the summary (means, RMSE, bias, the signatures, pooled event
scores, the late-gauge scenarios, CRPS and Brier scores) would bury them in MLflow's compare view.
Nothing is lost: the split's files are logged beside them as artifacts, ``metrics_<split>.csv``
(per station, lead and forecast), ``events_<split>.csv`` (per station, lead, forecast and flood
threshold), ``probabilistic_<split>.csv`` for quantile models (per station and lead),
``signatures_<split>.csv`` (the hydrological signatures of the observed and forecast flows, per station,
lead and forecast) and ``summary_<split>.json`` (every summary figure, what ``hydroseq train --json`` and
``hydroseq evaluate --json`` print).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import mlflow

from hydroseq.training.report import SplitReport

HEADLINE_FORECASTS = ("model", "persistence", "climatology")
HEADLINE_FORECAST_SCORES = ("median_nse", "median_kge")
# Per split and lead, whatever the forecast: the CRPSS and coverage exist for quantile models only.
HEADLINE_LEAD_SCORES = ("stations_beating_persistence", "median_crpss_climatology", "median_crpss_persistence",
                        "median_coverage50", "median_coverage90")


def headline_keys(split: str, leads: Iterable[int]) -> list[str]:
    """The metric names logged for ``split`` at each lead.

    Per lead: ``<split>_<forecast>_lead<k>_median_nse`` and ``..._median_kge`` of the model,
    persistence and climatology, ``<split>_lead<k>_stations_beating_persistence``, and for quantile
    models ``<split>_lead<k>_median_crpss_climatology``, ``..._median_crpss_persistence``,
    ``..._median_coverage50`` and ``..._median_coverage90``.
    """
    keys: list[str] = []
    for lead in leads:
        keys += [f"{split}_{forecast}_lead{lead}_{score}"
                 for forecast in HEADLINE_FORECASTS for score in HEADLINE_FORECAST_SCORES]
        keys += [f"{split}_lead{lead}_{score}" for score in HEADLINE_LEAD_SCORES]
    return keys


def headline_metrics(summary: Mapping[str, float], split: str, leads: Iterable[int]) -> dict[str, float]:
    """The figures of ``summary`` named by :func:`headline_keys` (those it has)."""
    return {key: summary[key] for key in headline_keys(split, leads) if key in summary}


def log_report_files(report: SplitReport, artifact_path: str | None = None) -> None:
    """Log the report's tables and its summary to the active run (under ``artifact_path``, default its root)."""
    tables = [report.csv_path, report.events_csv_path, report.signatures_csv_path, report.summary_path]
    if report.probabilistic is not None:
        tables.append(report.probabilistic.csv_path)
    for path in tables:
        mlflow.log_artifact(str(path), artifact_path)
