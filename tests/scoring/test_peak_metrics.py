"""Peak timing, missed peaks and Peak-MAPE on hydrographs whose peaks are placed by hand."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pytest

from hydroseq.scoring import metrics
from hydroseq.scoring.peak_metrics import mean_peak_timing, missed_peaks, missed_window, peak_mape, timing_window

STEPS = np.arange(600)
CENTRES = (100, 250, 420)  # more than 100 steps apart: find_peaks keeps all three


def hydrograph(centres: tuple[int, ...] = CENTRES, height: float = 10.0) -> np.ndarray:
    """A base flow of 1 (exactly flat far from the peaks) with a Gaussian flood at each centre."""
    flow = np.ones(STEPS.size)
    for centre in centres:
        flow += height * np.exp(-0.5 * ((STEPS - centre) / 4.0) ** 2)
    return flow


@pytest.mark.parametrize("k", [1, 2, 3])
def test_a_simulation_shifted_by_k_steps_has_peak_timing_k(k: int) -> None:
    obs = hydrograph()
    assert mean_peak_timing(obs, obs) == 0.0
    assert mean_peak_timing(obs, np.roll(obs, k)) == k  # late
    assert mean_peak_timing(obs, np.roll(obs, -k)) == k  # early
    assert mean_peak_timing(obs, np.roll(obs, 5)) == 3  # beyond the window: its edge


def test_peak_timing_is_the_mean_over_peaks_and_skips_windows_over_missing_steps() -> None:
    obs = hydrograph()
    sim = hydrograph((103, 251, 421))  # errors 3, 1, 1
    assert mean_peak_timing(obs, sim) == pytest.approx(5 / 3)
    gappy = obs.copy()
    gappy[102] = np.nan  # inside the first peak's window: that peak is not scored
    assert mean_peak_timing(gappy, sim) == 1.0
    sim_gappy = sim.copy()
    sim_gappy[102] = np.nan  # a missing simulated value leaves the same hole
    assert mean_peak_timing(obs, sim_gappy) == 1.0
    assert mean_peak_timing(obs, sim, window=1) == 1.0  # the first peak's error is cut to the window


def test_peak_timing_without_a_scorable_peak_is_nan() -> None:
    assert math.isnan(mean_peak_timing(np.ones(50), np.ones(50)))
    obs = hydrograph((2,))  # too close to the start for a window of 3
    assert math.isnan(mean_peak_timing(obs, obs))
    with pytest.raises(ValueError, match="window must be at least 1"):
        mean_peak_timing(obs, obs, window=0)


def test_missed_peaks_counts_observed_peaks_without_a_simulated_one_nearby() -> None:
    obs = hydrograph()
    assert missed_peaks(obs, obs) == 0.0
    assert missed_peaks(obs, np.roll(obs, 1)) == 0.0  # within the daily window of 1
    assert missed_peaks(obs, np.roll(obs, 2)) == 1.0
    assert missed_peaks(obs, hydrograph((100,))) == pytest.approx(2 / 3)
    assert missed_peaks(obs, np.ones(STEPS.size)) == 1.0  # a flat simulation misses everything
    assert math.isnan(missed_peaks(np.ones(50), np.ones(50)))  # no observed peak: undefined


def test_missed_peaks_denominator_keeps_the_peaks_it_cannot_check() -> None:
    obs = hydrograph()
    gappy = obs.copy()
    gappy[251] = np.nan  # the second peak's window spans a gap: skipped, still counted (NeuralHydrology's rule)
    assert missed_peaks(gappy, np.ones(STEPS.size)) == pytest.approx(2 / 3)


def test_windows_follow_the_grid_step() -> None:
    assert (timing_window(dt.timedelta(days=1)), missed_window(dt.timedelta(days=1))) == (3, 1)
    assert (timing_window(dt.timedelta(hours=1)), missed_window(dt.timedelta(hours=1))) == (12, 12)
    assert (timing_window(dt.timedelta(days=8)), missed_window(dt.timedelta(minutes=15))) == (3, 48)


def test_all_metrics_carries_the_peak_metrics_with_its_windows() -> None:
    obs = hydrograph()
    scores = metrics.all_metrics(obs, np.roll(obs, 2), timing_window=3, missed_window=2)
    assert scores["peak_timing"] == 2.0 and scores["missed_peaks"] == 0.0
    assert metrics.all_metrics(obs, np.roll(obs, 2))["missed_peaks"] == 1.0


def _timing_by_loop(obs: np.ndarray, sim: np.ndarray, window: int) -> float:
    """Peak timing written out peak by peak, on the full series with its gaps (the reading of the rule)."""
    from scipy.signal import find_peaks

    keep = np.isfinite(obs) & np.isfinite(sim)
    o, s, where = obs[keep], sim[keep], np.flatnonzero(keep)
    errors = []
    for peak in find_peaks(o, distance=100, prominence=o.std())[0]:
        if peak - window < 0 or peak + window >= o.size or where[peak + window] - where[peak - window] != 2 * window:
            continue
        if s[peak] > s[peak - 1] and s[peak] > s[peak + 1]:
            errors.append(0)
        else:
            errors.append(abs(int(np.argmax(s[peak - window: peak + window + 1])) - window))
    return float(np.mean(errors)) if errors else math.nan


@pytest.mark.parametrize("seed", range(5))
def test_vectorised_peak_timing_matches_a_loop_on_noisy_gappy_series(seed: int) -> None:
    rng = np.random.default_rng(seed)
    obs = rng.gamma(0.5, 2.0, 3000)
    sim = 0.8 * np.roll(obs, int(rng.integers(0, 4))) + rng.normal(0, 0.5, obs.size)
    obs[rng.choice(obs.size, 60, replace=False)] = np.nan
    for window in (1, 3, 6):
        assert mean_peak_timing(obs, sim, window) == pytest.approx(_timing_by_loop(obs, sim, window), nan_ok=True)


def test_peak_mape_is_the_mean_relative_error_at_the_observed_peaks_in_percent() -> None:
    obs = hydrograph()  # peaks of 11 at the three centres
    assert peak_mape(obs, obs) == 0.0
    assert peak_mape(obs, 0.8 * obs) == pytest.approx(20.0)
    sim = obs.copy()
    sim[CENTRES[0]] = 22.0  # one peak twice as high, the others exact: 100 % / 3
    assert peak_mape(obs, sim) == pytest.approx(100.0 / 3)
    late = np.roll(obs, 1)  # no window: the flow beside each peak is compared
    assert peak_mape(obs, late) == pytest.approx(100.0 * (11.0 - late[CENTRES[0]]) / 11.0)
    gappy = sim.copy()
    gappy[CENTRES[0] + 1] = np.nan  # a gap beside a peak does not skip it (no window to check)
    assert peak_mape(obs, gappy) == pytest.approx(100.0 / 3)
    assert math.isnan(peak_mape(np.ones(STEPS.size), obs))  # no observed peak
    assert metrics.all_metrics(obs, 0.8 * obs)["peak_mape"] == pytest.approx(20.0)
