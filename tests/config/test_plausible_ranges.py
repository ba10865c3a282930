"""Ingest's plausible ranges, as the forecast and the served model read them on an ingested file's grid."""

from __future__ import annotations

import pandas as pd
import pytest

from hydroseq.config.plausible_ranges import ANY_VALUE, DEFAULT_BOUNDS, written_bounds
from hydroseq.ingest import plausibility

DAY, HOUR = pd.Timedelta("1D"), pd.Timedelta("1h")


def test_ingest_screens_its_sources_with_the_same_ranges() -> None:
    assert plausibility.DEFAULT_BOUNDS is DEFAULT_BOUNDS and ANY_VALUE == DEFAULT_BOUNDS["other"]


@pytest.mark.parametrize(("units", "step", "expected"), [
    ("mm", DAY, (0.0, 50_000.0)),  # an amount over a day: at most the depth-rate bound over it
    ("mm", HOUR, (0.0, 5_000.0)),  # ... never below the bound of one source step's amount
    ("mm d-1", DAY, (0.0, 50_000.0)),
    ("mm h-1", HOUR, (0.0, 50_000.0 / 24)),
    ("m3 s-1", DAY, (0.0, 1e6)),
    ("degC", DAY, (-90.0, 60.0)),
    ("K", DAY, (183.15, 333.15)),
    ("W m-2", DAY, ANY_VALUE),  # a quantity ingest passes through: finite
    (None, DAY, ANY_VALUE),
])
def test_the_default_range_of_a_variable_follows_the_units_ingest_writes(units: str | None, step: pd.Timedelta,
                                                                         expected: tuple[float, float]) -> None:
    assert written_bounds(units, step) == pytest.approx(expected)
