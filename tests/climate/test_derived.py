"""The registry of derived inputs and its index period."""

from __future__ import annotations

import numpy as np
import pytest

from hydroseq.climate import DERIVED_STATIC, MIN_INDEX_DAYS, derive_static, index_period, is_derived, needed_sources
from hydroseq.climate.derived import INDEX_YEARS, ShortRecordError
from hydroseq.config.derived import ClimateSources


def test_the_index_period_ends_at_the_first_issue_and_spans_30_years_at_most() -> None:
    assert index_period(100) == slice(0, 101)
    assert index_period(20000) == slice(20001 - INDEX_YEARS * 365, 20001)


def test_derived_names_and_what_they_need() -> None:
    sources = ClimateSources()
    assert is_derived("pet_oudin") and is_derived("clim_aridity") and not is_derived("aridity")
    assert needed_sources(["area_km2"], sources) == []
    assert needed_sources(["pet_oudin"], sources) == ["temperature_2m_mean", "lat"]
    assert needed_sources(["clim_p_mean"], sources) == ["total_precipitation_sum", "temperature_2m_mean", "lat"]


def test_a_record_shorter_than_two_years_is_refused_with_its_station() -> None:
    days = MIN_INDEX_DAYS - 1
    series = {"precipitation": np.ones((2, MIN_INDEX_DAYS)), "temperature": np.ones((2, MIN_INDEX_DAYS))}
    series["temperature"][1, :1] = np.nan
    with pytest.raises(ShortRecordError) as caught:
        derive_static(list(DERIVED_STATIC), series.__getitem__, np.array([45.0, 45.0]),
                      np.arange(MIN_INDEX_DAYS) % 365 + 1, np.ones(MIN_INDEX_DAYS, dtype=int))
    assert (caught.value.station, caught.value.days) == (1, days)
