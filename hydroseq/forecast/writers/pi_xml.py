"""The forecast as Delft-FEWS PI-XML time series of discharge in m³/s (``--format pi-xml``, ``<out stem>.xml``):
what a FEWS General Adapter imports (docs/fews.md)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from hydroseq import __version__
from hydroseq.config.units import to_m3s
from hydroseq.errors import ConfigError
from hydroseq.fileio.atomic import public_path
from hydroseq.forecast.result import ForecastResult, quantile_label

PI_PARAMETER = "Q.forecast"  # the parameterId of every PI-XML series (a FEWS id map maps it to its own)
PI_ENSEMBLE = "hydroseq"  # the ensembleId of an ensemble's members
PI_MISSING = -999.0  # missVal


def write_forecast_pi_xml(result: ForecastResult, path: str | Path) -> Path:
    """Write ``result`` (one issue time) as Delft-FEWS PI-XML time series of discharge in m³/s, atomically.

    Per station forecast, ``locationId`` the station id and ``parameterId`` :data:`PI_PARAMETER`: the point forecast
    (a predictive distribution's median) without qualifier; each quantile with ``qualifierId`` ``q05``, ``q50``,
    ... (:func:`~hydroseq.forecast.result.quantile_label`); each ensemble member with ``ensembleId``
    :data:`PI_ENSEMBLE` and ``ensembleMemberIndex`` 0, 1, .... A series holds every lead, stamped at the end of
    the grid interval its mean covers (``type`` ``mean``), ``forecastDate`` the issue time; a value missing
    (a member without one, a station without a catchment area for a depth-rate target) is ``missVal``
    :data:`PI_MISSING`. A station not forecast has no series. UTC, ``units`` ``m3/s``
    (:mod:`hydroseq.fileio.pi_xml`).

    Raises
    ------
    ConfigError
        If ``result`` holds several issue times (a hindcast), or its target has no m³/s counterpart (a depth rate
        without the stations' catchment areas).
    """
    from hydroseq.fileio.pi_xml import PiSeries, write_pi_series  # lxml: loaded for PI-XML only

    published = public_path(Path(path))  # messages name the file, not the temporary written first
    if len(result.issue_times) != 1:
        raise ConfigError(f"{published}: PI-XML is written for a forecast at one issue time, not a hindcast of "
                          f"{len(result.issue_times)}")
    flows: dict[str, np.ndarray] = {}
    for name, array in (("value", result.values), ("quantiles", result.quantiles), ("members", result.members)):
        if array is None:
            continue
        converted = to_m3s(array[0], result.units, result.step, result.area_km2)
        if converted is None:
            raise ConfigError(f"{published}: PI-XML carries discharge in m3/s, and the forecast {result.variable} in "
                              f"{result.units} cannot be converted (a depth rate needs the stations' area_km2)")
        flows[name] = converted
    name, levels = result.long_name or result.variable, result.quantile_levels or ()
    series = []
    for s, station in enumerate(result.stations):
        if not np.isfinite(result.values[0, s]).any():
            continue
        point = PiSeries(
            location=station, parameter=PI_PARAMETER, kind="mean", step=result.step,
            stamps=pd.DatetimeIndex(result.valid_times[0]), values=flows["value"][s], units="m3/s",
            forecast_date=pd.Timestamp(result.issue_times[0]),
            long_name=f"{name}, {'median' if levels else 'forecast'}",
            station_name=None if result.station_names is None else str(result.station_names[s]),
            lat=None if result.lats is None else float(result.lats[s]),
            lon=None if result.lons is None else float(result.lons[s]))
        series.append(point)
        series += [replace(point, values=flows["quantiles"][s, :, k], qualifiers=(quantile_label(level),),
                           long_name=f"{name}, quantile {level:g}") for k, level in enumerate(levels)]
        members = flows["members"].shape[-1] if "members" in flows else 0
        series += [replace(point, values=flows["members"][s, :, member], member=str(member), ensemble_id=PI_ENSEMBLE,
                           long_name=f"{name}, ensemble member {member}") for member in range(members)]
    return write_pi_series(path, series, PI_MISSING, f"hydroseq {__version__}")
