"""Peak metrics of one station's simulated vs observed series: timing error, missed peaks, peak magnitude error.

All three follow NeuralHydrology's definitions (Kratzert et al. 2021, appendix; ``mean_peak_timing``,
``missed_peaks`` and ``mean_absolute_percentage_peak_error`` in ``neuralhydrology.evaluation.metrics``).
For the first two, peaks are found with
:func:`scipy.signal.find_peaks` on the steps where observation and simulation are both finite, and
a peak is skipped when its window reaches past either end of the series or over a missing step
(the window would otherwise span more time than it says). Windows and errors are in grid steps;
:func:`timing_window` and :func:`missed_window` give NeuralHydrology's defaults for a grid step
(3 and 1 steps on a daily grid, 12 and 12 on an hourly one). :func:`peak_mape` compares the flows
at the observed peaks, without a window.
"""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from numpy.typing import ArrayLike, NDArray

HALF_DAY = dt.timedelta(hours=12)
TIMING_PEAK_DISTANCE = 100  # steps between the observed peaks that peak timing scores
MISSED_PEAK_DISTANCE = 30  # steps between the peaks that missed_peaks compares


def timing_window(step: dt.timedelta) -> int:
    """NeuralHydrology's peak-timing window for a grid ``step``: half a day in steps, at least 3."""
    return max(int(HALF_DAY // step), 3)


def missed_window(step: dt.timedelta) -> int:
    """NeuralHydrology's missed-peaks window for a grid ``step``: half a day in steps, at least 1."""
    return max(int(HALF_DAY // step), 1)


def _valid_with_positions(obs: ArrayLike, sim: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64],
                                                                    NDArray[np.intp]]:
    """The values where both series are finite and the positions they had in the full series."""
    obs_arr = np.asarray(obs, dtype=np.float64).ravel()
    sim_arr = np.asarray(sim, dtype=np.float64).ravel()
    if obs_arr.shape != sim_arr.shape:
        raise ValueError(f"obs has {obs_arr.size} values but sim has {sim_arr.size}")
    positions = np.flatnonzero(np.isfinite(obs_arr) & np.isfinite(sim_arr))
    return obs_arr[positions], sim_arr[positions], positions


def _checked(peaks: NDArray[np.intp], positions: NDArray[np.intp], window: int) -> NDArray[np.intp]:
    """The ``peaks`` whose ``±window`` lies inside the series and spans no missing step."""
    inside = peaks[(peaks - window >= 0) & (peaks + window < positions.size)]
    return inside[positions[inside + window] - positions[inside - window] == 2 * window]


def _check_window(window: int) -> None:
    if window < 1:
        raise ValueError(f"window must be at least 1 step, got {window}")


def mean_peak_timing(obs: ArrayLike, sim: ArrayLike, window: int = 3) -> float:
    """Mean absolute time between observed peaks and the simulated peaks next to them, in steps.

    Observed peaks: ``find_peaks(obs, distance=100, prominence=std(obs))``. For each, the simulated
    peak is the step itself when the simulation peaks there (higher than both neighbours), else the
    highest simulated value within ``±window`` steps (the first of equal ones). 0 is perfect; a
    simulation running ``k <= window`` steps late or early scores ``k``. NaN without a peak to score.
    """
    _check_window(window)
    o, s, positions = _valid_with_positions(obs, sim)
    if o.size < 2 * window + 1:
        return math.nan
    from scipy import signal  # here, not at the top: scipy.signal adds 1 s to every forecast's start

    peaks, _ = signal.find_peaks(o, distance=TIMING_PEAK_DISTANCE, prominence=float(o.std()))
    peaks = _checked(peaks, positions, window)
    if peaks.size == 0:
        return math.nan
    in_window = sliding_window_view(s, 2 * window + 1)[peaks - window]  # [peak, 2 * window + 1]
    own_peak = (s[peaks] > s[peaks - 1]) & (s[peaks] > s[peaks + 1])
    offset = np.where(own_peak, window, in_window.argmax(axis=1))
    return float(np.mean(np.abs(offset - window)))


def missed_peaks(obs: ArrayLike, sim: ArrayLike, window: int = 1, percentile: float = 80.0) -> float:
    """Fraction of observed peaks without a simulated peak within ``±window`` steps (0 best, 1 worst).

    Peaks of each series: ``find_peaks(distance=30, height=<its own percentile-th value>)``. As in
    NeuralHydrology the denominator counts every observed peak, also those skipped at the ends of
    the series or next to a missing step (they count as found). NaN when the observations have no
    peak (NeuralHydrology returns 0 there; NaN keeps such a station out of medians).
    """
    _check_window(window)
    o, s, positions = _valid_with_positions(obs, sim)
    if o.size == 0:
        return math.nan
    from scipy import signal  # as in mean_peak_timing

    observed, _ = signal.find_peaks(o, distance=MISSED_PEAK_DISTANCE, height=float(np.percentile(o, percentile)))
    simulated, _ = signal.find_peaks(s, distance=MISSED_PEAK_DISTANCE, height=float(np.percentile(s, percentile)))
    if observed.size == 0:
        return math.nan
    checked = _checked(observed, positions, window)
    if simulated.size == 0:
        return checked.size / observed.size
    after = np.searchsorted(simulated, checked)  # the first simulated peak at or after each observed one
    distance_after = np.abs(simulated[np.minimum(after, simulated.size - 1)] - checked)
    distance_before = np.abs(checked - simulated[np.maximum(after - 1, 0)])
    missed = np.minimum(distance_after, distance_before) > window
    return float(np.count_nonzero(missed)) / observed.size


def peak_mape(obs: ArrayLike, sim: ArrayLike) -> float:
    """Mean absolute percentage error of the simulated flows at the observed peaks (Peak-MAPE), in percent.

    ``100 / P * sum_p |Qs_p - Qo_p| / Qo_p`` over the ``P`` observed peaks of
    ``find_peaks(obs, distance=100, prominence=std(obs))`` (the peaks :func:`mean_peak_timing`
    scores, here also those at the ends of the series or next to a gap), on the steps where both
    series are finite. 0 is perfect; a simulation of ``0.8 * obs`` scores 20, whatever its timing
    (a peak one step late scores the flow beside the peak). NaN without an observed peak.
    """
    o, s, _ = _valid_with_positions(obs, sim)
    if o.size == 0:
        return math.nan
    from scipy import signal  # as in mean_peak_timing

    peaks, _ = signal.find_peaks(o, distance=TIMING_PEAK_DISTANCE, prominence=float(o.std()))
    if peaks.size == 0:
        return math.nan
    return float(np.sum(np.abs((s[peaks] - o[peaks]) / o[peaks])) / peaks.size * 100.0)
