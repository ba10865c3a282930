"""Caravan's climate indices of a basin, from daily precipitation, PET and mean air temperature.

The definitions are Caravan's (Kratzert et al. 2023) after CAMELS (Addor et al. 2017) and Knoben et al.
(2018), computed over the valid days of a period (a day counts where precipitation, PET and
temperature are all present):

========================  ====  ===========================================================================
name                      unit  definition
========================  ====  ===========================================================================
``p_mean``                mm/d  mean daily precipitation
``pet_mean``              mm/d  mean daily potential evapotranspiration
``aridity``               1     ``pet_mean / p_mean``
``frac_snow``             1     share of the precipitation that falls on days colder than 0 degC
``moisture_index``        1     mean over the 12 calendar months of Knoben's moisture index of the
                                month's mean P and PET (``1 - PET/P`` where P > PET, else ``P/PET - 1``)
``seasonality``           1     the range (max - min) of those 12 monthly moisture indices
``high_prec_freq``        1     share of days with at least 5 x ``p_mean``
``high_prec_dur``         d     mean length of runs of such days
``low_prec_freq``         1     share of days below 1 mm
``low_prec_dur``          d     mean length of runs of such days
========================  ====  ===========================================================================

A missing day ends a run. Everything is vectorised over stations (``[station, time]`` arrays).
"""

from __future__ import annotations

import numpy as np

CLIMATE_INDICES: dict[str, str] = {
    "p_mean": "mm d-1", "pet_mean": "mm d-1", "aridity": "1", "frac_snow": "1", "moisture_index": "1",
    "seasonality": "1", "high_prec_freq": "1", "high_prec_dur": "d", "low_prec_freq": "1", "low_prec_dur": "d",
}
HIGH_PRECIPITATION_FACTOR = 5.0  # times the mean daily precipitation
DRY_DAY_MM = 1.0  # mm d-1


def climate_indices(precipitation: np.ndarray, pet: np.ndarray, temperature: np.ndarray,
                    month: np.ndarray) -> dict[str, np.ndarray]:
    """The indices of :data:`CLIMATE_INDICES` per station (float64 ``[station]``, NaN without valid days).

    Args:
        precipitation: daily precipitation in mm d-1, ``[station, time]``.
        pet: daily potential evapotranspiration in mm d-1, ``[station, time]``.
        temperature: daily mean air temperature in degC, ``[station, time]``.
        month: the calendar month (1..12) of each step's local day, ``[time]``.

    Returns
    -------
        ``{name: values}`` in the order of :data:`CLIMATE_INDICES`.
    """
    p = np.asarray(precipitation, dtype=np.float64)
    e = np.asarray(pet, dtype=np.float64)
    t = np.asarray(temperature, dtype=np.float64)
    valid = np.isfinite(p) & np.isfinite(e) & np.isfinite(t)
    days = valid.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_mean = np.where(valid, p, 0.0).sum(axis=1) / days
        pet_mean = np.where(valid, e, 0.0).sum(axis=1) / days
        snow = np.where(valid & (t < 0.0), p, 0.0).sum(axis=1)
        frac_snow = snow / np.where(valid, p, 0.0).sum(axis=1)
        moisture_index, seasonality = _moisture_index(p, e, valid, np.asarray(month))
        high = valid & (p >= HIGH_PRECIPITATION_FACTOR * p_mean[:, None])
        low = valid & (p < DRY_DAY_MM)
        return {
            "p_mean": p_mean, "pet_mean": pet_mean, "aridity": pet_mean / p_mean, "frac_snow": frac_snow,
            "moisture_index": moisture_index, "seasonality": seasonality,
            "high_prec_freq": high.sum(axis=1) / days, "high_prec_dur": _mean_run_length(high),
            "low_prec_freq": low.sum(axis=1) / days, "low_prec_dur": _mean_run_length(low),
        }


def _moisture_index(p: np.ndarray, e: np.ndarray, valid: np.ndarray,
                    month: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and range over the calendar months of Knoben's moisture index of each month's mean P and PET."""
    monthly = []
    for number in range(1, 13):
        in_month = valid & (month == number)[None, :]
        count = in_month.sum(axis=1)
        p_month = np.where(in_month, p, 0.0).sum(axis=1) / count
        e_month = np.where(in_month, e, 0.0).sum(axis=1) / count
        index = np.where(p_month > e_month, 1.0 - e_month / p_month,
                         np.where(p_month < e_month, p_month / e_month - 1.0, 0.0))
        monthly.append(np.where(count > 0, index, np.nan))
    table = np.stack(monthly, axis=1)
    return table.mean(axis=1), table.max(axis=1) - table.min(axis=1)


def _mean_run_length(flags: np.ndarray) -> np.ndarray:
    """Mean length of the runs of True along the time axis (NaN for a station without any)."""
    starts = flags.copy()
    starts[:, 1:] &= ~flags[:, :-1]
    return flags.sum(axis=1) / starts.sum(axis=1)
