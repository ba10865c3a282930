"""Ground-floor baselines: persistence shifts without filling; climatology sees only the training period;
the newest reading never comes from after its step; day-of-year means add up in pieces."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from hydroseq.dataset.observed import newest_observed
from hydroseq.grid import GridSpec
from hydroseq.scoring.baselines import DayOfYearMeans, doy_climatology, issue_step_persistence


def test_newest_observed_carries_the_last_reading_and_is_nan_before_the_first() -> None:
    target = np.array([[np.nan, 2.0, np.nan, np.nan, 5.0], [1.0, np.nan, np.nan, np.nan, np.nan]])
    np.testing.assert_array_equal(newest_observed(target, np.array([0, 1, 3, 4])),
                                  [[np.nan, 2.0, 2.0, 5.0], [1.0, 1.0, 1.0, 1.0]])


@given(arrays(np.float64, (2, 30), elements=st.one_of(st.just(np.nan), st.floats(0, 100))),
       st.integers(0, 29), st.integers(1, 29))
def test_newest_observed_ignores_later_steps_and_pieces_add_up(target, end, cut) -> None:
    later = target.copy()
    later[:, end + 1:] = -1.0
    np.testing.assert_array_equal(newest_observed(later, np.array([end])), newest_observed(target, np.array([end])))
    days = np.arange(30) % 7 + 1
    whole, pieces = DayOfYearMeans(2), DayOfYearMeans(2)
    whole.add(target, days)
    pieces.add(target[:, :cut], days[:cut])
    pieces.add(target[:, cut:], days[cut:])
    np.testing.assert_allclose(pieces.table(), whole.table(), equal_nan=True)


def test_persistence_shifts_by_lead_and_keeps_gaps() -> None:
    target = np.array([[1.0, 2.0, np.nan, 4.0, 5.0]])
    np.testing.assert_array_equal(issue_step_persistence(target, 2), [[np.nan, np.nan, 1.0, 2.0, np.nan]])


def test_day_of_year_uses_the_local_day_an_interval_ends_in() -> None:
    # daily grid in Etc/GMT+8: local day 2001-01-31 ends at 2001-02-01 00:00 local = 08:00 UTC
    labels = np.array(["2001-02-01T08:00", "2001-12-31T08:00", "2005-01-01T08:00"], dtype="datetime64[ns]")
    np.testing.assert_array_equal(GridSpec("1D", "Etc/GMT+8").day_of_year(labels), [31, 364, 366])


def test_climatology_is_the_training_mean_per_day_and_ignores_other_periods() -> None:
    days = pd.date_range("2001-01-01", "2004-12-31", freq="D")
    labels = (days + pd.Timedelta(days=1)).values
    doy = GridSpec("1D", "UTC").day_of_year(labels)
    rng = np.random.default_rng(0)
    target = rng.gamma(2.0, size=(2, len(days)))
    train = np.asarray(days.year <= 2002)
    climatology = doy_climatology(target, doy, train)
    first_of_march = np.flatnonzero((days.month == 3) & (days.day == 1) & (days.year <= 2002))
    assert doy[-1] == 366  # 2004-12-31: no day 366 in 2001-2002, falls back to day 365
    assert np.isclose(climatology[1, -1], np.mean(target[1, (doy == 365) & train]))
    assert doy[first_of_march[0]] == 60 and np.isclose(climatology[0, first_of_march[0]],
                                                       target[0, np.flatnonzero(train & (doy == 60))].mean())
    perturbed = target.copy()
    perturbed[:, ~train] = 1e6
    np.testing.assert_array_equal(doy_climatology(perturbed, doy, train), climatology)
    assert np.isfinite(climatology).all()
