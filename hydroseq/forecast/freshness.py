"""How fresh the data behind a forecast are, for a scheduler that runs it every day.

* A data file that ends before the issue time (the day's raw files have not arrived, so
  ``hydroseq ingest --append`` appended nothing; :func:`hydroseq.grid.issue_times.locate_issue` says so):
  no station has input at the issue step, which is the "nothing produced" of an all-missing issue
  step, not an unusable file.
* Stale gauges: stations whose newest observed target is older than ``max_observation_age`` hours
  at the issue time. They are forecast and published all the same (a model that reads the observed
  discharge reads them as not observed since then); the files flag them and the CLI counts them
  with the stations not forecast against ``--max-skipped-share``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from hydroseq.export import ExportMetadata
from hydroseq.forecast.data_window import StationInfo
from hydroseq.forecast.result import ForecastResult


def nothing_at_the_issue_step(metadata: ExportMetadata, info: StationInfo, station_ids: tuple[str, ...],
                              issue_label: np.datetime64, last_label: np.datetime64) -> ForecastResult:
    """The forecast at ``issue_label`` of a file that ends at ``last_label``, before it: every station
    skipped, with the reason."""
    hours = (issue_label - last_label) / np.timedelta64(1, "h")
    reason = (f"no data at the issue step {pd.Timestamp(issue_label).isoformat()}Z: the data file ends "
              f"{hours:g} h before it, at {pd.Timestamp(last_label).isoformat()}Z (ingest the newest steps first: "
              "hydroseq ingest --append; its raw files may not have arrived)")
    leads = np.asarray(metadata.leads, dtype=np.int64)
    return ForecastResult(
        issue_times=np.asarray([issue_label], dtype="datetime64[ns]"), stations=station_ids, leads=leads,
        step=metadata.grid.step, values=np.full((1, len(station_ids), len(leads)), np.nan, np.float32),
        variable=metadata.target, units=info.target_units, long_name=f"forecast of {info.target_long_name}",
        standard_name=info.target_standard_name, skipped=dict.fromkeys(station_ids, reason),
        station_names=info.names, lats=info.lats, lons=info.lons, area_km2=info.areas)


def stale_gauges(result: ForecastResult, newest: np.ndarray, issue: int, step: pd.Timedelta,
                 max_age_hours: float) -> dict[str, str]:
    """``{station: reason}`` for the stations forecast at the (single) issue time whose newest observed
    target, at grid step ``newest`` (the data file's index; -1: none, an ungauged station, not counted),
    is more than ``max_age_hours`` before the issue step ``issue``."""
    forecast = np.isfinite(result.values[-1]).any(axis=1)
    ages = (issue - newest) * (step / pd.Timedelta(hours=1))
    return {station: (f"newest observed {result.variable} {age:g} h before the issue time, more than the "
                      f"{max_age_hours:g} h allowed")
            for station, age, gauged, was_forecast in zip(result.stations, ages, newest >= 0, forecast, strict=True)
            if gauged and was_forecast and age > max_age_hours}
