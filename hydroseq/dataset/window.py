"""The history window of a step: the one place that cuts it, for training, the forecast and the served model.

A sample (or a forecast from issue step ``end``) reads the ``length`` steps ``end - length + 1 .. end``: never a
step after ``end``. :func:`window_start` says where that window begins, :func:`history_slice` gives the window of
at most ``seq_len`` steps as a slice of a series, and :func:`gather_windows` cuts many windows into a right-padded
batch (numpy; training converts to torch after).
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np

Steps = TypeVar("Steps", int, np.ndarray)  # one step index, or an array of them


def window_start(end: Steps, length: Steps) -> Steps:
    """The first step of the window of ``length`` steps that ends at step ``end`` (both included)."""
    return end - length + 1


def history_slice(end: int, seq_len: int) -> slice:
    """The steps a window of at most ``seq_len`` steps ending at ``end`` can read, clipped at the series' start."""
    return slice(max(0, window_start(end, seq_len)), end + 1)


def gather_windows(features: np.ndarray, stations: np.ndarray, ends: np.ndarray, lengths: np.ndarray,
                   seq_len: int) -> np.ndarray:
    """Right-padded ``x [rows, seq_len, F]`` from ``features [station, step, F]``: row i holds the window of
    ``lengths[i]`` steps ending at ``ends[i]`` of station ``stations[i]``, then zeros.

    ``stations``, ``ends`` and ``lengths`` are 1-D of equal size.
    """
    _n_stations, n_steps, n_features = features.shape
    flat = np.concatenate([features.reshape(-1, n_features), np.zeros((1, n_features), np.float32)])
    inside = np.arange(seq_len) < lengths[:, None]
    first = stations * n_steps + window_start(ends, lengths)
    rows = np.where(inside, first[:, None] + np.arange(seq_len), len(flat) - 1)
    x = np.empty((len(stations), seq_len, n_features), dtype=np.float32)
    np.take(flat, rows, axis=0, out=x)
    return x
