"""The model's input features: one owner for training and forecasting (numpy only, no torch).

Feature order: the dynamic inputs; then, with a lagged target, the observed target (scaled, 0 where
missing) and, in per-step mode, its "observed" flag (1 where the observation exists, else 0); then,
with forecast inputs, each one's value for leads 1..H issued at the step (scaled, 0 where missing)
and, after all of them, one "present" flag per input and lead; then the static attributes repeated
on every step. Missing values become 0 in the feature array; which
steps count as valid history is returned beside it.

Sequence mode needs an observed target on every history step (it is part of the valid input);
per-step mode does not: a missing or late observation is an input the model reads through the flag.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hydroseq.config.train import DataConfig, ForecastInput
from hydroseq.dataset.forecast_inputs import forecast_noise, lead_window_within
from hydroseq.dataset.scalers import Scalers
from hydroseq.dataset.station_data import StationData


@dataclass(frozen=True)
class FeatureLayout:
    """Which features a model reads, in order, and where the observed-target columns are.

    Attributes
    ----------
    dynamic_names, static_names, target_name
        Variables of the dataset, in model order.
    lagged_target
        The observed target up to each step is an input.
    observed_flag
        A 0/1 column says whether that observation exists (per-step mode).
    forecast_inputs, forecast_horizon
        Weather-forecast inputs read for leads 1..``forecast_horizon`` at every step.
    """

    dynamic_names: tuple[str, ...]
    static_names: tuple[str, ...]
    target_name: str
    lagged_target: bool
    observed_flag: bool
    forecast_inputs: tuple[ForecastInput, ...] = ()
    forecast_horizon: int = 0

    @classmethod
    def of(cls, dynamic_names: Sequence[str], static_names: Sequence[str], target_name: str, mode: str,
           lagged_target: bool, forecast_inputs: Sequence[ForecastInput] = (),
           forecast_horizon: int = 0) -> FeatureLayout:
        """The layout a model of ``mode`` (``per_step`` or ``sequence``) reads: only per-step models flag."""
        return cls(tuple(dynamic_names), tuple(static_names), target_name, lagged_target,
                   lagged_target and mode == "per_step", tuple(forecast_inputs), forecast_horizon)

    @classmethod
    def from_config(cls, data: DataConfig) -> FeatureLayout:
        """The layout of the model a data config trains."""
        return cls.of(data.dynamic_inputs, data.static_inputs, data.target, data.mode, data.lagged_target,
                      data.forecast_inputs, data.forecast_horizon)

    @property
    def lagged_name(self) -> str:
        """Name of the observed-target feature."""
        return f"{self.target_name}_lagged"

    @property
    def flag_name(self) -> str:
        """Name of the "observed" flag feature."""
        return f"{self.target_name}_lagged_observed"

    @property
    def forecast_names(self) -> list[str]:
        """Names of the forecast-input values (input by input, lead by lead), then of their flags."""
        values = [f"{item.feature_name}_lead{lead}" for item in self.forecast_inputs
                  for lead in range(1, self.forecast_horizon + 1)]
        return [*values, *(f"{name}_present" for name in values)]

    @property
    def names(self) -> list[str]:
        """Every feature name, in model order."""
        lagged = [self.lagged_name] if self.lagged_target else []
        flag = [self.flag_name] if self.observed_flag else []
        return [*self.dynamic_names, *lagged, *flag, *self.forecast_names, *self.static_names]

    @property
    def forecast_columns(self) -> slice:
        """Columns of the forecast-input values and flags (an empty slice without forecast inputs)."""
        first = len(self.dynamic_names) + int(self.lagged_target) + int(self.observed_flag)
        return slice(first, first + len(self.forecast_names))

    @property
    def lagged_column(self) -> int | None:
        """Column of the observed target (None without a lagged target)."""
        return len(self.dynamic_names) if self.lagged_target else None

    @property
    def flag_column(self) -> int | None:
        """Column of the "observed" flag (None without one)."""
        return len(self.dynamic_names) + 1 if self.observed_flag else None


def build_features(data: StationData, scalers: Scalers, layout: FeatureLayout,
                   forecast_until: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``features [station, step, F]`` (float32, NaN replaced by 0) and ``valid [station, step]``.

    The per-step columns of :func:`step_features`, then the static attributes on every step.
    """
    features, valid = step_features(data, scalers, layout, slice(None), forecast_until)
    static = scalers.transform_static(data.static).astype(np.float32)
    repeated = np.broadcast_to(static[:, None, :], (*features.shape[:2], static.shape[-1]))
    return np.concatenate([features, repeated], axis=-1), valid


def step_features(data: StationData, scalers: Scalers, layout: FeatureLayout, stations: slice = slice(None),
                  forecast_until: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The per-step features ``[station, step, F - static]`` of the stations ``stations`` and ``valid``.

    A step is valid history when every dynamic input is present (and, in sequence mode with a
    lagged target, the observed target too); a missing forecast input does not invalidate it (its
    flag says so). ``forecast_until``: a forecast value whose lead interval ends after this grid
    step is treated as missing (training and evaluation splits: nothing after the split's period).
    """
    dynamic = scalers.transform_inputs(data.dynamic[stations])
    valid = np.isfinite(dynamic).all(axis=-1)
    columns = [dynamic]
    if layout.lagged_target:
        target = scalers.transform_target(data.target[stations], list(data.station_ids[stations]))
        observed = np.isfinite(target)
        columns.append(target[..., None])
        if layout.observed_flag:
            columns.append(observed[..., None].astype(np.float32))
        else:
            valid &= observed
    if layout.forecast_inputs:
        columns.extend(_forecast_columns(data, scalers, layout, forecast_until, stations))
    features = np.concatenate(columns, axis=-1).astype(np.float32, copy=False)
    return np.nan_to_num(features, copy=False), valid


def _forecast_columns(data: StationData, scalers: Scalers, layout: FeatureLayout,
                      forecast_until: int | None, stations: slice) -> list[np.ndarray]:
    """The scaled forecast values ``[station, step, inputs x H]`` (plus noise where configured) and flags."""
    names = [item.variable for item in layout.forecast_inputs]
    if list(data.forecast_names) != names or data.forecast.shape[-1] != layout.forecast_horizon:
        raise ValueError(f"the data hold forecast inputs {list(data.forecast_names)} for "
                         f"{data.forecast.shape[-1]} leads, the model reads {names} for {layout.forecast_horizon}")
    scaled = scalers.transform_forecast(data.forecast[stations])
    if forecast_until is not None:
        within = lead_window_within(data.n_times, layout.forecast_horizon, forecast_until)
        scaled = np.where(within[None, :, None, :], scaled, np.nan)
    present = np.isfinite(scaled)
    for position, item in enumerate(layout.forecast_inputs):
        if item.noise_std is not None:
            noise = forecast_noise(item, data.station_ids[stations], data.times)
            scaled[:, :, position] += noise.astype(np.float32)
    shape = (*scaled.shape[:2], -1)
    return [scaled.reshape(shape), present.astype(np.float32).reshape(shape)]
