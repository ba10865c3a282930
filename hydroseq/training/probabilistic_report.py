"""The probabilistic part of ``hydroseq evaluate`` for quantile models: CRPS, coverage, thresholds, plots."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from hydroseq.config import TrainConfig
from hydroseq.dataset import SplitName, StationData
from hydroseq.fileio import atomic_path
from hydroseq.scoring.baselines import doy_climatology_quantiles, issue_step_persistence
from hydroseq.scoring.probabilistic_scores import RELIABILITY_LEVEL, event_base_rates, score_quantile_forecast
from hydroseq.scoring.thresholds import StationThresholds, derived_thresholds
from hydroseq.scoring.verification_plots import plot_pit_histogram, plot_reliability_diagram
from hydroseq.training.predict import SplitPrediction


@dataclass
class ProbabilisticReport:
    """Per-station scores (long table: station, lead, metrics), their summary over stations, files written."""

    scores: pd.DataFrame
    summary: dict[str, float]
    thresholds: StationThresholds
    csv_path: Path
    plot_paths: list[Path]


def training_thresholds(station_data: StationData, config: TrainConfig, in_train: np.ndarray) -> StationThresholds:
    """Thresholds from the training period (``in_train``) only: 2- and 5-year daily-mean flows (Gumbel fitted by
    L-moments to the water-year maxima), flow percentiles 95 and 99."""
    period = config.data.splits.train
    return derived_thresholds(station_data.target[:, in_train], station_data.times[in_train],
                              list(station_data.station_ids), period_label=f"{period.start}..{period.end}")


def report_probabilistic(prediction: SplitPrediction, station_data: StationData, config: TrainConfig,
                         split: SplitName, out_dir: Path,
                         thresholds: StationThresholds | None = None) -> ProbabilisticReport:
    """Score the quantiles of ``prediction`` per lead; write ``probabilistic_<split>.csv``, PIT and reliability PNGs.

    ``thresholds``: those of :func:`training_thresholds` when the caller has them already.
    """
    assert prediction.quantiles is not None and prediction.quantile_levels is not None
    levels = prediction.quantile_levels
    station_ids = list(station_data.station_ids)
    times = station_data.times
    in_train = station_data.grid.period_mask(times, config.data.splits.train)
    climatology = doy_climatology_quantiles(station_data.target, station_data.grid.day_of_year(times), in_train,
                                            levels)[:, prediction.in_split]
    thresholds = thresholds if thresholds is not None else training_thresholds(station_data, config, in_train)
    base_rates = event_base_rates(station_data.target[:, in_train], thresholds)
    frames, summary, plots, reliability = [], {}, [], {}
    for row, lead in enumerate(prediction.leads):
        persisted = issue_step_persistence(station_data.target, max(lead, 1))[:, prediction.in_split]
        scores = score_quantile_forecast(prediction.quantiles[row], levels, prediction.obs, climatology, persisted,
                                         station_ids, thresholds, base_rates)
        frames.append(scores.stations.assign(lead=lead))
        summary.update(_summary(scores.stations, split, lead))
        summary.update({f"{split}_lead{lead}_{key}": value for key, value in scores.pooled.items()})
        plots.append(plot_pit_histogram(scores.pit, out_dir / f"pit_{split}_lead{lead}.png",
                                        f"PIT, {split} period, lead {lead}"))
        if RELIABILITY_LEVEL in scores.reliability:
            reliability[f"lead {lead}"] = scores.reliability[RELIABILITY_LEVEL]
    if reliability:
        plots.append(plot_reliability_diagram(reliability, out_dir / f"reliability_{split}.png",
                                              f"exceeding the {RELIABILITY_LEVEL} flow, {split} period"))
    table = pd.concat(frames, ignore_index=True)
    table = table[["station", "lead", *[c for c in table.columns if c not in ("station", "lead")]]]
    csv_path = out_dir / f"probabilistic_{split}.csv"
    with atomic_path(csv_path) as tmp:
        table.to_csv(tmp, index=False)
    return ProbabilisticReport(table, summary, thresholds, csv_path, plots)


def _summary(stations: pd.DataFrame, split: str, lead: int) -> dict[str, float]:
    prefix = f"{split}_lead{lead}"
    summary = {f"{prefix}_median_{name}": float(stations[name].median())  # NaN when no station has it
               for name in ("crps", "crps_climatology", "crps_persistence", "crpss_climatology", "crpss_persistence",
                            "coverage50", "coverage90")}
    summary[f"{prefix}_stations_crpss_climatology_positive"] = float((stations["crpss_climatology"] > 0).sum())
    summary[f"{prefix}_stations_crps_beating_persistence"] = float((stations["crpss_persistence"] > 0).sum())
    return summary
