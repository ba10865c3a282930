"""Which model inputs hydroseq derives, from what, and over which period.

Derived inputs are named in a model's config like any other input; they are never read from a data
file. ``pet_oudin`` (a dynamic input, mm d-1) is computed step by step from the day's mean air temperature
and the station's latitude (:func:`~hydroseq.climate.pet.oudin_pet`). The static ``clim_*`` inputs are
Caravan's climate indices (:mod:`~hydroseq.climate.indices`) of the station's precipitation, ``pet_oudin``
and temperature over an index period:

* in training and in evaluation, the training period (the indices never see a validation or test day);
* in a forecast or a hindcast, the last :data:`INDEX_YEARS` years up to its first issue step (never a day
  after any issue time of the run).

At least :data:`MIN_INDEX_DAYS` complete days (precipitation and temperature both present) are needed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from hydroseq.climate.indices import CLIMATE_INDICES, climate_indices
from hydroseq.climate.pet import oudin_pet
from hydroseq.config.derived import ClimateSources

PET_NAME = "pet_oudin"
INDEX_PREFIX = "clim_"
DERIVED_DYNAMIC: dict[str, str] = {PET_NAME: "mm d-1"}
DERIVED_STATIC: dict[str, str] = {f"{INDEX_PREFIX}{name}": units for name, units in CLIMATE_INDICES.items()}
INDEX_YEARS = 30
MIN_INDEX_DAYS = 730  # two years: a shorter record gives indices of a season, not of a climate


def needed_sources(names: Sequence[str], sources: ClimateSources) -> list[str]:
    """The data-file variables that deriving ``names`` reads (empty when none of them is derived)."""
    if any(name in DERIVED_STATIC for name in names):
        return [sources.precipitation, sources.temperature, sources.latitude]
    if any(name in DERIVED_DYNAMIC for name in names):
        return [sources.temperature, sources.latitude]
    return []


class ShortRecordError(ValueError):
    """A station has fewer complete days than :data:`MIN_INDEX_DAYS` in its index period."""

    def __init__(self, station: int, days: int) -> None:
        super().__init__(f"{days} days with precipitation and temperature in the climate-index period, "
                         f"at least {MIN_INDEX_DAYS} are needed")
        self.station = station
        self.days = days


def is_derived(name: str) -> bool:
    """Whether hydroseq computes the input ``name`` itself."""
    return name in DERIVED_DYNAMIC or name in DERIVED_STATIC


def derive_dynamic(name: str, temperature: np.ndarray, latitude: np.ndarray, day_of_year: np.ndarray) -> np.ndarray:
    """The derived dynamic input ``name`` ``[station, time]`` (float32) from ``temperature`` ``[station, time]``,
    ``latitude`` ``[station]`` and the local ``day_of_year`` ``[time]``."""
    if name != PET_NAME:
        raise KeyError(f"{name!r} is not a derived dynamic input ({', '.join(DERIVED_DYNAMIC)})")
    return oudin_pet(temperature, np.asarray(latitude, dtype=np.float64)[:, None], day_of_year[None, :])


def index_period(first_issue: int, steps_per_day: int = 1) -> slice:
    """The steps a forecast whose first issue step is ``first_issue`` takes its climate indices from."""
    return slice(max(0, first_issue + 1 - INDEX_YEARS * 365 * steps_per_day), first_issue + 1)


def derive_static(names: Sequence[str], read: Callable[[str], np.ndarray], latitude: np.ndarray,
                  day_of_year: np.ndarray, month: np.ndarray) -> np.ndarray:
    """The derived static inputs ``names`` ``[station, len(names)]`` (float32) over the steps ``read`` returns.

    Args:
        names: derived static names (``clim_*``), in model order.
        read: the source variable's values ``[station, time]`` on the index period, by name
            (``"precipitation"`` or ``"temperature"``).
        latitude: ``[station]`` in degrees north.
        day_of_year, month: of each step's local day on the index period, ``[time]``.

    Raises
    ------
        ShortRecordError: if a station has fewer than :data:`MIN_INDEX_DAYS` complete days.
    """
    precipitation, temperature = read("precipitation"), read("temperature")
    complete = (np.isfinite(precipitation) & np.isfinite(temperature)).sum(axis=1)
    if (short := np.flatnonzero(complete < MIN_INDEX_DAYS)).size:
        raise ShortRecordError(int(short[0]), int(complete[short[0]]))
    pet = derive_dynamic(PET_NAME, temperature, latitude, day_of_year)
    values = climate_indices(precipitation, pet, temperature, month)
    return np.stack([values[name.removeprefix(INDEX_PREFIX)] for name in names], axis=1).astype(np.float32)


def describe_derived(names: Sequence[str], sources: ClimateSources) -> str:
    """One line saying which of ``names`` hydroseq derives and from what ("" when none is derived)."""
    parts = []
    if PET_NAME in names:
        parts.append(f"{PET_NAME} (Oudin 2005 PET from {sources.temperature} and {sources.latitude}; a PET variable "
                     "of the data file is not read)")
    indices = [name for name in names if name in DERIVED_STATIC]
    if indices:
        parts.append(f"{len(indices)} climate indices (clim_*) from {sources.precipitation}, {sources.temperature} "
                     f"and {PET_NAME} of at most {INDEX_YEARS} years up to the first issue day")
    return f"inputs derived by hydroseq: {'; '.join(parts)}" if parts else ""
