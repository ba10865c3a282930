"""Baseflow separated from a flow series with the Lyne-Hollick filter, and the baseflow index.

NeuralHydrology's ``baseflow_index`` (release 1.13.0; :mod:`hydroseq.scoring.signatures` holds the other
signatures), with its passes, filter parameter and mirrored warm-up.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

PASSES = {pd.Timedelta(days=1): 3, pd.Timedelta(hours=1): 9}  # NeuralHydrology's baseflow filter passes per step


def as_flow_series(flow: ArrayLike) -> NDArray[np.float64]:
    """``flow`` as a 1-D float array (NaN where missing).

    Raises
    ------
    ValueError
        If ``flow`` is not one series.
    """
    values = np.asarray(flow, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"flow must be a 1-D series, got shape {values.shape}")
    return values


def baseflow_passes(step: pd.Timedelta) -> int:
    """NeuralHydrology's number of filter passes for a grid ``step``: 3 on a daily grid, 9 on an hourly one.

    Raises
    ------
    ValueError
        For any other step (give ``n_passes`` to :func:`baseflow` yourself then).
    """
    passes = PASSES.get(pd.Timedelta(step))
    if passes is None:
        raise ValueError(f"the baseflow filter's number of passes is set for daily and hourly grids, not {step}")
    return passes


def _finite_runs(values: NDArray[np.float64], min_length: int) -> list[NDArray[np.intp]]:
    """The positions of each run of at least ``min_length`` consecutive finite values."""
    finite = np.flatnonzero(np.isfinite(values))
    runs = np.split(finite, np.flatnonzero(np.diff(finite) > 1) + 1) if finite.size else []
    return [run for run in runs if run.size >= min_length]


def _filter_pass(flow: NDArray[np.float64], alpha: float) -> NDArray[np.float64]:
    """One forward pass of the Lyne-Hollick filter: what remains of ``flow`` without its quick flow.

    Quick flow ``f_i = alpha f_(i-1) + (1 + alpha) (q_i - q_(i-1)) / 2`` from ``f_0 = q_0``; the
    baseflow is ``q_i - f_i`` where ``f_i > 0``, else ``q_i``, and 0 at the first step (as
    NeuralHydrology sets it; the first step lies in the mirrored warm-up).
    """
    from scipy import signal  # here, not at the top: see hydroseq.scoring.peak_metrics

    increments = (1.0 + alpha) * np.diff(flow) / 2.0
    quick, _ = signal.lfilter([1.0], [1.0, -alpha], increments, zi=[alpha * flow[0]])
    remaining = np.empty_like(flow)
    remaining[0] = 0.0
    remaining[1:] = np.where(quick > 0.0, flow[1:] - quick, flow[1:])
    return remaining


def baseflow(flow: ArrayLike, n_passes: int = 3, alpha: float = 0.98, warmup: int = 30) -> NDArray[np.float64]:
    """Baseflow separated with the Lyne and Hollick filter, passes alternating forward and backward.

    Each run of more than ``warmup`` observed steps is filtered on its own, mirrored by ``warmup``
    steps at both ends first (Ladson et al. 2013); steps outside such runs are NaN. The series is
    returned in time order (NeuralHydrology's ``baseflow_index`` returns it reversed after an odd
    number of passes; the index, a sum, is the same).

    Parameters
    ----------
    flow
        The flow series.
    n_passes
        Number of passes, the first forward: :func:`baseflow_passes` gives NeuralHydrology's for a grid step.
    alpha
        The filter parameter (0.98 in Ladson et al. 2013 for daily flows).
    warmup
        Steps mirrored at each end of a run (at least 1).

    Raises
    ------
    ValueError
        If ``n_passes`` or ``warmup`` is below 1.
    """
    if n_passes < 1:
        raise ValueError(f"n_passes must be at least 1, got {n_passes}")
    if warmup < 1:
        raise ValueError(f"warmup must be at least 1 step, got {warmup}")
    values = as_flow_series(flow)
    separated = np.full_like(values, np.nan)
    for run in _finite_runs(values, warmup + 1):
        run_flow = values[run]
        current = np.concatenate([run_flow[warmup:0:-1], run_flow, run_flow[-2:-warmup - 2:-1]])
        for _ in range(n_passes):
            current = _filter_pass(current, alpha)[::-1]
        separated[run] = (current[::-1] if n_passes % 2 else current)[warmup:-warmup]
    return separated


def baseflow_index(flow: ArrayLike, n_passes: int = 3, alpha: float = 0.98, warmup: int = 30) -> float:
    """Baseflow index: the share of the flow that is baseflow (:func:`baseflow`), 0 to 1.

    Summed over the runs of more than ``warmup`` observed steps; NaN without such a run or flow.
    Ladson et al. (2013), doi:10.7158/13241583.2013.11465417.
    """
    values = as_flow_series(flow)
    separated = baseflow(values, n_passes, alpha, warmup)
    filtered = np.isfinite(separated)
    total = float(np.sum(values[filtered]))
    return float(np.sum(separated[filtered])) / total if filtered.any() and total != 0.0 else math.nan
