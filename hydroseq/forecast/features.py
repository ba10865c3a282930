"""Model inputs for a forecast: the same scaled features, in the same order, as in training.

This mirrors :class:`hydroseq.dataset.SequenceDataset` (dynamic inputs, the lagged target when the
model used it, static attributes repeated on every step) without importing torch; the forecast
tests check that both give identical arrays on the bundled data, and :func:`feature_names` is
compared with the exported model's list at run time.
"""

from __future__ import annotations

import numpy as np

from hydroseq.dataset import Scalers, StationData, run_length_so_far
from hydroseq.export.metadata import ExportMetadata


def lagged_name(target: str) -> str:
    """Name of the lagged-target feature (as the dataset stage names it)."""
    return f"{target}_lagged"


def uses_lagged_target(metadata: ExportMetadata) -> bool:
    """Whether the model's inputs include the observed target up to the issue step."""
    return lagged_name(metadata.target) in metadata.feature_names


def feature_names(data: StationData, lagged: bool) -> list[str]:
    """The feature order built by :func:`scaled_features`."""
    return [*data.dynamic_names, *([lagged_name(data.target_name)] if lagged else []), *data.static_names]


def scaled_features(data: StationData, scalers: Scalers, lagged: bool) -> tuple[np.ndarray, np.ndarray]:
    """``features [station, step, F]`` (float32, NaN replaced by 0) and ``valid [station, step]``.

    A step is valid when every dynamic input (and the target, if lagged) is present there.
    """
    dynamic = scalers.transform_inputs(data.dynamic)
    valid = np.isfinite(dynamic).all(axis=-1)
    if lagged:
        target = scalers.transform_target(data.target, list(data.station_ids))
        dynamic = np.concatenate([dynamic, target[..., None]], axis=-1)
        valid &= np.isfinite(target)
    static = scalers.transform_static(data.static)
    repeated = np.broadcast_to(static[:, None, :], (*dynamic.shape[:2], static.shape[-1]))
    features = np.concatenate([dynamic, repeated], axis=-1).astype(np.float32, copy=False)
    return np.nan_to_num(features, copy=False), valid


def history_lengths(valid: np.ndarray, ends: np.ndarray, seq_len: int) -> np.ndarray:
    """``[station, len(ends)]``: valid steps ending at each end step, capped at ``seq_len``."""
    return np.minimum(run_length_so_far(valid)[:, ends], seq_len)


def gather_windows(features: np.ndarray, stations: np.ndarray, ends: np.ndarray, lengths: np.ndarray,
                   seq_len: int) -> np.ndarray:
    """Right-padded ``x [rows, seq_len, F]``: row i holds steps ``ends[i]-lengths[i]+1 .. ends[i]``.

    Padding steps are zero. ``stations``, ``ends`` and ``lengths`` are 1-D of equal size.
    """
    n_stations, n_steps, n_features = features.shape
    flat = np.concatenate([features.reshape(-1, n_features), np.zeros((1, n_features), np.float32)])
    inside = np.arange(seq_len) < lengths[:, None]
    first = stations * n_steps + ends - lengths + 1
    rows = np.where(inside, first[:, None] + np.arange(seq_len), len(flat) - 1)
    x = np.empty((len(stations), seq_len, n_features), dtype=np.float32)
    np.take(flat, rows, axis=0, out=x)
    return x
