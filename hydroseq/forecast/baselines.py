"""The reference forecasts a hindcast is scored beside: persistence and training-period climatology.

* **persistence** (:func:`newest_observation_persistence`): ``Q(issue + lead)`` = the newest observed
  target at or before the issue step (for lead 0, a simulation, the newest before it), read from the
  ingested file's window; nothing after the issue step is used. A late gauge's newest value is carried
  forward, as a forecaster would; ``hydroseq evaluate``'s persistence is the issue step's own observation
  (:func:`hydroseq.scoring.baselines.issue_step_persistence`), missing when the gauge missed that step.
* **climatology**: the per-station mean of the observed target by local day of year, fitted on the
  training period of the exported model (``metadata.train_config``) only, read from the ingested
  file in pieces of :data:`CHUNK_STEPS` grid steps whatever window the forecast reads.
"""

from __future__ import annotations

import numpy as np

from hydroseq.config.train import Period
from hydroseq.dataset.observed import newest_observed
from hydroseq.forecast.data_window import IngestedFile
from hydroseq.forecast.result import ForecastResult
from hydroseq.grid import GridSpec
from hydroseq.scoring.baselines import DayOfYearMeans

CHUNK_STEPS = 8784  # one leap year of hourly steps: the most of the target read at once per station


def climatology_table(source: IngestedFile, period: Period) -> np.ndarray:
    """``[station, 367]`` day-of-year means of the target over ``period`` (NaN where never observed)."""
    times = source.times
    inside = np.flatnonzero(source.grid.period_mask(times, period))
    means = DayOfYearMeans(len(source.station_ids))
    if inside.size:
        for start in range(int(inside[0]), int(inside[-1]) + 1, CHUNK_STEPS):
            stop = min(start + CHUNK_STEPS, int(inside[-1]) + 1)
            days = source.grid.day_of_year(times[start:stop])
            means.add(source.read_target(start, stop), days)
    return means.table()


def newest_observation_persistence(target: np.ndarray, ends: np.ndarray, leads: np.ndarray) -> np.ndarray:
    """``[issue, station, lead]``: the newest observation at or before each issue step (lead 0: before it).

    ``target`` is the ``[station, time]`` window the forecast read and ``ends`` the issue steps in it.
    """
    at_issue = newest_observed(target, ends).T
    before_issue = newest_observed(target, np.maximum(ends - 1, 0)).T
    before_issue[ends == 0] = np.nan
    values = np.stack([before_issue if lead == 0 else at_issue for lead in leads], axis=-1)
    return values.astype(np.float32)


def climatology_forecast(table: np.ndarray, result: ForecastResult, grid: GridSpec) -> np.ndarray:
    """``[issue, station, lead]``: the climatology of each valid time's local day of year on ``grid``."""
    valid = result.valid_times
    days = grid.day_of_year(valid.ravel()).reshape(valid.shape)
    return table[:, days].transpose(1, 0, 2).astype(np.float32)


def training_climatology(source: IngestedFile) -> np.ndarray | None:
    """The climatology table of the model's training period, or None if the metadata do not say it."""
    period = source.metadata.training_period
    return None if period is None else climatology_table(source, period)


def hindcast_baselines(result: ForecastResult, target: np.ndarray, ends: np.ndarray, table: np.ndarray | None,
                       grid: GridSpec) -> dict[str, np.ndarray]:
    """Persistence and climatology ``[issue, station, lead]`` (climatology NaN when ``table`` is None)."""
    if table is None:
        climatology = np.full(result.values.shape, np.nan, dtype=np.float32)
    else:
        climatology = climatology_forecast(table, result, grid)
    return {"persistence": newest_observation_persistence(target, ends, result.leads), "climatology": climatology}
