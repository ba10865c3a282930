"""Ground-floor baselines: the newest reading never comes from after its step; day-of-year means add up in pieces."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from hydroseq.baselines import DayOfYearMeans, newest_observed


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
