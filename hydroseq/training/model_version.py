"""The registered model version of a finished run: registered once, with a description of what it is.

The description (Markdown, as MLflow's UI shows it) says what was trained (mode, inputs, leads,
quantiles, members), on which data (the ingested file, its ``dataset_checksum``, stations and the
train and validation periods), how it scored on the validation period (median NSE over stations per
lead, beside persistence) and which run and commit made it: what an operator reads before
``hydroseq promote``.
"""

from __future__ import annotations

import contextlib
import io
import logging

import mlflow
import numpy as np
from mlflow.entities import LoggedModel, LoggedModelStatus
from mlflow.tracking import MlflowClient

import hydroseq.training.store as store
from hydroseq.config import TrackingConfig, TrainConfig
from hydroseq.dataset import StationData
from hydroseq.errors import ConfigError
from hydroseq.grid.issue_times import locate_issue

LOGGER = logging.getLogger(__name__)
MODEL_ARTIFACT = "model"


def version_description(config: TrainConfig, station_data: StationData, summary: dict[str, float],
                        run_name: str | None, run_id: str, best_epoch: int | None) -> str:
    """What a registered version is, in a few lines (see the module docstring)."""
    data, model = config.data, config.model
    leads = data.leads or []
    reads = [*data.dynamic_inputs, *([f"observed {data.target}"] if data.lagged_target else []),
             *(f"{item.variable} forecast ({item.source})" for item in data.forecast_inputs)]
    spread = (f", quantiles {min(model.quantiles):g}..{max(model.quantiles):g}" if model.quantiles else "")
    members = config.training.ensemble
    what = (f"{data.mode} LSTM (hidden {model.hidden_size}) forecasting {data.target} at leads "
            f"{', '.join(map(str, leads))} (steps of {station_data.grid.frequency}){spread}"
            f"{f', {members} members' if members > 1 else ''}; reads {', '.join(reads)} and "
            f"{len(data.static_inputs)} static attributes.")
    splits = data.splits
    trained_on = (f"Trained on {station_data.path.name} (dataset_checksum {station_data.checksum[:12]}, "
                  f"{station_data.n_stations} stations), train {splits.train.start}..{splits.train.end}, "
                  f"validation {splits.validation.start}..{splits.validation.end}.")
    scores = []
    for lead in leads:
        model_nse = summary.get(f"validation_model_lead{lead}_median_nse")
        if model_nse is None:
            continue
        persistence = summary.get(f"validation_persistence_lead{lead}_median_nse")
        scores.append(f"lead {lead} {model_nse:.3f}" + (f" (persistence {persistence:.3f})"
                                                         if persistence is not None else ""))
    scored = (f"Validation median NSE over stations{f' (best epoch {best_epoch})' if best_epoch is not None else ''}: "
              f"{', '.join(scores)}." if scores else "")
    made_by = f"Run {run_name or run_id} ({run_id})."
    return "\n\n".join(part for part in (what, trained_on, scored, made_by) if part)


def example_end(station_data: StationData, config: TrainConfig) -> int:
    """Grid position of the logged model's input example's issue step: the last step of the local day
    ``tracking.example_issue_time`` (default: of the validation period; without one in the data, its last step).

    Raises
    ------
    ConfigError
        If ``tracking.example_issue_time`` ends outside the data (checked before training starts).
    """
    times, grid = station_data.times, station_data.grid
    day = config.tracking.example_issue_time
    if day is None:
        inside = np.flatnonzero(grid.period_mask(times, config.data.splits.validation))
        return int(inside[-1]) if len(inside) else len(times) - 1
    step = locate_issue(times, grid, grid.day_end(day))
    if step.before_the_data or step.past_the_data:
        raise ConfigError(f"tracking.example_issue_time {day}: the data ({station_data.path.name}) hold "
                          f"{np.datetime_as_string(times[0], 'D')} .. {np.datetime_as_string(times[-1], 'D')} (UTC "
                          "labels); choose a day within them")
    return step.index


def _logged_models(run_id: str, experiment_id: str) -> list[LoggedModel]:
    """The run's logged models named ``model``, complete or not."""
    return [model for model in MlflowClient().search_logged_models(
        [experiment_id], filter_string=f"source_run_id = '{run_id}'") if model.name == MODEL_ARTIFACT]


def keep_complete_model(run_id: str, experiment_id: str) -> bool:
    """True when the run already holds a complete logged ``model``; else deletes any incomplete one
    (a kill in the middle of logging it) and returns False."""
    models = _logged_models(run_id, experiment_id)
    if any(model.status == LoggedModelStatus.READY for model in models):
        return True
    for model in models:
        MlflowClient().delete_logged_model(model.model_id)
    return False


def register_model(run_id: str, experiment_id: str, config: TrackingConfig, description: str = "") -> None:
    """Register the run's complete logged ``model`` as a new version of ``config.registered_model_name``
    (default: the experiment's name) with ``description``, unless that name already holds a version from
    this run (then a version without a description gets it: a registration killed before it was written)."""
    name = config.registered_model_name or config.experiment
    client = MlflowClient()

    def register() -> None:
        done = [version for version in client.search_model_versions(f"run_id = '{run_id}'") if version.name == name]
        if not done:
            (model,) = [model for model in _logged_models(run_id, experiment_id)
                        if model.status == LoggedModelStatus.READY]
            with contextlib.redirect_stderr(io.StringIO()):  # MLflow prints its own line; ours goes to the log
                done = [mlflow.register_model(f"models:/{model.model_id}", name)]
            LOGGER.info(f"registered model {name!r} version {done[0].version} (run {run_id})")
        if description and not done[0].description:
            client.update_model_version(name, done[0].version, description=description)

    store.retry_locked(mlflow.get_tracking_uri(), config, register)
