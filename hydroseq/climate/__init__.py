"""Inputs hydroseq derives itself from a basin's daily series and its station table (numpy only).

A shipped model that reads these needs no attribute an agency does not have at hand: only daily
precipitation and mean air temperature, the station's latitude and area. Training and forecasting
call the same functions (:func:`derive_static`, :func:`derive_dynamic`), so a derived input means
the same thing on every basin.

- :mod:`.pet`: potential evapotranspiration after Oudin et al. (2005) from temperature and latitude;
- :mod:`.indices`: Caravan's ten climate indices from precipitation, PET and temperature;
- :mod:`.derived`: which names are derived, their units, and the period they are taken from.
"""

from hydroseq.climate.derived import (
    DERIVED_DYNAMIC,
    DERIVED_STATIC,
    MIN_INDEX_DAYS,
    derive_dynamic,
    derive_static,
    index_period,
    is_derived,
    needed_sources,
)
from hydroseq.climate.indices import CLIMATE_INDICES, climate_indices
from hydroseq.climate.pet import extraterrestrial_radiation, oudin_pet

__all__ = [
    "CLIMATE_INDICES",
    "DERIVED_DYNAMIC",
    "DERIVED_STATIC",
    "MIN_INDEX_DAYS",
    "climate_indices",
    "derive_dynamic",
    "derive_static",
    "extraterrestrial_radiation",
    "index_period",
    "is_derived",
    "needed_sources",
    "oudin_pet",
]
