"""The rows the served model receives, checked as ingest and ``hydroseq forecast`` check theirs.

``hydroseq forecast`` reads an ingested file: its grid is the file's, and ingest refused values
outside each variable's plausibility bounds. The served (MLflow pyfunc) model gets a table from
anywhere (:mod:`hydroseq.serving.pyfunc_model`), so it checks, each failure an
:class:`~hydroseq.errors.InputDataError` that names what is wrong:

* every column of :func:`input_columns` is there (the missing ones are named);
* ``time`` is a grid label, the UTC end of the interval: a datetime (without a zone: UTC; with
  one: converted) or ISO 8601 text (``2014-07-01T08:00Z``, ``2014-07-01T10:00+02:00``, as the
  forecast CSV writes it; without an offset: UTC); other text (``07/01/2014``, ``now``) is never
  guessed, and a time off the model's grid (its step and day boundary) is refused;
* no station has two rows for one time, and its static attributes are the same on every row;
* every value the forecast reads (the last ``seq_len`` steps up to the issue step, and the static
  attributes) is within the plausibility bounds the model was logged with
  (:mod:`hydroseq.serving.input_bounds`; without them: within ±1e30); ``inf`` never is. NaN (or a
  step without a row) is missing, as a gap in an ingested file: a station without enough valid
  steps gets NaN rows, as ``hydroseq forecast`` skips it;
* at the issue step, each weather-forecast input of a station has a value at every lead the model
  reads or at none (none: no forecast, read as the model was trained to): a run covering only some
  leads (``..._forecast_lead1`` to ``lead3`` given, ``lead4`` to ``lead7`` NaN) is refused, as
  ``hydroseq forecast`` refuses it (:func:`hydroseq.forecast.product_use.check_lead_coverage`), rather than
  read as a shorter forecast. The table says nothing of the run it comes from, so a late run whose
  leads end early is refused too.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from hydroseq.dataset import StationData
from hydroseq.dataset.forecast_inputs import lead_span, partial_leads
from hydroseq.dataset.plausible_values import Bounds as Bounds  # pyfunc_model takes it from here
from hydroseq.dataset.plausible_values import check_plausible as check_values
from hydroseq.dataset.window import history_slice
from hydroseq.errors import InputDataError
from hydroseq.export import ExportMetadata
from hydroseq.grid import GridSpec
from hydroseq.grid.issue_times import ISO_8601

STATION, TIME = "station", "time"
INPUT_NAME = "model input"  # stands for the file name in error messages


def input_columns(metadata: ExportMetadata) -> list[str]:
    """The input table's columns for a model, in order (see :mod:`hydroseq.serving.pyfunc_model`)."""
    target = [metadata.target] if metadata.lagged_target else []
    return [STATION, TIME, *metadata.dynamic_inputs, *target, *forecast_columns(metadata), *metadata.static_inputs]


def forecast_columns(metadata: ExportMetadata) -> list[str]:
    """``<variable>_forecast_lead<k>``, input by input and lead by lead (the model's feature names)."""
    layout = metadata.feature_layout()
    return layout.forecast_names[:len(layout.forecast_inputs) * layout.forecast_horizon]  # the values, not flags


def station_data_from_frame(frame: pd.DataFrame, metadata: ExportMetadata) -> StationData:
    """The long table on the grid from its first to its newest time, as the forecast reads a file.

    Raises
    ------
    InputDataError
        If a column is missing, a time is not a label of the model's grid, a station has two rows
        for one time or differing static attributes, or a value is not a number.
    """
    missing = [name for name in input_columns(metadata) if name not in frame.columns]
    if missing:
        raise InputDataError(INPUT_NAME, f"lacks the columns {missing} (expected: {input_columns(metadata)})")
    if frame.empty:
        raise InputDataError(INPUT_NAME, "no rows")
    step = metadata.grid.step
    times = utc_labels(frame[TIME], metadata.grid)
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
        values[codes, steps] = _numbers(frame, columns)
        return values

    layout = metadata.feature_layout()
    has_target = metadata.target in frame.columns
    return StationData(
        path=Path(INPUT_NAME), station_ids=tuple(stations),
        times=pd.date_range(times.min(), periods=n_times, freq=step).to_numpy("datetime64[ns]"),
        dynamic=on_grid(metadata.dynamic_inputs),
        target=on_grid([metadata.target])[..., 0] if has_target else np.full((n_stations, n_times), np.nan, np.float32),
        static=_static_table(_numbers(frame, metadata.static_inputs), codes, n_stations),
        dynamic_names=tuple(metadata.dynamic_inputs), static_names=tuple(metadata.static_inputs),
        target_name=metadata.target, checksum="", grid=metadata.grid,
        forecast=on_grid(forecast_columns(metadata)).reshape(
            n_stations, n_times, len(layout.forecast_inputs), layout.forecast_horizon),
        forecast_names=tuple(item.variable for item in layout.forecast_inputs),
    )


def utc_labels(column: pd.Series, grid: GridSpec) -> pd.DatetimeIndex:
    """The ``time`` column as naive UTC labels (see the module docstring for the forms read).

    Raises
    ------
    InputDataError
        If a time is missing, is text in another form, or is not a label of ``grid``.
    """
    if column.isna().any():
        raise InputDataError(INPUT_NAME, f"{TIME} is missing on {int(column.isna().sum())} rows")
    if column.dtype.kind in "biufc":
        raise InputDataError(INPUT_NAME, f"{TIME} holds numbers ({column.iloc[0]!r}), not times: write the grid "
                                         "label as ISO 8601 text (2014-07-01T08:00Z) or a datetime")
    if column.dtype.kind != "M":
        guessed = [value for value in column.unique() if isinstance(value, str) and not ISO_8601.match(value.strip())]
        if guessed:
            raise InputDataError(INPUT_NAME, f"{TIME} {guessed[0]!r} is not an ISO 8601 timestamp (such as "
                                             "2014-07-01T08:00Z or 2014-07-01T10:00+02:00); other forms are never "
                                             "guessed")
        column = column.map(lambda value: value.strip() if isinstance(value, str) else value)
    try:
        stamps = pd.DatetimeIndex(pd.to_datetime(column, utc=True, format="ISO8601"))
    except (TypeError, ValueError) as error:
        raise InputDataError(INPUT_NAME, f"{TIME} holds values that are not times ({error})") from None
    labels = stamps.tz_localize(None).as_unit("ns")
    _check_labels(labels, grid)
    return labels


def _check_labels(labels: pd.DatetimeIndex, grid: GridSpec) -> None:
    """Every label ends a grid step: a whole number of steps before the end of its local day."""
    day = pd.Timedelta(days=1)
    if grid.step > day or day % grid.step:
        return  # steps of several days: only their spacing is checked (station_data_from_frame)
    unique = labels.unique()
    days = grid.local_days(unique)
    ends = {value: grid.day_end(value.date()).tz_localize(None) for value in days.unique()}
    off = np.flatnonzero([(ends[local] - label) % grid.step != pd.Timedelta(0) for local, label in zip(days, unique,
                                                                                                     strict=True)])
    if len(off):
        label, local = unique[off[0]], days[off[0]]
        example = ends[local].isoformat()
        raise InputDataError(INPUT_NAME, f"{TIME} {label.isoformat()}Z is not on the model's grid step "
                                         f"{grid.frequency} (a time is the UTC end of a step; the local day "
                                         f"{local.date()} of the grid's zone {grid.timezone} ends at {example}Z)")


def _numbers(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """``frame[columns]`` as float32 (beyond float32's range: inf, refused by :func:`check_plausible`)."""
    try:
        with np.errstate(over="ignore"):
            return frame[columns].to_numpy(np.float32)
    except (TypeError, ValueError) as error:
        raise InputDataError(INPUT_NAME, f"the columns {columns} must hold numbers ({error})") from None


def _static_table(values: np.ndarray, codes: np.ndarray, n_stations: int) -> np.ndarray:
    """``[station, attribute]`` from the rows' ``values``, which must be the same on all rows of a station."""
    first = values[np.unique(codes, return_index=True)[1]]
    if not np.array_equal(values, first[codes], equal_nan=True):
        raise InputDataError(INPUT_NAME, "static attributes differ between rows of one station")
    return first.reshape(n_stations, values.shape[1])


def check_plausible(data: StationData, end: int, metadata: ExportMetadata, bounds: Bounds | None) -> None:
    """Every value the forecast at grid step ``end`` reads lies within ``bounds`` (a variable they lack: ±1e30),
    as ``hydroseq forecast`` checks a file (:func:`hydroseq.dataset.plausible_values.check_plausible`).

    Raises
    ------
    InputDataError
        For the first value outside its bounds or infinite, naming the station, time, column,
        value and bounds.
    """
    check_values(data, history_slice(end, metadata.seq_len), bounds, INPUT_NAME, metadata.input_units,
                 metadata.lagged_target, columns=forecast_columns(metadata))


def check_lead_coverage(data: StationData, end: int, metadata: ExportMetadata) -> None:
    """At grid step ``end``, every station's weather-forecast inputs hold a value at every lead or at none.

    Raises
    ------
    InputDataError
        For the first station and input with values at some leads only, naming the station, the issue
        time, the columns without a value and how many stations are concerned.
    """
    forecast = np.isfinite(data.forecast[:, end])  # [station, input, lead]
    partial = partial_leads(data.forecast[:, end])
    if not partial.any():
        return
    s, k = (int(index) for index in np.argwhere(partial)[0])
    name = data.forecast_names[k]
    absent = np.flatnonzero(~forecast[s, k]) + 1
    horizon = forecast.shape[-1]
    stations = int(partial.any(axis=1).sum())
    columns = ", ".join(f"{name}_forecast_lead{lead}" for lead in absent[:3]) + (" ..." if len(absent) > 3 else "")
    raise InputDataError(INPUT_NAME, f"the weather forecast {name} has no value at lead(s) {lead_span(absent)} of the "
                                     f"model's 1-{horizon} ({columns} missing) while its other leads have one "
                                     f"({stations} of {data.n_stations} stations): a forecast that does not cover "
                                     "every lead the model reads is refused rather than read as a shorter one; give "
                                     "every lead, or none (no forecast)",
                         f"station {data.station_ids[s]}, {pd.Timestamp(data.times[end]).isoformat()}Z")

