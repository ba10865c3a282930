"""The model's input features: one owner for training and forecasting (numpy only, no torch).

Feature order: the dynamic inputs; then, with a lagged target, the observed target (scaled, 0 where
missing) and, in per-step mode, its "observed" flag (1 where the observation exists, else 0); then
the static attributes repeated on every step. Missing values become 0 in the feature array; which
steps count as valid history is returned beside it.

Sequence mode needs an observed target on every history step (it is part of the valid input);
per-step mode does not: a missing or late observation is an input the model reads through the flag.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

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
    """

    dynamic_names: tuple[str, ...]
    static_names: tuple[str, ...]
    target_name: str
    lagged_target: bool
    observed_flag: bool

    @classmethod
    def of(cls, dynamic_names: Sequence[str], static_names: Sequence[str], target_name: str, mode: str,
           lagged_target: bool) -> FeatureLayout:
        """The layout a model of ``mode`` (``per_step`` or ``sequence``) reads: only per-step models flag."""
        return cls(tuple(dynamic_names), tuple(static_names), target_name, lagged_target,
                   lagged_target and mode == "per_step")

    @classmethod
    def for_model(cls, data: StationData, mode: str, lagged_target: bool) -> FeatureLayout:
        """The layout a model of ``mode`` reads from ``data``."""
        return cls.of(data.dynamic_names, data.static_names, data.target_name, mode, lagged_target)

    @property
    def lagged_name(self) -> str:
        """Name of the observed-target feature."""
        return f"{self.target_name}_lagged"

    @property
    def flag_name(self) -> str:
        """Name of the "observed" flag feature."""
        return f"{self.target_name}_lagged_observed"

    @property
    def names(self) -> list[str]:
        """Every feature name, in model order."""
        lagged = [self.lagged_name] if self.lagged_target else []
        flag = [self.flag_name] if self.observed_flag else []
        return [*self.dynamic_names, *lagged, *flag, *self.static_names]

    @property
    def lagged_column(self) -> int | None:
        """Column of the observed target (None without a lagged target)."""
        return len(self.dynamic_names) if self.lagged_target else None

    @property
    def flag_column(self) -> int | None:
        """Column of the "observed" flag (None without one)."""
        return len(self.dynamic_names) + 1 if self.observed_flag else None


def build_features(data: StationData, scalers: Scalers, layout: FeatureLayout) -> tuple[np.ndarray, np.ndarray]:
    """``features [station, step, F]`` (float32, NaN replaced by 0) and ``valid [station, step]``.

    A step is valid history when every dynamic input is present (and, in sequence mode with a
    lagged target, the observed target too).
    """
    dynamic = scalers.transform_inputs(data.dynamic)
    valid = np.isfinite(dynamic).all(axis=-1)
    columns = [dynamic]
    if layout.lagged_target:
        target = scalers.transform_target(data.target, list(data.station_ids))
        observed = np.isfinite(target)
        columns.append(target[..., None])
        if layout.observed_flag:
            columns.append(observed[..., None].astype(np.float32))
        else:
            valid &= observed
    static = scalers.transform_static(data.static)
    columns.append(np.broadcast_to(static[:, None, :], (*dynamic.shape[:2], static.shape[-1])))
    features = np.concatenate(columns, axis=-1).astype(np.float32, copy=False)
    return np.nan_to_num(features, copy=False), valid
