"""The forecast as an MLflow pyfunc model: a long table of raw inputs in, discharge per station and lead out.

``mlflow.pyfunc.load_model("models:/<name>/<version>").predict(frame)`` runs the exported network
of a training run (its artifact ``exported_model/``: ``model.onnx`` and ``metadata.json``, with the
scalers and the feature layout) exactly as ``hydroseq forecast`` does at one issue time.

Input: one row per station and grid step (UTC interval end, as in the ingested file), columns
``station``, ``time``, each dynamic input, the observed target if the model reads it (NaN where
not observed), each weather-forecast input's value for lead ``k`` issued at that step as
``<variable>_forecast_lead<k>`` if the model reads them, and the static attributes (the same on
every row of a station); the values in the ingested file's units. :func:`input_columns` lists them
for a model. Steps without a row count as missing. The issue time is the newest ``time`` in the
table, or the param ``issue_time`` (ISO 8601, UTC unless it has an offset; the grid step at or
before it).

Output: one row per station (in input order) and lead: ``station``, ``issue_time``, ``lead`` (grid
steps), ``valid_time``, ``value`` (the forecast, its median for a quantile model, negative values
published as 0), for a quantile model ``value_q05`` ... (as in the forecast CSV), for an ensemble
each member's point forecast ``value_member0`` ... (the member spread), and for a model that reads
the observed target ``observation_age_hours`` (how late the gauge was at the issue time, as in the
forecast CSV). A station with fewer than ``min(min_len, seq_len)`` valid steps up to the issue time
gets NaN.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from mlflow.pyfunc.model import PythonModel, PythonModelContext

from hydroseq.dataset import Scalers, StationData, build_features
from hydroseq.errors import InputDataError
from hydroseq.export import ExportedModel, ExportMetadata
from hydroseq.forecast.features import gather_windows, history_lengths, observation_age_hours
from hydroseq.forecast.result import OBSERVATION_AGE_COLUMN, member_column, quantile_label
from hydroseq.forecast.run import member_forecasts, to_target_units

EXPORTED_MODEL_ARTIFACT = "exported_model"  # the pyfunc's artifact key: the exported model directory
STATION, TIME = "station", "time"
ISSUE_TIME_PARAM = "issue_time"  # "" (the default): the newest time in the input
INPUT_NAME = "model input"  # stands for the file name in error messages


def input_columns(metadata: ExportMetadata) -> list[str]:
    """The input table's columns for a model, in order (see the module docstring)."""
    target = [metadata.target] if metadata.lagged_target else []
    return [STATION, TIME, *metadata.dynamic_inputs, *target, *_forecast_columns(metadata), *metadata.static_inputs]


def output_columns(metadata: ExportMetadata) -> list[str]:
    """The output table's columns for a model."""
    members = [member_column(member) for member in range(metadata.members)] if metadata.members > 1 else []
    age = [OBSERVATION_AGE_COLUMN] if metadata.feature_layout().observed_flag else []
    return [STATION, "issue_time", "lead", "valid_time", "value",
            *(f"value_{quantile_label(level)}" for level in metadata.quantiles), *members, *age]


def _forecast_columns(metadata: ExportMetadata) -> list[str]:
    """``<variable>_forecast_lead<k>``, input by input and lead by lead (the model's feature names)."""
    layout = metadata.feature_layout()
    return layout.forecast_names[:len(layout.forecast_inputs) * layout.forecast_horizon]  # the values, not flags


class ForecastModel(PythonModel):
    """The pyfunc model; its one artifact is the exported model directory (:data:`EXPORTED_MODEL_ARTIFACT`)."""

    def load_context(self, context: PythonModelContext) -> None:
        """Load the exported network (checksums verified) from the model's artifacts."""
        self.exported = ExportedModel(context.artifacts[EXPORTED_MODEL_ARTIFACT])

    def predict(self, context: PythonModelContext | None, model_input: pd.DataFrame,
                params: dict[str, Any] | None = None) -> pd.DataFrame:
        """The forecast of every station of ``model_input`` at the issue time (see the module docstring)."""
        return forecast_frame(self.exported, model_input, (params or {}).get(ISSUE_TIME_PARAM) or None)


def forecast_frame(model: ExportedModel, frame: pd.DataFrame, issue_time: str | None = None) -> pd.DataFrame:
    """The forecast of every station of the long table ``frame`` at ``issue_time`` (default: its newest time).

    Raises
    ------
    InputDataError
        If a column is missing, a time is off the model's grid step, a station has two rows for one
        time or differing static attributes, or the issue time lies outside the table.
    """
    metadata = model.metadata
    scalers = Scalers.from_dict(metadata.scalers)
    data = station_data_from_frame(frame, metadata)
    end = _issue_index(data.times, metadata.grid.step, issue_time)
    layout = metadata.feature_layout()
    features, valid = build_features(data, scalers, layout)
    lengths = history_lengths(valid, np.array([end]), metadata.seq_len)[:, 0]
    rows = np.flatnonzero(lengths >= min(metadata.min_len, metadata.seq_len))
    x = gather_windows(features, rows, np.full(len(rows), end), lengths[rows], metadata.seq_len)
    scaled, scaled_members = model.run(x, lengths[rows])
    n_leads, levels = len(metadata.leads), metadata.quantiles
    ids = [data.station_ids[row] for row in rows]
    values = np.full((data.n_stations, n_leads, *((len(levels),) if levels else ())), np.nan, np.float32)
    values[rows] = to_target_units(scalers, scaled, ids)
    members = None
    if scaled_members is not None and metadata.members > 1:
        members = np.full((data.n_stations, n_leads, metadata.members), np.nan, np.float32)
        members[rows] = member_forecasts(scalers, scaled_members, levels, ids)
    age_hours = None
    if layout.observed_flag:
        age_hours = observation_age_hours(data.target, np.array([end]), metadata.grid.step)[:, 0]
    return _output_table(data, end, metadata, values, members, age_hours)


def station_data_from_frame(frame: pd.DataFrame, metadata: ExportMetadata) -> StationData:
    """The long table on the grid from its first to its newest time, as the forecast reads a file.

    Raises
    ------
    InputDataError
        See :func:`forecast_frame`.
    """
    missing = [name for name in input_columns(metadata) if name not in frame.columns]
    if missing:
        raise InputDataError(INPUT_NAME, f"lacks the columns {missing}")
    if frame.empty:
        raise InputDataError(INPUT_NAME, "no rows")
    step = metadata.grid.step
    times = pd.DatetimeIndex(pd.to_datetime(frame[TIME], utc=True)).tz_localize(None).as_unit("ns")
    offsets = np.asarray((times - times.min()) / step)
    if not np.array_equal(offsets, np.round(offsets)):
        raise InputDataError(INPUT_NAME, f"the times are not on the model's grid step {metadata.grid.frequency}")
    steps = np.round(offsets).astype(np.int64)
    codes, stations = pd.factorize(frame[STATION].astype(str))  # stations in the order they first appear
    n_stations, n_times = len(stations), int(steps.max()) + 1
    if pd.Index(codes * n_times + steps).has_duplicates:
        raise InputDataError(INPUT_NAME, "more than one row for a station and time")

    def on_grid(columns: list[str]) -> np.ndarray:
        values = np.full((n_stations, n_times, len(columns)), np.nan, np.float32)
        values[codes, steps] = frame[columns].to_numpy(np.float32)
        return values

    layout = metadata.feature_layout()
    has_target = metadata.target in frame.columns
    return StationData(
        path=Path(INPUT_NAME), station_ids=tuple(stations),
        times=pd.date_range(times.min(), periods=n_times, freq=step).to_numpy("datetime64[ns]"),
        dynamic=on_grid(metadata.dynamic_inputs),
        target=on_grid([metadata.target])[..., 0] if has_target else np.full((n_stations, n_times), np.nan, np.float32),
        static=_static_table(frame[metadata.static_inputs].to_numpy(np.float32), codes, n_stations),
        dynamic_names=tuple(metadata.dynamic_inputs), static_names=tuple(metadata.static_inputs),
        target_name=metadata.target, checksum="", grid=metadata.grid,
        forecast=on_grid(_forecast_columns(metadata)).reshape(
            n_stations, n_times, len(layout.forecast_inputs), layout.forecast_horizon),
        forecast_names=tuple(item.variable for item in layout.forecast_inputs),
    )


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
    columns.update(zip(_forecast_columns(metadata), data.forecast[station, step].reshape(len(station), -1).T,
                       strict=True))
    columns.update(zip(data.static_names, data.static[station].T, strict=True))
    wanted = input_columns(metadata)
    return pd.DataFrame(columns)[wanted].astype({name: np.float64 for name in wanted[2:]})


def _static_table(values: np.ndarray, codes: np.ndarray, n_stations: int) -> np.ndarray:
    """``[station, attribute]`` from the rows' ``values``, which must be the same on all rows of a station."""
    first = values[np.unique(codes, return_index=True)[1]]
    if not np.array_equal(values, first[codes], equal_nan=True):
        raise InputDataError(INPUT_NAME, "static attributes differ between rows of one station")
    return first.reshape(n_stations, values.shape[1])


def _issue_index(times: np.ndarray, step: pd.Timedelta, issue_time: str | None) -> int:
    """Grid position of the issue time: the newest step, or the step at or before ``issue_time``."""
    if issue_time is None:
        return len(times) - 1
    issue = pd.Timestamp(issue_time)
    issue = issue.tz_convert("UTC").tz_localize(None) if issue.tzinfo is not None else issue
    first, last = pd.Timestamp(times[0]), pd.Timestamp(times[-1])
    if issue < first or issue >= last + step:
        raise InputDataError(INPUT_NAME, f"issue time {issue.isoformat()}Z lies outside its times "
                                         f"{first.isoformat()}Z .. {last.isoformat()}Z")
    return int((issue - first) // step)


def _output_table(data: StationData, end: int, metadata: ExportMetadata, values: np.ndarray,
                  members: np.ndarray | None, age_hours: np.ndarray | None) -> pd.DataFrame:
    """One row per station and lead, in the columns of :func:`output_columns`."""
    levels = metadata.quantiles
    leads = np.asarray(metadata.leads, dtype=np.int64)
    issue = data.times[end]
    n_stations = data.n_stations
    table = {
        STATION: np.repeat(np.asarray(data.station_ids, dtype=object), len(leads)),
        "issue_time": np.full(n_stations * len(leads), issue),
        "lead": np.tile(leads, n_stations),
        "valid_time": np.tile(issue + leads * metadata.grid.step.to_timedelta64(), n_stations),
        "value": (values[..., levels.index(0.5)] if levels else values).reshape(-1),
    }
    for position, level in enumerate(levels):
        table[f"value_{quantile_label(level)}"] = values[..., position].reshape(-1)
    if members is not None:
        for member in range(members.shape[-1]):
            table[member_column(member)] = members[..., member].reshape(-1)
    if age_hours is not None:
        table[OBSERVATION_AGE_COLUMN] = np.repeat(age_hours, len(leads))
    return pd.DataFrame(table, columns=output_columns(metadata))
