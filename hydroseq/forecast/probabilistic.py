"""The probabilistic part of a forecast: thresholds, exceedance probabilities, hindcast verification.

Thresholds come from a user table (``--thresholds FILE``: station, level, discharge or a stage with
``--rating-curve FILE``, units in the header, converted to the target's: :mod:`hydroseq.scoring.table_units`)
or, by default, from the model's training period in the ingested file (2- and 5-year daily-mean flows fitted to
water-year maxima, flow percentiles 95 and 99: :func:`hydroseq.scoring.thresholds.station_thresholds`). The same
training period gives the climatological distribution a hindcast's CRPS is compared with and the base rate
of each event (the Brier skill score's reference). Nothing after the training period feeds them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hydroseq.errors import ConfigError, InputDataError
from hydroseq.forecast.data_window import IngestedFile
from hydroseq.forecast.result import ForecastResult
from hydroseq.grid import GridSpec
from hydroseq.scoring.baselines import doy_quantile_table
from hydroseq.scoring.probabilistic_scores import (
    ProbabilisticScores,
    event_base_rates,
    score_quantile_forecast,
)
from hydroseq.scoring.quantiles import exceedance_probability
from hydroseq.scoring.rating_curve import read_rating_curves
from hydroseq.scoring.return_periods import FrequencyAnalysis
from hydroseq.scoring.table_units import TargetUnits
from hydroseq.scoring.thresholds import StationThresholds, station_thresholds


@dataclass(frozen=True)
class TrainingRecord:
    """What the training period of the ingested file gives a probabilistic forecast."""

    thresholds: StationThresholds
    base_rates: np.ndarray  # [station, threshold level]
    climatology: np.ndarray | None  # [station, 367, quantile level] (hindcasts only)


def training_record(source: IngestedFile, levels: tuple[float, ...], thresholds_file: str | Path | None,
                    with_climatology: bool, rating_curve_file: str | Path | None = None,
                    analysis: FrequencyAnalysis | None = None) -> TrainingRecord | None:
    """Thresholds (the user's table, its stages through ``rating_curve_file``, else derived as ``analysis``
    says), event base rates and the climatological distribution.

    A file without any of the model's training period (a basin new to the model, with a recent record) gets the
    table's thresholds with unknown base rates, or None without a table: the forecast then publishes quantiles
    but no threshold probabilities.

    Raises
    ------
    InputDataError
        If the model's metadata do not say its training period, or a hindcast's file holds none of it.
    ConfigError
        If ``rating_curve_file`` is given without ``thresholds_file``.
    """
    if rating_curve_file is not None and thresholds_file is None:
        raise ConfigError(f"--rating-curve {rating_curve_file}: a rating curve turns the stages of a --thresholds "
                          "table into discharges; give the table too")
    period = source.metadata.training_period
    if period is None:
        raise InputDataError(source.path, "the model's metadata do not say its training period: thresholds "
                                          "and base rates cannot be derived")
    times = source.times
    inside = np.flatnonzero(source.grid.period_mask(times, period))
    stations = list(source.station_ids)
    info = source.info()
    units = TargetUnits.of(info.target_units, source.grid.step, stations, info.areas)
    rating_curves = (read_rating_curves(rating_curve_file, stations, units) if rating_curve_file is not None
                     else None)
    if inside.size == 0:
        if with_climatology:
            raise InputDataError(source.path, f"the file holds none of the training period {period.start}.."
                                              f"{period.end}, from which the hindcast's climatology is derived",
                                 where="time")
        if thresholds_file is None:  # a new basin's recent record: quantiles, but no derived thresholds
            return None
        table = station_thresholds(np.empty((len(stations), 0)), times[:0], stations, thresholds_file, rating_curves,
                                   units=units)
        return TrainingRecord(table, np.full(table.values.shape, np.nan), None)
    target = source.read_target(int(inside[0]), int(inside[-1]) + 1)
    train_times = times[inside[0]:inside[-1] + 1]
    thresholds = station_thresholds(target, train_times, stations, thresholds_file, rating_curves, analysis,
                                    period_label=f"{period.start}..{period.end}", units=units)
    climatology = None
    if with_climatology:
        days = source.grid.day_of_year(train_times)
        climatology = doy_quantile_table(target, days, np.ones(len(train_times), dtype=bool), levels)
    return TrainingRecord(thresholds, event_base_rates(target, thresholds), climatology)


def exceedance(quantiles: np.ndarray, levels: tuple[float, ...], thresholds: StationThresholds) -> np.ndarray:
    """``[issue, station, lead, threshold]``: probability that the discharge exceeds each threshold."""
    values = thresholds.values.astype(np.float64)  # [station, threshold]
    probability = np.stack([exceedance_probability(quantiles, levels, values[None, :, k, None])
                            for k in range(values.shape[1])], axis=-1)
    return probability.astype(np.float32)


def score_hindcast_distribution(result: ForecastResult, observed: np.ndarray, persistence: np.ndarray,
                                record: TrainingRecord, grid: GridSpec) -> list[ProbabilisticScores]:
    """Per lead: CRPS against the climatological distribution and persistence, coverage, threshold scores.

    Each station's series is its issue times at that lead (``[issue, station, lead]`` arrays).
    """
    assert result.quantiles is not None and result.quantile_levels is not None and record.climatology is not None
    days = grid.day_of_year(result.valid_times.ravel()).reshape(result.valid_times.shape)  # [issue, lead]
    scores = []
    for k in range(len(result.leads)):
        climatology = record.climatology[:, days[:, k]]  # [station, issue, level]
        scores.append(score_quantile_forecast(
            result.quantiles[:, :, k].transpose(1, 0, 2).astype(np.float64), result.quantile_levels,
            observed[:, :, k].T.astype(np.float64), climatology, persistence[:, :, k].T.astype(np.float64),
            list(result.stations), record.thresholds, record.base_rates))
    return scores
