"""The forecast core: station data in, the forecast at any issue steps out, for ``hydroseq forecast`` and the
served model alike.

features (:func:`hydroseq.dataset.build_features`, shared with training) -> each station's valid history at each
issue step -> its window (:mod:`hydroseq.dataset.window`) -> the exported network -> the target's units, negative
discharge set to 0 -> an ensemble's members -> how old the newest observed target was. A station with fewer than
``min(min_len, seq_len)`` valid steps up to an issue step is not forecast there (NaN).

An ensemble weather forecast drives the core once per member (:func:`combine_weather_members`):

- a model with a quantile head (one network or seed members): the forecast distribution is the equal-weight
  **mixture** of the model's distributions given each weather member, ``F(x) = mean_m F_m(x)``
  (:func:`hydroseq.scoring.quantiles.mixture_quantiles`). A mixture keeps both sources of spread: the
  model's (each ``F_m``) and the weather's (how far apart the ``F_m`` lie); averaging the members'
  quantiles (what a seed ensemble does) would keep only the average width;
- a point model: every weather member's point forecast (each seed member's, for a seed ensemble) is a
  member of the forecast ensemble, and its quantiles are the ensemble's (:data:`ENSEMBLE_LEVELS`).

The members published (``realization``) are the weather members' point forecasts (their medians).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from tqdm import tqdm

from hydroseq.dataset import Scalers, StationData, build_features, run_length_so_far
from hydroseq.dataset.observed import newest_observed_step
from hydroseq.dataset.window import gather_windows
from hydroseq.export import ExportedModel
from hydroseq.scoring.quantiles import DEFAULT_QUANTILES, ensemble_quantiles, mixture_quantiles

ROWS_PER_CHUNK = 65536  # sequences assembled at once: bounds memory to ~rows x N x F x 4 bytes
ENSEMBLE_LEVELS = DEFAULT_QUANTILES  # the levels of a point model's forecast from a weather ensemble


@dataclass(frozen=True)
class CoreForecast:
    """What :func:`forecast_core` returns for ``ends`` (grid positions of the issue steps in the data).

    Attributes
    ----------
    values
        float32 ``[issue, station, lead(, level)]`` in the target's units; NaN where not forecast.
    members
        An ensemble's members' point forecasts ``[issue, station, lead, member]`` (their medians); None for
        one network.
    valid, lengths, needed
        ``valid [station, step]``: the steps the model can read; ``lengths [station, issue]``: the valid steps
        up to each issue step (at most ``seq_len``); ``needed``: the fewest a forecast needs.
    observation_age_hours
        float32 ``[issue, station]``, models that read the observed target: hours from its newest observation
        to each issue step (0: observed there; NaN: none in the window); None otherwise.
    """

    values: np.ndarray
    members: np.ndarray | None
    valid: np.ndarray
    lengths: np.ndarray
    needed: int
    observation_age_hours: np.ndarray | None


def forecast_core(model: ExportedModel, data: StationData, ends: np.ndarray, batch_size: int = 1024,
                  progress: bool = False) -> CoreForecast:
    """The forecast of every station of ``data`` at each issue step ``ends`` (positions in ``data``)."""
    metadata = model.metadata
    scalers = Scalers.from_dict(metadata.scalers)
    layout = metadata.feature_layout()
    features, valid = build_features(data, scalers, layout)
    lengths = history_lengths(valid, ends, metadata.seq_len)
    needed = min(metadata.min_len, metadata.seq_len)
    values, members = _predict(model, scalers, data.station_ids, features, ends, lengths, needed, batch_size, progress)
    ages = observation_age_hours(data.target, ends, metadata.grid.step).T if layout.observed_flag else None
    return CoreForecast(values, members, valid, lengths, needed, ages)


def observation_age(target: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """``[station, len(ends)]``: grid steps from the newest observed target at or before each end step.

    0 when the target is observed at the end step itself; NaN when none is observed in the window.
    """
    newest = newest_observed_step(target, ends)
    return np.where(newest >= 0, ends[None, :] - newest, np.nan)


def observation_age_hours(target: np.ndarray, ends: np.ndarray, step: pd.Timedelta) -> np.ndarray:
    """float32 ``[station, len(ends)]``: :func:`observation_age` in hours of the grid ``step``."""
    return (observation_age(target, ends) * (step / pd.Timedelta(hours=1))).astype(np.float32)


def history_lengths(valid: np.ndarray, ends: np.ndarray, seq_len: int) -> np.ndarray:
    """``[station, len(ends)]``: valid steps ending at each end step, capped at ``seq_len``."""
    return np.minimum(run_length_so_far(valid)[:, ends], seq_len)


def _predict(model: ExportedModel, scalers: Scalers, station_ids: tuple[str, ...], features: np.ndarray,
             ends: np.ndarray, lengths: np.ndarray, needed: int, batch_size: int,
             progress: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """``[issue, station, lead(, level)]`` forecasts in the target's units and an ensemble's members."""
    n_leads, levels, n_members = len(model.metadata.leads), model.metadata.quantiles, model.metadata.members
    values = np.full((len(ends), len(station_ids), n_leads, *((len(levels),) if levels else ())), np.nan,
                     dtype=np.float32)
    members = (np.full((len(ends), len(station_ids), n_leads, n_members), np.nan, dtype=np.float32)
               if n_members > 1 else None)
    issues_per_chunk = max(1, ROWS_PER_CHUNK // max(1, len(station_ids)))
    chunks = range(0, len(ends), issues_per_chunk)
    ids = np.asarray(station_ids, dtype=object)
    bar_wanted = progress and len(chunks) > 1  # then None: drawn on a terminal only, never into a log
    for first in tqdm(chunks, desc="hindcast", unit="chunk", disable=None if bar_wanted else True):
        block = slice(first, first + issues_per_chunk)
        stations, issues = np.nonzero(lengths[:, block] >= needed)
        issues += first
        rows_lengths = lengths[stations, issues]
        x = gather_windows(features, stations, ends[issues], rows_lengths, model.seq_len)
        scaled, scaled_members = model.run(x, rows_lengths, batch_size=batch_size)
        values[issues, stations, :] = to_target_units(scalers, scaled, list(ids[stations]))
        if members is not None and scaled_members is not None:
            members[issues, stations] = member_forecasts(scalers, scaled_members, levels, list(ids[stations]))
    return values, members


def member_forecasts(scalers: Scalers, scaled_members: np.ndarray, levels: Sequence[float],
                     station_ids: list[str]) -> np.ndarray:
    """An ensemble's ``[row, member, lead(, level)]`` scaled outputs as the members' point forecasts
    ``[row, lead, member]`` in the target's units (their medians for a quantile model)."""
    point = scaled_members[..., levels.index(0.5)] if levels else scaled_members
    return to_target_units(scalers, point, station_ids).transpose(0, 2, 1)


def to_target_units(scalers: Scalers, scaled: np.ndarray, station_ids: list[str]) -> np.ndarray:
    """Scaled model outputs in the target's units, with negative discharge set to 0.

    The network is unconstrained and can undershoot at low flows; a forecast product must not
    publish a negative discharge. The raw outputs stay available through ``ExportedModel.predict``.
    """
    return np.maximum(scalers.inverse_target(scaled, station_ids), 0.0)


def weather_attributes(n_members: int) -> dict[str, str]:
    """Global attributes of the forecast files of a forecast driven by an ensemble weather forecast."""
    return {"weather_ensemble_members": str(n_members),
            "weather_ensemble_combination": "each weather member drove the model; quantiles of the equal-weight "
                                            "mixture of the model's distributions given each member (a point model: "
                                            "of the pooled member forecasts); realization: each weather member's "
                                            "point forecast"}


def combine_weather_members(cores: Sequence[CoreForecast], model_levels: Sequence[float]) -> tuple[np.ndarray,
                                                                                                    np.ndarray]:
    """The combined forecast ``[issue, station, lead, level]`` (levels: ``model_levels``, or
    :data:`ENSEMBLE_LEVELS` for a point model) and the weather members' point forecasts
    ``[issue, station, lead, member]``, from one core forecast per weather member."""
    if model_levels:
        stacked = np.stack([core.values for core in cores], axis=-2)  # [issue, station, lead, member, level]
        members = stacked[..., list(model_levels).index(0.5)]
        return mixture_quantiles(stacked, model_levels), members
    members = np.stack([core.values for core in cores], axis=-1)
    pooled = np.concatenate([core.members if core.members is not None else core.values[..., None]
                             for core in cores], axis=-1)
    return ensemble_quantiles(pooled, ENSEMBLE_LEVELS), members
