"""The forecast as an MLflow pyfunc model: a long table of raw inputs in, discharge per station and lead out.

``mlflow.pyfunc.load_model("models:/<name>/<version>").predict(frame)`` runs the exported network
of a training run (its artifact ``exported_model/``: ``model.onnx`` and ``metadata.json``, with the
scalers and the feature layout) exactly as ``hydroseq forecast`` does at one issue time.

Input: one row per station and grid step (the grid label, the UTC end of the interval, as in the
ingested file), columns ``station``, ``time``, each dynamic input, the observed target if the model
reads it (NaN where not observed), each weather-forecast input's value for lead ``k`` issued at that
step as ``<variable>_forecast_lead<k>`` if the model reads them, and the static attributes (the
same on every row of a station); the values in the ingested file's units. :func:`input_columns`
lists them for a model. Steps without a row count as missing. The rows are checked as ingest and
``hydroseq forecast`` check theirs (:mod:`hydroseq.serving.served_input`: columns, times, the
plausibility bounds of ingest, recorded in the model's config when it is logged). The issue time is
the newest ``time`` in the table, or the param ``issue_time``, read as ``hydroseq forecast
--issue-time`` reads it (:func:`hydroseq.grid.issue_times.parse_instant`: a date is the end of
that local day of the grid; the grid label at or before it, :func:`hydroseq.grid.issue_times.locate_issue`).

Output: one row per station (in input order) and lead: ``station``, ``issue_time``, ``lead`` (grid
steps), ``valid_time``, ``value`` (the forecast, its median for a quantile model, negative values
published as 0), for a quantile model ``value_q05`` ... and, when it was logged with flood
thresholds (:mod:`hydroseq.serving.pyfunc_thresholds`), the probability of exceeding each
``p_exceed_<level>`` (as in the forecast CSV), for an ensemble each member's point forecast
``value_member0`` ... (the member spread), and for a model that reads the observed target
``observation_age_hours`` (how late the gauge was at the issue time, as in the forecast CSV). A
station with fewer than ``min(min_len, seq_len)`` valid steps up to the issue time gets NaN, also
when no station has them. A model logged with its training file's station table
(:mod:`hydroseq.serving.pyfunc_stations`) adds, as the CSV does, each value in m³/s (``value_m3s``,
``value_q05_m3s``, ..., ``value_member0_m3s``, ...: after the members, before the observation age;
NaN for a station without an area) and ends with ``station_name`` and ``area_km2``; an optional input
column ``area_km2`` (km², the same on a station's rows) overrides the recorded area of a station.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from mlflow.pyfunc.model import PythonModel, PythonModelContext

from hydroseq.dataset import StationData
from hydroseq.errors import ConfigError, InputDataError
from hydroseq.export import ExportedModel, ExportMetadata
from hydroseq.forecast.core import forecast_core
from hydroseq.forecast.probabilistic import exceedance
from hydroseq.forecast.result import ForecastResult
from hydroseq.forecast.table import forecast_table, table_columns
from hydroseq.grid import GridSpec
from hydroseq.grid.issue_times import locate_issue, parse_instant
from hydroseq.scoring.thresholds import StationThresholds
from hydroseq.serving.pyfunc_stations import (
    STATIONS_ARTIFACT,
    StationTable,
    given_areas,
    read_stations,
)
from hydroseq.serving.pyfunc_thresholds import FLOOD_THRESHOLDS_ARTIFACT, read_thresholds
from hydroseq.serving.served_input import (
    INPUT_NAME,
    STATION,
    TIME,
    Bounds,
    check_lead_coverage,
    check_plausible,
    forecast_columns,
    input_columns,
    station_data_from_frame,
)

EXPORTED_MODEL_ARTIFACT = "exported_model"  # the pyfunc's artifact key: the exported model directory
ISSUE_TIME_PARAM = "issue_time"  # "" (the default): the newest time in the input
INPUT_BOUNDS_CONFIG = "input_bounds"  # the model config's key: {variable: [low, high]} (input_bounds.py)
__all__ = ["EXPORTED_MODEL_ARTIFACT", "INPUT_BOUNDS_CONFIG", "ISSUE_TIME_PARAM", "ForecastModel", "forecast_frame",
           "frame_from_station_data", "input_columns", "output_columns", "station_data_from_frame"]


def output_columns(metadata: ExportMetadata, thresholds: StationThresholds | None = None,
                   stations: StationTable | None = None) -> list[str]:
    """The output table's columns for a model (logged with flood ``thresholds``, if it has quantiles, and the
    ``stations`` table): those of the forecast CSV it has (:func:`hydroseq.forecast.table.table_columns`)."""
    return table_columns(metadata.quantiles, thresholds.levels if thresholds is not None and metadata.quantiles else (),
                         metadata.members if metadata.members > 1 else 0,
                         in_m3s=stations is not None and stations.converts(metadata.grid.step),
                         observation_age=metadata.feature_layout().observed_flag, names=stations is not None,
                         areas=stations is not None)


class ForecastModel(PythonModel):
    """The pyfunc model; its one artifact is the exported model directory (:data:`EXPORTED_MODEL_ARTIFACT`)."""

    def load_context(self, context: PythonModelContext) -> None:
        """Load the exported network (checksums verified) from the model's artifacts, its flood thresholds,
        its station table and the plausibility bounds of its inputs from its config (none in a model logged
        before they were recorded)."""
        self.exported = ExportedModel(context.artifacts[EXPORTED_MODEL_ARTIFACT])
        self.bounds: Bounds | None = (context.model_config or {}).get(INPUT_BOUNDS_CONFIG)
        path = context.artifacts.get(FLOOD_THRESHOLDS_ARTIFACT)
        self.thresholds = read_thresholds(path) if path else None
        path = context.artifacts.get(STATIONS_ARTIFACT)
        self.stations = read_stations(path) if path else None

    def predict(self, context: PythonModelContext | None, model_input: pd.DataFrame,
                params: dict[str, Any] | None = None) -> pd.DataFrame:
        """The forecast of every station of ``model_input`` at the issue time (see the module docstring)."""
        return forecast_frame(self.exported, model_input, (params or {}).get(ISSUE_TIME_PARAM) or None, self.bounds,
                              self.thresholds, self.stations)


def forecast_frame(model: ExportedModel, frame: pd.DataFrame, issue_time: str | None = None,
                   bounds: Bounds | None = None, thresholds: StationThresholds | None = None,
                   stations: StationTable | None = None) -> pd.DataFrame:
    """The forecast of every station of the long table ``frame`` at ``issue_time`` (default: its newest time).

    ``bounds`` are the plausibility bounds of the inputs (``{variable: (low, high)}``,
    :func:`hydroseq.serving.input_bounds.input_bounds`); without them a value must lie within ±1e30.
    A quantile model with flood ``thresholds`` adds the probability of exceeding each (a station they
    lack: NaN), computed as ``hydroseq forecast`` computes it. With the ``stations`` table it adds the
    values in m³/s and each station's name and area (the input's ``area_km2`` column first).

    Raises
    ------
    InputDataError
        If the rows fail a check of :mod:`hydroseq.serving.served_input` (a column missing, a time
        off the model's grid, two rows for a station and time, static attributes that differ, a
        value outside its plausible range in the steps the forecast reads, a weather forecast covering only
        some of the model's leads at the issue time), or the issue time lies outside the table, or a station's
        rows give different ``area_km2``.
    ConfigError
        If ``issue_time`` is not a form ``hydroseq forecast --issue-time`` reads.
    """
    metadata = model.metadata
    data = station_data_from_frame(frame, metadata)
    end = _issue_index(data.times, metadata.grid, issue_time)
    check_plausible(data, end, metadata, bounds)
    check_lead_coverage(data, end, metadata)
    core = forecast_core(model, data, np.array([end]))
    levels = tuple(metadata.quantiles)
    exceeding, station_thresholds = None, None
    if thresholds is not None and levels:  # [issue, station, lead, threshold], as the CSV's p_exceed_<level>
        station_thresholds = thresholds.for_stations(data.station_ids)
        exceeding = exceedance(core.values, levels, station_thresholds)
    areas = stations.areas(data.station_ids, given_areas(frame, INPUT_NAME)) if stations is not None else None
    result = ForecastResult(
        issue_times=data.times[[end]], stations=data.station_ids, leads=np.asarray(metadata.leads, dtype=np.int64),
        step=metadata.grid.step, values=core.values[..., levels.index(0.5)] if levels else core.values,
        variable=metadata.target, units=stations.units if stations is not None else "",
        quantiles=core.values if levels else None, quantile_levels=levels or None, members=core.members,
        observation_age_hours=core.observation_age_hours, thresholds=station_thresholds, exceedance=exceeding,
        station_names=tuple(stations.names_of(data.station_ids)) if stations is not None else None,  # type: ignore[arg-type]
        area_km2=np.asarray([areas[station] for station in data.station_ids]) if areas is not None else None)
    table = forecast_table(result, every_station=True, in_m3s=stations is not None, ungauged=False)
    return table[output_columns(metadata, thresholds if exceeding is not None else None, stations)]


def frame_from_station_data(data: StationData, metadata: ExportMetadata, stations: np.ndarray | None = None,
                            steps: np.ndarray | None = None) -> pd.DataFrame:
    """The model input of ``data`` (e.g. what :class:`hydroseq.forecast.IngestedFile` reads) for the station
    rows ``stations`` and grid steps ``steps`` (default: all), values as float64: what
    :func:`station_data_from_frame` reads back."""
    stations = np.arange(data.n_stations) if stations is None else stations
    steps = np.arange(data.n_times) if steps is None else steps
    station, step = (index.ravel() for index in np.meshgrid(stations, steps, indexing="ij"))
    columns: dict[str, np.ndarray] = {STATION: np.asarray(data.station_ids, dtype=object)[station],
                                      TIME: data.times[step], data.target_name: data.target[station, step]}
    columns.update(zip(data.dynamic_names, data.dynamic[station, step].T, strict=True))
    columns.update(zip(forecast_columns(metadata), data.forecast[station, step].reshape(len(station), -1).T,
                       strict=True))
    columns.update(zip(data.static_names, data.static[station].T, strict=True))
    wanted = input_columns(metadata)
    return pd.DataFrame(columns)[wanted].astype({name: np.float64 for name in wanted[2:]})


def _issue_index(times: np.ndarray, grid: GridSpec, issue_time: str | None) -> int:
    """Grid position of the issue time: the newest step, or the label at or before ``issue_time``."""
    if issue_time is None:
        return len(times) - 1
    option = f"param {ISSUE_TIME_PARAM}"
    if ".." in issue_time:
        raise ConfigError(f"{option}: {issue_time!r} is a range; the served model forecasts from one issue time "
                          "(a hindcast is hydroseq forecast's)")
    issue = parse_instant(issue_time, grid, option)
    first, last = pd.Timestamp(times[0]), pd.Timestamp(times[-1])
    step = locate_issue(times, grid, issue)
    if step.before_the_data or step.past_the_data:
        raise InputDataError(INPUT_NAME, f"issue time {issue_time!r} ({issue.tz_localize(None).isoformat()}Z) lies "
                                         f"outside its times {first.isoformat()}Z .. {last.isoformat()}Z")
    return step.index
