"""The start and the end of a tracked run: what is logged once, before and after the epochs."""

from __future__ import annotations

import logging
from pathlib import Path

import mlflow
import torch
from mlflow.entities import Param
from mlflow.tracking import MlflowClient

import hydroseq
import hydroseq.training.checkpoint as ckpt
import hydroseq.training.store as store
import hydroseq.training.tracking as tracking
from hydroseq.config import TrainConfig, dump_config
from hydroseq.fileio import write_text_atomic
from hydroseq.training.calibration import fit_quantile_scale
from hydroseq.training.data import TrainingData
from hydroseq.training.logged_metrics import headline_metrics, log_report_files
from hydroseq.training.model_version import MODEL_ARTIFACT as MODEL_ARTIFACT
from hydroseq.training.model_version import example_end, version_description
from hydroseq.training.model_version import keep_complete_model as keep_complete_model
from hydroseq.training.model_version import register_model as register_model
from hydroseq.training.predict import eval_batch_size, predict_split
from hydroseq.training.report import SplitReport, report_split
from hydroseq.training.result import ModelLogger

LOGGER = logging.getLogger(__name__)


def start_run(config: TrainConfig, data: TrainingData, tracking_uri: str, out_dir: Path,
              run_id: str | None = None, parent_run_id: str | None = None,
              extra_tags: dict[str, str] | None = None) -> str:
    """Create the MLflow run (or reuse ``run_id`` when resuming) and log what is known before training.

    A new run gets: the resolved config as params (dotted keys), tags ``git_commit``,
    ``mlflow.source.git.commit``, ``dataset_checksum``, ``data_path``, ``mode`` (and ``forecast_inputs``, with
    ``forecast_inputs_upper_bound`` when any is ``perfect``), and artifacts ``config.yaml``, ``scalers.json``,
    ``ingest_report.yaml`` and, when the ingest wrote them beside the dataset, its
    ``<name>.report.*`` / ``<name>.records.png`` files under ``ingest/``, and the dataset as its input
    (:func:`hydroseq.training.tracking.dataset_input`). With ``parent_run_id``
    the run is that run's child (MLflow's ``mlflow.parentRunId`` tag: an ensemble member). ``extra_tags``
    are added to a new run's (a fine-tuned run's link to its base model).
    """
    example_end(data.station_data, config)  # a tracking.example_issue_time outside the data stops here, not at the end
    experiment_id = tracking.ensure_experiment(config.tracking, tracking_uri)
    if run_id is not None:
        return run_id
    client = MlflowClient(tracking_uri)
    commit = tracking.git_commit()
    tags = {"git_commit": commit, "dataset_checksum": data.station_data.checksum,
            "data_path": str(data.path.resolve()), "mode": config.data.mode,
            "hydroseq_version": hydroseq.__version__}
    if commit != "unknown":
        tags[tracking.GIT_COMMIT_TAG] = commit.removesuffix("-dirty")
    if config.data.forecast_inputs:
        tags["forecast_inputs"] = ", ".join(f"{item.variable} ({item.source})" for item in config.data.forecast_inputs)
    if any(item.source == "perfect" for item in config.data.forecast_inputs):
        tags["forecast_inputs_upper_bound"] = ("perfect: observed values over the lead window; the scores are an "
                                               "upper bound, not an operational forecast's")
    if parent_run_id is not None:
        tags["mlflow.parentRunId"] = parent_run_id
    tags.update(extra_tags or {})
    run_id = store.retry_locked(tracking_uri, config.tracking, lambda: client.create_run(
        experiment_id, run_name=config.tracking.run_name or config.tracking.experiment, tags=tags).info.run_id)
    store.retry_locked(tracking_uri, config.tracking, lambda: client.log_inputs(
        run_id, datasets=[tracking.dataset_input(data.path, data.station_data)]))
    params = tracking.flatten_params(config.model_dump(mode="json"))
    params["data.resolved_path"] = str(data.path.resolve())
    store.retry_locked(tracking_uri, config.tracking, lambda: client.log_batch(
        run_id, params=[Param(key, value) for key, value in params.items()]))
    write_text_atomic(out_dir / "config.yaml", dump_config(config))
    data.scalers.to_json(out_dir / "scalers.json")
    write_text_atomic(out_dir / "ingest_report.yaml", tracking.ingest_report(data.path))
    for name in ("config.yaml", "scalers.json", "ingest_report.yaml"):
        client.log_artifact(run_id, str(out_dir / name))
    for report in sorted(data.path.parent.glob(f"{data.path.stem}.re*.*")):  # the ingest's report and records plot
        client.log_artifact(run_id, str(report), "ingest")
    return run_id


def finish_run(config: TrainConfig, data: TrainingData, out_dir: Path, device: torch.device,
               show_progress: bool = True, log_model: ModelLogger | None = None) -> SplitReport:
    """Inside the active run: score the best checkpoint on the validation split, log it and the model.

    Returns the validation scores of the best checkpoint. Its headline figures are logged as metrics
    (:func:`hydroseq.training.logged_metrics.headline_metrics`), its tables and whole summary as
    artifacts (``metrics_validation.csv``, ``events_validation.csv``, ``summary_validation.json``,
    for quantile models ``probabilistic_validation.csv``), with the checkpoint
    (``checkpoints/best.pt``) and a few hydrographs. The model named ``model`` is logged by
    ``log_model`` (none without it) and registered (:func:`register_model`) unless
    ``tracking.register_model`` is false.

    Run again after a kill (``--resume`` of a run whose epochs were all committed) it logs no metric
    twice, no second model and no second model version.
    """
    best_path = out_dir / "best.pt" if (out_dir / "best.pt").exists() else out_dir / "last.pt"
    checkpoint = ckpt.Checkpoint.load(best_path)
    # a correction keeps its base's calibration: with no forecast it must give the base's quantiles exactly
    if config.model.quantiles is not None and config.training.calibrate_quantiles and not config.model.base_correction:
        calibrate(checkpoint, data, config, device).save(best_path)
    model = checkpoint.build_model()
    model.to(device)
    report = report_split(model, data.station_data, data.scalers, config, "validation", device, out_dir,
                          late_gauge=False, show_progress=show_progress)
    active = mlflow.active_run()
    if active is None:
        raise RuntimeError("finish_run needs the run's MLflow run to be active")
    run = active.info
    headline = headline_metrics(report.summary, "validation", config.data.lead_steps)
    store.log_new_metrics(mlflow.get_tracking_uri(), run.run_id, config.tracking, [{store.STEP_KEY: 0, **headline}])
    mlflow.log_artifact(str(best_path), tracking.BEST_CHECKPOINT_ARTIFACT)
    log_report_files(report)
    for plot in report.plot_paths:
        mlflow.log_artifact(str(plot), "hydrographs_validation")
    if log_model is not None:
        if not keep_complete_model(run.run_id, run.experiment_id):
            log_model(MODEL_ARTIFACT, checkpoint, data.station_data)
        if config.tracking.register_model:
            best_epoch = checkpoint.early_stopping.best_epoch
            register_model(run.run_id, run.experiment_id, config.tracking, version_description(
                config, data.station_data, report.summary, run.run_name, run.run_id,
                best_epoch if best_epoch >= 0 else None))
    return report


def calibrate(checkpoint: ckpt.Checkpoint, data: TrainingData, config: TrainConfig,
              device: torch.device) -> ckpt.Checkpoint:
    """``checkpoint`` with its quantile spread fitted on the validation period (from the uncalibrated model)."""
    checkpoint.quantile_scale = None
    prediction = predict_split(checkpoint.build_model().to(device), data.station_data, data.scalers, config.data,
                               "validation", device,
                               batch_size=eval_batch_size(config),
                               stride=config.training.eval_stride)
    checkpoint.quantile_scale = fit_quantile_scale(prediction).tolist()
    return checkpoint
