"""CAMELS-US text files: USGS streamflow (``<id>_streamflow_qc.txt``) and basin-mean forcing
(``<id>_lump_*_forcing_leap.txt``).

Streamflow rows are ``gauge_id year month day Q flag``; ``-999`` values and the flags listed in
``bad_flags`` (default ``M``) are missing. Forcing files have three header lines (latitude,
elevation, area) and a column-name line; date fields and values are separated by any mix of spaces
and tabs, and column names differ in case and spelling between products, so variables are matched
by lower-cased name prefix (``prcp`` matches ``PRCP(mm/day)`` and ``prcp(mm/day)``).
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from hydroseq.config.ingest import SourceConfig
from hydroseq.errors import InputDataError
from hydroseq.ingest.readers.base import RawSeries, check_dated_days, to_numbers

STREAMFLOW_COLUMNS = ["gauge_id", "year", "month", "day", "Q", "flag"]
FORCING_HEADER_LINES = 3
MISSING_DISCHARGE = -999.0


def station_ids(source: SourceConfig, path: Path) -> list[str]:
    """The gauge id at the start of the file name (``01022500_...``)."""
    if source.station is not None:
        return [source.station]
    return [path.name.split("_")[0]]


def read(source: SourceConfig, path: Path, station_id: str) -> RawSeries:
    """One CAMELS-US text file as a :class:`RawSeries`; raises :class:`InputDataError` when malformed."""
    text = _text(path)
    if source.format == "camels_us_streamflow":
        series = _read_streamflow(source, path, text, station_id)
    else:
        series = _read_forcing(source, path, text)
    if len(series.stamps):  # year, month and day columns: dates without a time of day
        check_dated_days(path, source, series.stamps, f"{series.stamps[0]:%Y %m %d}")
    return series


def _text(path: Path) -> str:
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        raise InputDataError(path, "not a text file") from None
    if not text.strip():
        raise InputDataError(path, "the file is empty")
    return text


def _split(path: Path, text: str, names: list[str] | None, first_line: int) -> pd.DataFrame:
    """Whitespace-split columns as text; a short line (missing fields) is an error."""
    try:
        frame = pd.read_csv(io.StringIO(text), sep=r"\s+", header=None if names else 0, names=names,
                            dtype=str, keep_default_na=False, na_values=[])
    except pd.errors.ParserError as error:
        raise InputDataError(path, f"cannot split into columns: {error}") from None
    except pd.errors.EmptyDataError:
        raise InputDataError(path, "no data rows") from None
    short = frame.isna().any(axis=1).to_numpy()
    if short.any():
        first = int(np.argmax(short))
        present = int(frame.iloc[first].notna().sum())
        raise InputDataError(path, f"expected {frame.shape[1]} whitespace-separated fields, found {present}",
                             f"line {first + first_line + (0 if names else 1)}")
    return frame


def _dates(path: Path, year: pd.Series, month: pd.Series, day: pd.Series, lines: np.ndarray) -> pd.DatetimeIndex:
    parts = {}
    for name, column in (("year", year), ("month", month), ("day", day)):
        numbers = pd.to_numeric(column, errors="coerce")
        bad = numbers.isna().to_numpy()
        if bad.any():
            first = int(np.argmax(bad))
            raise InputDataError(path, f"{name} {column.iloc[first]!r} is not a number", f"line {int(lines[first])}")
        parts[name] = numbers.astype(int)
    stamps = pd.to_datetime(pd.DataFrame(parts), errors="coerce")
    bad = stamps.isna().to_numpy()
    if bad.any():
        first = int(np.argmax(bad))
        date = "-".join(str(parts[k].iloc[first]) for k in ("year", "month", "day"))
        raise InputDataError(path, f"{date} is not a calendar date", f"line {int(lines[first])}")
    return pd.DatetimeIndex(stamps).as_unit("ns")


def _read_streamflow(source: SourceConfig, path: Path, text: str, station_id: str) -> RawSeries:
    frame = _split(path, text, STREAMFLOW_COLUMNS, first_line=1)
    lines = frame.index.to_numpy() + 1
    other = frame["gauge_id"] != station_id
    if other.any():
        first = int(np.argmax(other.to_numpy()))
        raise InputDataError(path, f"gauge id {frame['gauge_id'].iloc[first]!r} differs from the file's "
                             f"station {station_id!r}", f"line {int(lines[first])}")
    stamps = _dates(path, frame["year"], frame["month"], frame["day"], lines)
    flagged = frame["flag"].isin(source.bad_flags).to_numpy()
    missing = [*source.missing_values, MISSING_DISCHARGE]
    values = {}
    for name, spec in source.variables.items():
        if spec.source not in frame.columns:
            raise InputDataError(path, f"variable {name}: CAMELS streamflow files have columns "
                                 f"{', '.join(STREAMFLOW_COLUMNS)}, not {spec.source!r}")
        numbers = to_numbers(path, frame[spec.source], spec.source, lines, missing)
        values[name] = np.where(flagged, np.nan, numbers)
    return RawSeries(path, stamps, values, lines)


def _read_forcing(source: SourceConfig, path: Path, text: str) -> RawSeries:
    header_and_data = text.split("\n", FORCING_HEADER_LINES)
    if len(header_and_data) <= FORCING_HEADER_LINES:
        raise InputDataError(path, f"expected {FORCING_HEADER_LINES} header lines, a column-name line and data")
    frame = _split(path, header_and_data[-1], None, first_line=FORCING_HEADER_LINES + 1)
    lines = frame.index.to_numpy() + FORCING_HEADER_LINES + 2
    lower = {column.lower(): column for column in frame.columns}
    month_column = lower.get("mnth", lower.get("month"))
    if "year" not in lower or month_column is None or "day" not in lower:
        raise InputDataError(path, f"no Year/Mnth/Day columns in {', '.join(frame.columns)}",
                             f"line {FORCING_HEADER_LINES + 1}")
    stamps = _dates(path, frame[lower["year"]], frame[month_column], frame[lower["day"]], lines)
    values = {name: to_numbers(path, frame[_match(path, frame.columns, spec.source)], spec.source,
                               lines, source.missing_values)
              for name, spec in source.variables.items()}
    return RawSeries(path, stamps, values, lines)


def _match(path: Path, columns: pd.Index, prefix: str) -> str:
    matches = [c for c in columns if c.lower().startswith(prefix.lower()) and c.lower() != "day"]
    if len(matches) != 1:
        found = "no column" if not matches else f"several columns ({', '.join(matches)})"
        raise InputDataError(path, f"{found} starts with {prefix!r}; columns are {', '.join(columns)}",
                             f"line {FORCING_HEADER_LINES + 1}")
    return matches[0]
