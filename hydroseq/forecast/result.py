"""What a forecast run produces: values per issue time, station and lead, with their time axes, and its files."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from hydroseq.scoring.thresholds import StationThresholds


@dataclass(frozen=True)
class ForecastResult:
    """Forecast values for ``[issue time, station, lead]`` on a regular grid.

    Attributes
    ----------
    issue_times
        Forecast reference times (UTC, naive ``datetime64[ns]``): the label of the last grid step
        whose data the forecast used.
    stations
        Station ids, in the order of the second axis of ``values``.
    leads
        Lead times in grid steps; the valid time of lead ``k`` is ``issue_time + k * step``. Lead 0
        is the issue step itself (a per-step model simulates the flow of the last input step).
    step
        The grid step.
    values
        float32 ``[issue time, station, lead]`` in the target's units; NaN where a station could
        not be forecast at that issue time.
    variable, units, long_name, standard_name
        Name, units, description and CF standard name (empty: none) of the forecast quantity (from
        the ingested dataset).
    attributes
        Provenance written as global attributes (model run id, checksums, versions). Only
        deterministic values belong here: the files must be byte-identical on a re-run.
    skipped
        ``{station: reason}`` for stations that could not be forecast at any issue time.
    station_names, lats, lons, area_km2
        Optional station metadata copied from the dataset into the outputs; ``area_km2`` (float64, NaN
        where unknown) turns a depth-rate forecast (mm/d) into m³/s (:mod:`hydroseq.forecast.discharge`).
    observation_age_hours
        float32 ``[issue time, station]``: hours from the newest observed target to the issue
        time (0: observed at the issue step; NaN: none in the model's window), for models that
        read the observed target; None otherwise. A late gauge is forecast, not skipped.
    ungauged
        Models that read the observed target: the stations with no observation in the data file up
        to the last issue time (no gauge, or a file without the target); forecast like late gauges.
    forecast_input_age_hours
        float32 ``[issue time, station]``, models with ingested weather-forecast inputs: hours
        from the reference time of the product used to the issue time (the oldest over the
        inputs read from a product; NaN: the model read "no forecast" for every one); None otherwise.
    forecast_inputs, forecast_input_read, forecast_input_ages
        Models with weather-forecast inputs: their names; bool ``[issue time, station, input]``,
        whether the model read a forecast of each (a value at some lead; False: it fell back to
        "no forecast" for that input); float32 ``[issue time, station, input]``, per input the
        hours from the reference time of the product read to the issue time (NaN where it fell
        back, or a perfect input; None without ingested inputs). ``forecast_input_age_hours`` is
        the largest of these.
    fallback
        ``{station: reason}`` for stations forecast without some weather-forecast input at some
        issue time; the reason names the inputs that fell back and how the others were read.
    late_weather_forecast
        ``{station: reason}`` for stations whose forecast read an older run than the newest one due
        by the issue time (by the product's latency and issue frequency): the newest was late or
        missing; the reason names both runs. Also the global attribute ``late_weather_forecast_stations``.
    quantiles, quantile_levels
        Models with a predictive distribution: float32 ``[issue time, station, lead, level]`` (never
        negative, non-decreasing over the levels) and the levels; ``values`` is then the median.
    members
        Ensembles: float32 ``[issue time, station, lead, member]``, each member's point forecast
        (its median), never negative; ``values`` comes from the members' mean distribution.
    thresholds, exceedance
        Models with a predictive distribution: each station's flood thresholds and the probability
        of exceeding them, float32 ``[issue time, station, lead, threshold]``.
    max_observation_age_hours, stale
        With ``max_observation_age`` (one issue time): that limit, and ``{station: reason}`` for the
        stations forecast although their newest observed target is older (stale gauges, see
        :mod:`hydroseq.forecast.freshness`); None and empty otherwise.
    """

    issue_times: np.ndarray
    stations: tuple[str, ...]
    leads: np.ndarray
    step: pd.Timedelta
    values: np.ndarray
    variable: str
    units: str
    long_name: str = ""
    standard_name: str = ""
    attributes: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    station_names: tuple[str, ...] | None = None
    lats: np.ndarray | None = None
    lons: np.ndarray | None = None
    area_km2: np.ndarray | None = None
    observation_age_hours: np.ndarray | None = None
    ungauged: tuple[str, ...] = ()
    forecast_input_age_hours: np.ndarray | None = None
    fallback: dict[str, str] = field(default_factory=dict)
    late_weather_forecast: dict[str, str] = field(default_factory=dict)
    forecast_inputs: tuple[str, ...] = ()
    forecast_input_read: np.ndarray | None = None
    forecast_input_ages: np.ndarray | None = None
    quantiles: np.ndarray | None = None
    quantile_levels: tuple[float, ...] | None = None
    members: np.ndarray | None = None
    thresholds: StationThresholds | None = None
    exceedance: np.ndarray | None = None
    max_observation_age_hours: float | None = None
    stale: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        expected = (len(self.issue_times), len(self.stations), len(self.leads))
        if self.values.shape != expected:
            raise ValueError(f"values have shape {self.values.shape}, expected {expected} "
                             "(issue time, station, lead)")
        if (self.quantiles is None) != (self.quantile_levels is None):
            raise ValueError("quantiles and quantile_levels go together")
        if self.quantiles is not None and self.quantile_levels is not None:
            if self.quantiles.shape != (*expected, len(self.quantile_levels)):
                raise ValueError(f"quantiles have shape {self.quantiles.shape}, expected "
                                 f"{(*expected, len(self.quantile_levels))} (issue time, station, lead, level)")
        if self.members is not None and self.members.shape[:3] != expected:
            raise ValueError(f"members have shape {self.members.shape}, expected {expected} + (member,)")

    @property
    def valid_times(self) -> np.ndarray:
        """``datetime64[ns]`` of shape ``[issue time, lead]``: when each forecast value applies."""
        offsets = np.asarray(self.leads, dtype=np.int64) * np.timedelta64(self.step.value, "ns")
        return np.asarray(self.issue_times, dtype="datetime64[ns]")[:, None] + offsets[None, :]

    @property
    def forecast_period_hours(self) -> np.ndarray:
        """Lead times as float64 hours (CF ``forecast_period``)."""
        return np.asarray(self.leads, dtype=np.float64) * (self.step / pd.Timedelta(hours=1))


OBSERVATION_AGE_COLUMN = "observation_age_hours"  # how late the gauge was, in the CSV and the served model's table
STALE_COLUMN = "stale_gauge"  # with --max-observation-age: 1 where the newest observation is older than that


def member_column(member: int) -> str:
    """``value_member0``, ...: the column of an ensemble member's point forecast in the CSV and the served table."""
    return f"value_member{member}"


def quantile_label(level: float) -> str:
    """``q05`` for 0.05, ``q50`` for 0.5, ``q97.5`` for 0.975: the level in percent."""
    percent = f"{level * 100:.6g}"
    return f"q{percent.zfill(2) if '.' not in percent else percent}"


def lead_text(lead: int, step: pd.Timedelta) -> str:
    """``lead 1 d``; ``lead 0.25 d (6 h)`` on a sub-daily grid."""
    days = lead * (step / pd.Timedelta(days=1))
    hours = lead * (step / pd.Timedelta(hours=1))
    return f"lead {days:g} d" if step >= pd.Timedelta(days=1) or lead == 0 else f"lead {days:.3g} d ({hours:g} h)"
