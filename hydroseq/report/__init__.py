"""Stage ``report``: the forecaster's page, one self-contained HTML file per issued forecast or hindcast.

Reads only what ``hydroseq forecast`` published (its NetCDF files and a hindcast's scores) and, for the
observations, the ingested data file; needs bokeh and Jinja2 (the ``forecast`` extra), no torch, no MLflow.

Public API: :func:`write_report` (what ``hydroseq report`` calls) returns a :class:`Report`.

* A forecast page (``forecast=``): a map of every station coloured by its highest probability of exceeding
  a flood threshold, a sortable, filterable table, and the selected station's hydrograph (observations,
  forecast median and bands, thresholds, the previous forecast, its hindcast skill).
* A verification page (``hindcast=`` alone): per-station skill against persistence on a map with a lead
  selector, the per-lead score table, the reliability diagram and PIT histogram, each station's hindcast.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hydroseq.errors import ConfigError, InputDataError
from hydroseq.forecast.result import ForecastResult
from hydroseq.report.content import Page
from hydroseq.report.forecast_page import HISTORY_DAYS, forecast_page
from hydroseq.report.inputs import (
    Observations,
    check_same_target,
    grid_of,
    read_hindcast,
    read_hindcast_scores,
    read_issued_forecast,
    read_observations,
    read_station_list,
    select_stations,
)
from hydroseq.report.render import write_page
from hydroseq.report.timeaxis import TimeAxis, utc_text
from hydroseq.report.verification_page import verification_page

__all__ = ["MAX_STATIONS", "Report", "write_report"]

MAX_STATIONS = 2000  # a page of more takes seconds to sort its table (benchmarks/bench_report.py)


@dataclass(frozen=True)
class Report:
    """What :func:`write_report` wrote: the page, its kind, its stations and its size."""

    path: Path
    kind: str
    stations: int
    bytes: int
    notes: tuple[str, ...]


def write_report(out: str | Path, forecast: str | Path | None = None, data: str | Path | None = None,
                 hindcast: str | Path | None = None, previous: str | Path | None = None,
                 stations: str | Path | None = None, max_stations: int = MAX_STATIONS) -> Report:
    """Write the page of ``forecast`` (or, given ``hindcast`` alone, its verification page) to ``out``.

    ``data`` is the ingested file the observations come from (the last :data:`HISTORY_DAYS` days before
    the issue time on a forecast page, the whole period of a hindcast); ``previous`` an earlier forecast
    drawn beside this one; ``hindcast`` with ``forecast`` gives each station's recent skill (the scores
    ``hydroseq forecast`` published with it). ``stations``, a station list (a CSV with a ``station_id`` or
    ``station`` column, or one id a line), limits the page to those stations: one page per region. A page
    holds at most ``max_stations`` (default :data:`MAX_STATIONS`; beyond that the browser needs seconds to
    sort the table: ``docs/forecast.md#the-forecast-page-hydroseq-report``). Every input is read and checked
    before anything is written; the page replaces ``out`` whole.

    Raises
    ------
    ConfigError
        If neither ``forecast`` nor ``hindcast`` is given, ``previous`` comes without ``forecast``, ``out``
        is one of the inputs, or the page would hold more than ``max_stations`` stations.
    InputDataError
        Naming the file, if an input cannot be read or does not go with the forecast.
    """
    if previous is not None and forecast is None:
        raise ConfigError("--previous goes with --forecast")
    if forecast is None and hindcast is None:
        raise ConfigError("give --forecast (a forecast page) or --hindcast (a verification page)")
    out = Path(out)
    inputs = [Path(path) for path in (forecast, data, hindcast, previous) if path is not None]
    if any(out.resolve() == path.resolve() for path in inputs):
        raise ConfigError(f"--out {out} is one of the inputs; the page needs a file of its own")
    listed = read_station_list(stations) if stations is not None else None

    def cut(result: ForecastResult, path: str | Path) -> ForecastResult:
        if listed is not None:
            assert stations is not None
            result = select_stations(result, listed, stations)
        if len(result.stations) > max_stations:
            raise ConfigError(f"{path} has {len(result.stations):,} stations, more than a page holds well "
                              f"({max_stations:,}): write one page per region with --stations FILE (or raise "
                              "--max-stations)")
        return result

    if forecast is not None:
        page = _forecast_page(cut(read_issued_forecast(forecast, "--forecast"), forecast), Path(forecast), data,
                              hindcast, previous)
    else:
        assert hindcast is not None
        result = cut(read_hindcast(hindcast), hindcast)
        axis = TimeAxis(grid_of(result, hindcast))
        scores = read_hindcast_scores(hindcast, result)
        observations = _observations(data, result, axis, result.issue_times[0], result.valid_times.max())
        page = verification_page(result, axis, observations, scores)
    path = write_page(page, out)
    return Report(path, page.kind, len(page.rows), path.stat().st_size, tuple(page.notes))


def _forecast_page(result: ForecastResult, forecast: Path, data: str | Path | None, hindcast: str | Path | None,
                   previous: str | Path | None) -> Page:
    axis = TimeAxis(grid_of(result, forecast))
    issue = result.issue_times[0]
    earlier = None
    if previous is not None:
        earlier = read_issued_forecast(previous, "--previous")
        check_same_target(result, earlier, previous, "--previous")
        if earlier.issue_times[0] >= issue:
            raise InputDataError(previous, f"--previous was issued at {utc_text(earlier.issue_times[0])}, not "
                                           f"before the forecast ({utc_text(issue)})")
    scores, period = None, None
    if hindcast is not None:
        scored = read_hindcast(hindcast)
        check_same_target(result, scored, hindcast, "--hindcast")
        scores = read_hindcast_scores(hindcast, result)
        period = f"{axis.text(scored.issue_times[0])} to {axis.text(scored.issue_times[-1])}"
    start = issue - np.timedelta64(HISTORY_DAYS, "D")
    observations = _observations(data, result, axis, start, issue)
    return forecast_page(result, axis, observations, earlier, scores, period)


def _observations(data: str | Path | None, result: ForecastResult, axis: TimeAxis, start: np.datetime64,
                  end: np.datetime64) -> Observations | None:
    return None if data is None else read_observations(data, result, axis.grid, start, end)
