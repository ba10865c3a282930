"""Potential evapotranspiration from air temperature and latitude (Oudin et al. 2005).

Oudin, L., Hervieu, F., Michel, C., Perrin, C., Andréassian, V., Anctil, F. and Loumagne, C. (2005):
Which potential evapotranspiration input for a lumped rainfall-runoff model? Part 2. J. Hydrol. 303,
290-306, doi:10.1016/j.jhydrol.2004.08.026. ``PE = Re / (lambda rho) * (T + 5) / 100`` where
``T + 5 > 0``, else 0; ``Re`` is the extraterrestrial radiation of the day (FAO-56, Allen et al. 1998,
eq. 21-25), ``lambda`` = 2.45 MJ kg-1 and ``rho`` = 1000 kg m-3, so that with ``Re`` in MJ m-2 d-1
the result is in mm d-1. It needs nothing but what every agency has, and it is one definition for
every basin: a model trained on it never reads a PET product of another scale.
"""

from __future__ import annotations

import numpy as np

SOLAR_CONSTANT = 0.0820  # MJ m-2 min-1 (FAO-56)
LATENT_HEAT = 2.45  # MJ kg-1
TEMPERATURE_OFFSET = 5.0  # degC: below -5 degC there is no evaporation in Oudin's formula
TEMPERATURE_SCALE = 100.0  # degC


def extraterrestrial_radiation(latitude_deg: np.ndarray, day_of_year: np.ndarray) -> np.ndarray:
    """Daily extraterrestrial radiation ``Re`` in MJ m-2 d-1 (FAO-56 eq. 21), broadcast over the inputs.

    Args:
        latitude_deg: latitude in degrees north (-90..90).
        day_of_year: day of the year, 1..366.

    Returns
    -------
        ``Re`` (float64); 0 in a polar night, the full-day value in a polar day.
    """
    latitude = np.deg2rad(np.asarray(latitude_deg, dtype=np.float64))
    angle = 2.0 * np.pi * np.asarray(day_of_year, dtype=np.float64) / 365.0
    inverse_distance = 1.0 + 0.033 * np.cos(angle)
    declination = 0.409 * np.sin(angle - 1.39)
    sunset_angle = np.arccos(np.clip(-np.tan(latitude) * np.tan(declination), -1.0, 1.0))
    daily = (sunset_angle * np.sin(latitude) * np.sin(declination)
             + np.cos(latitude) * np.cos(declination) * np.sin(sunset_angle))
    return np.maximum(24.0 * 60.0 / np.pi * SOLAR_CONSTANT * inverse_distance * daily, 0.0)


def oudin_pet(temperature_degc: np.ndarray, latitude_deg: np.ndarray, day_of_year: np.ndarray) -> np.ndarray:
    """Oudin's potential evapotranspiration in mm d-1, NaN where the temperature is missing.

    Args:
        temperature_degc: daily mean air temperature in degC, ``[station, time]`` (or any shape).
        latitude_deg: latitude in degrees north, broadcastable to it (``[station, 1]``).
        day_of_year: the local day of year of each step, broadcastable to it (``[time]``).

    Returns
    -------
        float32 of the broadcast shape.
    """
    temperature = np.asarray(temperature_degc, dtype=np.float64)
    radiation = extraterrestrial_radiation(latitude_deg, day_of_year)
    pet = radiation / LATENT_HEAT * np.maximum(temperature + TEMPERATURE_OFFSET, 0.0) / TEMPERATURE_SCALE
    return np.where(np.isfinite(temperature), pet, np.nan).astype(np.float32)
