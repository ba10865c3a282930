"""Where the inputs hydroseq derives itself come from (``data.climate_sources`` of a train config)."""

from __future__ import annotations

from pydantic import Field

from hydroseq.config.base import StrictModel


class ClimateSources(StrictModel):
    """The data-file variables that derived inputs (``pet_oudin``, the ``clim_*`` indices) are computed from."""

    precipitation: str = Field("total_precipitation_sum", description="daily precipitation, mm d-1")
    temperature: str = Field("temperature_2m_mean", description="daily mean air temperature, degC")
    latitude: str = Field("lat", description="per-station latitude, degrees north (the station table's lat)")
