"""Reference forecasts every model must beat (kept here for compatibility; they live in :mod:`hydroseq.baselines`)."""

from __future__ import annotations

from hydroseq.baselines import doy_climatology, persistence
from hydroseq.dataset.periods import local_day_of_year

__all__ = ["doy_climatology", "local_day_of_year", "persistence"]
