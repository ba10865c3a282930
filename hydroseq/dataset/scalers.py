"""Mean/std scaling fitted on the training period of the training stations only (numpy, no torch)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from hydroseq.config import DataConfig
from hydroseq.dataset.forecast_inputs import last_step_of, lead_window_within
from hydroseq.dataset.station_data import StationData
from hydroseq.errors import ConfigError, InputDataError
from hydroseq.fileio import write_text_atomic

SCALERS_FORMAT_VERSION = 1


@dataclass
class Scalers:
    """Per-feature mean and standard deviation for inputs, static attributes and the target.

    Fitted by :meth:`fit` on the training period of the stations in the training data only, then
    saved beside the model (:meth:`to_json`) and reused unchanged for validation, test, export and
    forecast. A feature whose training standard deviation is 0 (or undefined) gets a std of 1, so
    it is only centred. With per-station target scaling, a station that has no valid target in
    the training period is scaled with the global target mean and std, and a station that was not
    in the training data is refused (:class:`ConfigError`): its scale is unknown. Models with one
    scaling for all stations (the regional ones) read any station, gauged or not.
    """

    dynamic_names: list[str]
    dynamic_mean: np.ndarray
    dynamic_std: np.ndarray
    static_names: list[str]
    static_mean: np.ndarray
    static_std: np.ndarray
    target_name: str
    target_mean: float
    target_std: float
    station_target: dict[str, tuple[float, float]] = field(default_factory=dict)
    forecast_names: list[str] = field(default_factory=list)
    forecast_mean: np.ndarray = field(default_factory=lambda: np.zeros(0))
    forecast_std: np.ndarray = field(default_factory=lambda: np.ones(0))

    @classmethod
    def fit(cls, station_data: StationData, data_config: DataConfig) -> Scalers:
        """Fit on the grid steps of ``data_config.splits.train`` of every station in ``station_data``.

        Raises
        ------
        InputDataError
            If the training period holds no valid value of some input or of the target, an
            infinite value, or values whose mean or std is not finite (naming the variable).
        """
        in_train = station_data.grid.period_mask(station_data.times, data_config.splits.train)
        dynamic = station_data.dynamic[:, in_train, :].reshape(-1, len(station_data.dynamic_names))
        target = station_data.target[:, in_train]
        dynamic_mean, dynamic_std = _mean_std(dynamic, station_data.dynamic_names, station_data.path)
        static_mean, static_std = _mean_std(station_data.static, station_data.static_names, station_data.path)
        target_mean, target_std = _mean_std(target.reshape(-1, 1), [station_data.target_name], station_data.path)
        scalers = cls(
            dynamic_names=list(station_data.dynamic_names), dynamic_mean=dynamic_mean, dynamic_std=dynamic_std,
            static_names=list(station_data.static_names), static_mean=static_mean, static_std=static_std,
            target_name=station_data.target_name, target_mean=float(target_mean[0]),
            target_std=float(target_std[0]),
        )
        if data_config.per_station_target_scaling:
            scalers.station_target = _per_station(target, station_data.station_ids, scalers, station_data.path)
        if station_data.forecast_names:
            scalers.forecast_names = list(station_data.forecast_names)
            scalers.forecast_mean, scalers.forecast_std = _mean_std(
                _train_forecast_values(station_data, in_train), station_data.forecast_names, station_data.path)
        return scalers

    def with_inputs_of(self, other: Scalers) -> Scalers:
        """These forecast-input scalers with ``other``'s scalers of every other input and of the target.

        Raises
        ------
        ConfigError
            If ``other`` scales other variables than these.
        """
        if (other.dynamic_names, other.static_names, other.target_name) != (
                self.dynamic_names, self.static_names, self.target_name):
            raise ConfigError(f"the base model scales {other.dynamic_names + other.static_names} and "
                              f"{other.target_name}, this data {self.dynamic_names + self.static_names} and "
                              f"{self.target_name}")
        return replace(other, forecast_names=list(self.forecast_names), forecast_mean=self.forecast_mean.copy(),
                       forecast_std=self.forecast_std.copy())

    def transform_forecast(self, forecast: np.ndarray) -> np.ndarray:
        """Scale forecast inputs ``[..., input, lead]`` whose input axis follows ``forecast_names``."""
        mean, std = self.forecast_mean[:, None], self.forecast_std[:, None]
        return ((forecast - mean) / std).astype(np.float32)

    def transform_inputs(self, dynamic: np.ndarray) -> np.ndarray:
        """Scale dynamic inputs whose last axis follows ``dynamic_names`` (NaN stays NaN)."""
        return ((dynamic - self.dynamic_mean) / self.dynamic_std).astype(np.float32, copy=False)

    def transform_static(self, static: np.ndarray) -> np.ndarray:
        """Scale static attributes whose last axis follows ``static_names``."""
        return ((static - self.static_mean) / self.static_std).astype(np.float32, copy=False)

    def transform_target(self, values: np.ndarray, station_ids: list[str] | np.ndarray | None = None) -> np.ndarray:
        """Scale target values; with per-station scaling the first axis of ``values`` follows ``station_ids``."""
        mean, std = self._target_moments(values, station_ids)
        return ((values - mean) / std).astype(np.float32, copy=False)

    def inverse_target(self, values: np.ndarray, station_ids: list[str] | np.ndarray | None = None) -> np.ndarray:
        """Undo :meth:`transform_target` (model outputs back to the target's units)."""
        mean, std = self._target_moments(values, station_ids)
        return (values * std + mean).astype(np.float32, copy=False)

    def _target_moments(self, values: np.ndarray,
                        station_ids: list[str] | np.ndarray | None) -> tuple[np.ndarray | float, np.ndarray | float]:
        if not self.station_target:
            return self.target_mean, self.target_std
        if station_ids is None:
            raise ValueError("per-station target scaling needs the station id of every row")
        unknown = sorted({str(station) for station in station_ids} - set(self.station_target))
        if unknown:
            shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
            raise ConfigError(f"the model scales {self.target_name} per basin and has no scaling for {shown} (it "
                              "was not trained on them); a basin a model never saw needs one scaling for all "
                              "basins (data.per_station_target_scaling: false), as the regional models have")
        moments = np.array([self.station_target[str(station)] for station in station_ids],
                           dtype=np.float64).reshape(-1, 2)  # (0, 2) for no rows: nothing forecast
        shape = (len(moments),) + (1,) * (np.ndim(values) - 1)
        return moments[:, 0].reshape(shape), moments[:, 1].reshape(shape)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready mapping."""
        return {
            "format_version": SCALERS_FORMAT_VERSION,
            "dynamic": {name: [float(m), float(s)] for name, m, s in
                        zip(self.dynamic_names, self.dynamic_mean, self.dynamic_std, strict=True)},
            "static": {name: [float(m), float(s)] for name, m, s in
                       zip(self.static_names, self.static_mean, self.static_std, strict=True)},
            "target": {"name": self.target_name, "mean": self.target_mean, "std": self.target_std,
                       "per_station": {k: [float(m), float(s)] for k, (m, s) in self.station_target.items()}},
            **({"forecast": {name: [float(m), float(s)] for name, m, s in
                             zip(self.forecast_names, self.forecast_mean, self.forecast_std, strict=True)}}
               if self.forecast_names else {}),
        }

    def to_json(self, path: str | Path) -> None:
        """Write the scalers as JSON, atomically (feature order is the key order)."""
        write_text_atomic(path, json.dumps(self.to_dict(), indent=2))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Scalers:
        """Inverse of :meth:`to_dict`; raises ``KeyError``/``ValueError`` on malformed input."""
        if data.get("format_version") != SCALERS_FORMAT_VERSION:
            raise ValueError(f"unsupported format_version {data.get('format_version')!r}")
        dynamic = np.array(list(data["dynamic"].values()), dtype=np.float64).reshape(-1, 2)
        static = np.array(list(data["static"].values()), dtype=np.float64).reshape(-1, 2)
        target = data["target"]
        forecast = data.get("forecast", {})
        forecast_moments = np.array(list(forecast.values()), dtype=np.float64).reshape(-1, 2)
        moments = {**{f"dynamic {k}": v for k, v in data["dynamic"].items()},
                   **{f"forecast {k}": v for k, v in forecast.items()},
                   **{f"static {k}": v for k, v in data["static"].items()},
                   f"target {target['name']}": [target["mean"], target["std"]],
                   **{f"target of station {k}": v for k, v in target["per_station"].items()}}
        for name, (mean, std) in moments.items():
            if not (np.isfinite(float(mean)) and np.isfinite(float(std)) and float(std) > 0):
                raise ValueError(f"{name}: mean {mean} and std {std} must be finite, std > 0")
        return cls(
            dynamic_names=list(data["dynamic"]), dynamic_mean=dynamic[:, 0], dynamic_std=dynamic[:, 1],
            static_names=list(data["static"]), static_mean=static[:, 0], static_std=static[:, 1],
            target_name=str(target["name"]), target_mean=float(target["mean"]), target_std=float(target["std"]),
            station_target={k: (float(m), float(s)) for k, (m, s) in target["per_station"].items()},
            forecast_names=list(forecast), forecast_mean=forecast_moments[:, 0], forecast_std=forecast_moments[:, 1],
        )

    @classmethod
    def from_json(cls, path: str | Path) -> Scalers:
        """Read scalers written by :meth:`to_json`.

        Raises
        ------
        InputDataError
            If the file is unreadable, not JSON or not a scalers file.
        """
        try:
            return cls.from_dict(json.loads(Path(path).read_text()))
        except OSError as error:
            raise InputDataError(path, f"cannot read scalers ({error.strerror})") from None
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise InputDataError(path, f"not a hydroseq scalers file ({error!r})") from None


def _train_forecast_values(station_data: StationData, in_train: np.ndarray) -> np.ndarray:
    """``[n, input]``: forecast values issued in the training period whose lead interval ends inside it."""
    within = lead_window_within(station_data.n_times, station_data.forecast.shape[-1], last_step_of(in_train))
    usable = in_train[:, None] & within
    values = np.where(usable[None, :, None, :], station_data.forecast, np.nan)
    return values.transpose(0, 1, 3, 2).reshape(-1, len(station_data.forecast_names))


MOMENT_BLOCK_ROWS = 2**18  # rows converted to float64 at a time: whole-array temporaries were 2 GB at 3,000 stations


def _mean_std(values: np.ndarray, names: list[str] | tuple[str, ...], path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Column-wise mean and std over the valid (non-NaN) values, accumulated in float64 block by block.

    Raises :class:`InputDataError` naming the variable if a column holds an infinite value, has no
    valid value, or its mean or std is not finite (values so large that float64 overflows).
    """
    blocks = [values[start: start + MOMENT_BLOCK_ROWS] for start in range(0, len(values), MOMENT_BLOCK_ROWS)]
    counts = np.zeros(values.shape[1], dtype=np.int64)
    sums = np.zeros(values.shape[1])
    for block in blocks:
        infinite = np.isinf(block).any(axis=0)
        if infinite.any():
            name = names[int(np.flatnonzero(infinite)[0])]
            raise InputDataError(path, f"{name!r} has infinite values in the training period of the training stations")
        finite = np.isfinite(block)
        counts += finite.sum(axis=0)
        with np.errstate(over="ignore", invalid="ignore"):
            sums += np.where(finite, block, 0.0).sum(axis=0, dtype=np.float64)
    if (counts == 0).any():
        name = names[int(np.flatnonzero(counts == 0)[0])]
        raise InputDataError(path, f"{name!r} has no valid value in the training period of the training stations")
    with np.errstate(over="ignore", invalid="ignore"):
        mean = sums / counts
        squares = np.zeros_like(mean)
        for block in blocks:
            squares += (np.where(np.isfinite(block), block.astype(np.float64) - mean, 0.0) ** 2).sum(axis=0)
        std = np.sqrt(squares / counts)
    _check_finite(mean, std, names, path)
    return mean, np.where(std > 0, std, 1.0)


def _check_finite(mean: np.ndarray, std: np.ndarray, names: list[str] | tuple[str, ...], path: Path) -> None:
    bad = ~(np.isfinite(mean) & np.isfinite(std))
    if bad.any():
        column = int(np.flatnonzero(bad)[0])
        raise InputDataError(path, f"{names[column]!r}: the training-period statistics are not finite (mean "
                             f"{mean[column]:g}, std {std[column]:g}); its values overflow float64")


def _per_station(target: np.ndarray, station_ids: tuple[str, ...], scalers: Scalers,
                 path: Path) -> dict[str, tuple[float, float]]:
    """Per-station target mean/std on the training period (global values for stations without any)."""
    moments = {}
    for row, station in enumerate(station_ids):
        values = target[row].astype(np.float64)
        values = values[np.isfinite(values)]
        if len(values) == 0:
            moments[station] = (scalers.target_mean, scalers.target_std)
            continue
        with np.errstate(over="ignore", invalid="ignore"):
            mean, std = float(values.mean()), float(values.std())
        _check_finite(np.array([mean]), np.array([std]), [f"{scalers.target_name} of station {station}"], path)
        moments[station] = (mean, std if std > 0 else 1.0)
    return moments
