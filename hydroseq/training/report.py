"""Scoring a trained model on one split against the baselines: CSV and hydrographs."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from hydroseq.config import TrainConfig
from hydroseq.dataset import Scalers, SplitName, StationData
from hydroseq.fileio import atomic_path, write_text_atomic
from hydroseq.model import TrainedModel
from hydroseq.scoring.baselines import doy_climatology, issue_step_persistence
from hydroseq.scoring.event_verification import pooled_event_scores, score_events
from hydroseq.scoring.signature_errors import median_errors, signature_table
from hydroseq.scoring.skill import stations_beating
from hydroseq.training.plots import hydrograph_style, pick_stations, plot_hydrographs, quantile_band
from hydroseq.training.predict import ALWAYS_HIDDEN, SplitPrediction, eval_batch_size, predict_split
from hydroseq.training.probabilistic_report import ProbabilisticReport, report_probabilistic, training_thresholds
from hydroseq.training.scoring import SIGNATURE_COLUMNS, score_stations, summarise

# Late-gauge scenarios scored for models that read the observed target: hidden for the last k steps.
HIDDEN_SCENARIOS = (1, 7, ALWAYS_HIDDEN)
# Forecasts whose pooled event scores go into the summary (all of them are in events_<split>.csv).
EVENT_SUMMARY_FORECASTS = ("model", "persistence")


def scenario_name(hidden: int) -> str:
    """``model``, ``model_hidden7`` or ``model_always_hidden``: how the forecast row is labelled."""
    return {0: "model", ALWAYS_HIDDEN: "model_always_hidden"}.get(hidden, f"model_hidden{hidden}")


@dataclass
class SplitReport:
    """Everything :func:`report_split` produced.

    Attributes
    ----------
    scores
        Long table: one row per station, lead and forecast (``model``, ``persistence``,
        ``climatology``; for models reading the observed target also ``model_hidden<k>`` with
        ``persistence_hidden<k>``, the newest observation k steps before the issue time, and
        ``model_always_hidden``) with the metrics of :func:`hydroseq.scoring.metrics.all_metrics`.
    summary
        ``{"<split>_<forecast>_lead<k>_median_nse": ...}``, medians and means over stations of NSE,
        KGE, RMSE and bias, medians of the :data:`~hydroseq.training.scoring.SIGNATURE_COLUMNS`,
        ``<split>_lead<k>_stations_beating_persistence``, for the model and persistence
        ``<split>_<forecast>_lead<k>_event_{pod,far,csi}_<level>`` pooled over stations, and for the
        model ``<split>_model_lead<k>_median_<signature>_error``. A few of them are the run's MLflow
        metrics (:func:`hydroseq.training.logged_metrics.headline_keys`).
    csv_path, plot_paths
        Files written.
    signatures, signatures_csv_path
        The hydrological signatures (:mod:`hydroseq.scoring.signatures`) of the observed and each
        forecast's flows per station, lead and forecast, with the forecast's error
        (:func:`hydroseq.scoring.signature_errors.signature_table`), and the CSV they are in,
        ``signatures_<split>.csv``.
    events, events_csv_path
        Event verification (:func:`hydroseq.scoring.event_verification.score_events`) of every forecast at
        the training-period flood thresholds: one row per station, lead, forecast and threshold.
    summary_path
        ``summary`` as a JSON object (NaN as null), ``summary_<split>.json``.
    probabilistic
        Quantile models: CRPS, interval coverage and flood-threshold scores (its summary is
        merged into ``summary``, its CSV and PNGs are written beside the others).
    """

    scores: pd.DataFrame
    summary: dict[str, float]
    csv_path: Path
    plot_paths: list[Path]
    events: pd.DataFrame
    events_csv_path: Path
    summary_path: Path
    signatures: pd.DataFrame
    signatures_csv_path: Path
    probabilistic: ProbabilisticReport | None = None


def baseline_forecasts(station_data: StationData, config: TrainConfig, prediction: SplitPrediction,
                       lead: int, hidden: tuple[int, ...] = ()) -> dict[str, np.ndarray]:
    """Persistence (``Q(t) = Q(t - lead)``, at least one step) and training-period day-of-year climatology.

    For each ``k`` in ``hidden`` (k >= 1) also ``persistence_hidden<k>``: ``Q(t) = Q(t - lead - k)``,
    what an operator has when the gauge is k steps late.
    """
    times = station_data.times
    in_train = station_data.grid.period_mask(times, config.data.splits.train)
    day = station_data.grid.day_of_year(times)
    climatology = doy_climatology(station_data.target, day, in_train, at=prediction.in_split)
    # Only the split and the steps persistence reaches back to are shifted (the grid is 3-8x longer).
    first = prediction.first_step
    start = max(first - max(lead, 1) - max(hidden, default=0), 0)
    window = station_data.target[:, start: first + len(prediction.times)]
    in_window = prediction.in_split[start: first + len(prediction.times)]
    late = {f"persistence_hidden{k}": issue_step_persistence(window, lead + k)[:, in_window] for k in hidden if k > 0}
    return {"persistence": issue_step_persistence(window, max(lead, 1))[:, in_window],
            "climatology": climatology, **late}


def report_split(model: TrainedModel, station_data: StationData, scalers: Scalers, config: TrainConfig,
                 split: SplitName, device: torch.device, out_dir: str | Path, n_plots: int = 4,
                 late_gauge: bool = True, show_progress: bool = True) -> SplitReport:
    """Predict ``split``, score model and baselines per station, write CSVs (metrics, events, signatures) and a few
    hydrographs.

    ``late_gauge`` adds the :data:`HIDDEN_SCENARIOS` for models that read the observed target (the
    finite ones predict every step from its own window: ``seq_len`` times the cost of the plain score).
    """
    out_dir = Path(out_dir)
    reads_observed = config.data.lagged_target and config.data.mode == "per_step"
    hidden = HIDDEN_SCENARIOS if late_gauge and reads_observed else ()
    predictions = {scenario: predict_split(model, station_data, scalers, config.data, split, device,
                                           batch_size=eval_batch_size(config),
                                           stride=config.training.eval_stride,
                                           show_progress=show_progress, hide_last=scenario)
                   for scenario in (0, *hidden)}
    prediction = predictions[0]
    station_ids = list(station_data.station_ids)
    thresholds = training_thresholds(station_data, config,
                                     station_data.grid.period_mask(station_data.times, config.data.splits.train))
    frames, event_frames, signature_frames, summary = [], [], [], {}
    times = station_data.grid.step_starts(prediction.times)
    rain = station_data.runoff_precipitation()
    precipitation = None if rain is None else rain[:, prediction.in_split]
    for row, lead in enumerate(prediction.leads):
        forecasts = {scenario_name(scenario): predicted.sim[row] for scenario, predicted in predictions.items()}
        forecasts.update(baseline_forecasts(station_data, config, prediction, lead, hidden))
        by_forecast = {name: score_stations(prediction.obs, sim, station_ids, station_data.grid.step)
                       for name, sim in forecasts.items()}
        for name, scores in by_forecast.items():
            frames.append(scores.assign(lead=lead, forecast=name))
            summarised = {**summarise(scores), **summarise(scores, SIGNATURE_COLUMNS, ("median",))}
            summary.update({f"{split}_{name}_lead{lead}_{key}": value for key, value in summarised.items()})
            events = score_events(prediction.obs, forecasts[name], thresholds)
            event_frames.append(events.assign(lead=lead, forecast=name))
            if name in EVENT_SUMMARY_FORECASTS:
                summary.update({f"{split}_{name}_lead{lead}_{key}": value
                                for key, value in pooled_event_scores(events, thresholds.levels).items()})
        signatures = signature_table(prediction.obs, forecasts, times, station_ids, precipitation,
                                     station_data.target_units)
        signature_frames.append(signatures.assign(lead=lead))
        summary.update({f"{split}_model_lead{lead}_{key}": value
                        for key, value in median_errors(signatures.query("forecast == 'model'")).items()})
        beating, compared = stations_beating(by_forecast["model"]["nse"].to_numpy(),
                                             by_forecast["persistence"]["nse"].to_numpy())
        summary[f"{split}_lead{lead}_stations_beating_persistence"] = float(beating)
        summary[f"{split}_lead{lead}_stations_compared_with_persistence"] = float(compared)
    scores = pd.concat(frames, ignore_index=True)[["station", "lead", "forecast", *frames[0].columns[1:-2]]]
    csv_path = out_dir / f"metrics_{split}.csv"
    with atomic_path(csv_path) as tmp:
        scores.to_csv(tmp, index=False)
    events = pd.concat(event_frames, ignore_index=True)
    events = events[["station", "lead", "forecast", *event_frames[0].columns[:-2].drop("station")]]
    events_csv_path = out_dir / f"events_{split}.csv"
    with atomic_path(events_csv_path) as tmp:
        events.to_csv(tmp, index=False)
    signatures = pd.concat(signature_frames, ignore_index=True)
    signatures = signatures[["station", "lead", *signature_frames[0].columns[1:-1]]]
    signatures_csv_path = out_dir / f"signatures_{split}.csv"
    with atomic_path(signatures_csv_path) as tmp:
        signatures.to_csv(tmp, index=False, float_format="%.6g")
    first_lead_nse = scores.query("forecast == 'model' and lead == @prediction.leads[0]")["nse"]
    model_nse = dict(zip(station_ids, first_lead_nse, strict=True))
    units = f" [{station_data.target_units}]" if station_data.target_units else ""
    plots = plot_hydrographs(out_dir / f"hydrographs_{split}", pick_stations(model_nse, n_plots), station_ids,
                             prediction.times, prediction.obs, prediction.sim[0], model_nse,
                             ylabel=f"{config.data.target}{units}",
                             band=quantile_band(None if prediction.quantiles is None else prediction.quantiles[0],
                                                prediction.quantile_levels),
                             style=hydrograph_style(station_data, split, prediction.times, prediction.leads[0]))
    probabilistic = None
    if prediction.quantiles is not None:
        probabilistic = report_probabilistic(prediction, station_data, config, split, out_dir, thresholds)
        summary.update(probabilistic.summary)
    summary_path = write_summary(summary, out_dir / f"summary_{split}.json")
    return SplitReport(scores, summary, csv_path, plots, events, events_csv_path, summary_path, signatures,
                       signatures_csv_path, probabilistic)


def write_summary(summary: dict[str, float], path: Path) -> Path:
    """Write every figure of ``summary`` to ``path`` as one JSON object, NaN as null; returns ``path``."""
    plain = {key: value if math.isfinite(value) else None for key, value in summary.items()}
    write_text_atomic(path, json.dumps(plain, indent=1) + "\n")
    return path
