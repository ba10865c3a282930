"""``hydroseq evaluate``: score a tracked run's best checkpoint on a split against the baselines."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mlflow

from hydroseq.config import TrackingConfig
from hydroseq.config.stores import resolve_tracking_uri
from hydroseq.dataset import SplitName, load_station_data
from hydroseq.errors import ConfigError
from hydroseq.training.logged_metrics import headline_metrics, log_report_files
from hydroseq.training.report import SplitReport, report_split
from hydroseq.training.runtime import resolve_device, set_threads
from hydroseq.training.tracking import load_run_checkpoint, use_tracking_uri


@dataclass(frozen=True)
class Evaluation:
    """What :func:`evaluate` returns: the scores, and on which data they were computed.

    ``trained_on_this_data`` is False when the dataset's checksum differs from the one the run
    was trained on (scores on other data than intended, e.g. a file ingested anew).
    """

    report: SplitReport
    period: SplitName
    data_path: Path
    trained_on_this_data: bool


def evaluate(run_id: str, period: SplitName = "test", tracking_uri: str | None = None,
             data_path: str | Path | None = None, show_progress: bool = True) -> Evaluation:
    """Score run ``run_id`` on ``period`` (train, validation or test) and log the result to the same run.

    Per station: NSE, KGE (r, alpha, beta), RMSE, bias, beta-NSE, the flow-duration-curve biases,
    peak timing, missed peaks and Peak-MAPE of the model and of two baselines on the same steps, persistence
    and the training-period day-of-year climatology; the hydrological signatures of the observed and
    of each forecast's flows (:mod:`hydroseq.scoring.signature_errors`); and per flood event at the
    training-period thresholds, hits, misses and false alarms. Writes ``metrics_<period>.csv``,
    ``events_<period>.csv``, ``signatures_<period>.csv``, ``summary_<period>.json`` (and
    ``probabilistic_<period>.csv`` for a quantile model) and hydrographs to ``<output_dir>/evaluation/``
    and logs them to the run under ``evaluation/``, with the headline figures as metrics
    (:func:`hydroseq.training.logged_metrics.headline_metrics`).

    Parameters
    ----------
    data_path
        Ingested NetCDF; default: the file the run was trained on (its ``data_path`` tag).
    show_progress
        Draw a progress bar on a terminal.
    """
    if period not in ("train", "validation", "test"):
        raise ConfigError(f"period must be train, validation or test, not {period!r}")
    uri = resolve_tracking_uri(TrackingConfig(), tracking_uri)
    checkpoint, run = load_run_checkpoint(run_id, uri)
    model, config = checkpoint.build_model(), checkpoint.config
    path = Path(data_path or run.data.tags.get("data_path", ""))
    station_data = load_station_data(path, config.data)
    set_threads(config.training)
    device = resolve_device(config.training.device)
    out_dir = Path(config.training.output_dir) / "evaluation"
    report = report_split(model.to(device), station_data, checkpoint.scalers, config, period, device, out_dir,
                          show_progress=show_progress)
    with use_tracking_uri(uri), mlflow.start_run(run_id=run_id):
        mlflow.log_metrics(headline_metrics(report.summary, period, config.data.lead_steps))
        log_report_files(report, "evaluation")
        for plot in report.plot_paths:
            mlflow.log_artifact(str(plot), f"evaluation/hydrographs_{period}")
        if report.probabilistic is not None:
            for plot in report.probabilistic.plot_paths:
                mlflow.log_artifact(str(plot), "evaluation")
    return Evaluation(report, period, path, station_data.checksum == run.data.tags.get("dataset_checksum"))
