"""Delimited text tables: generic CSV (wide, one station per file, or long with a station column)
and Caravan CSV (one file per basin, ``date`` column, ``NA`` or empty for missing).

A generic CSV may lack a time column (``time_start``: row i is ``time_start + i x frequency``; a
blank line is then a missing value, never skipped, so that later rows keep their times) and a
header (``header: false``: columns are named ``1``, ``2``, ... by position)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from hydroseq.config.ingest import SourceConfig
from hydroseq.errors import InputDataError
from hydroseq.ingest.readers.base import (
    RawSeries,
    cached_per_file,
    check_columns,
    check_dated_days,
    parse_stamps,
    to_numbers,
)

CARAVAN_MISSING = ("NA", "")


def station_ids(source: SourceConfig, path: Path) -> list[str]:
    """The station ids a file holds."""
    if source.station is not None:
        return [source.station]
    if source.station_column is None or source.format == "caravan_csv" or source.station_from_filename:
        return [_strip(path.stem, source)]
    frame = _read(path, source)
    return sorted(_column_ids(frame, source).dropna().unique().tolist())


def read(source: SourceConfig, path: Path, station_id: str) -> RawSeries:
    """One station's rows of ``path``; raises :class:`InputDataError` for unusable content."""
    frame = _read(path, source)
    if source.station_column is not None and source.format != "caravan_csv":
        frame = frame[(_column_ids(frame, source) == station_id).to_numpy()]
    lines = frame.index.to_numpy() + (2 if source.header else 1)
    missing = _missing_codes(source)
    if source.time_start is not None:  # wall-clock stamps in the source's zone, like offset-less text
        stamps, utc_offsets = _row_stamps(source, frame.index.to_numpy()), None
    else:
        stamps, utc_offsets = parse_stamps(path, frame[source.time_column], source.time_format, lines)
        if utc_offsets is None and len(frame):
            check_dated_days(path, source, stamps, str(frame[source.time_column].iloc[0]))
    values = {name: to_numbers(path, frame[spec.source], spec.source, lines, missing)
              for name, spec in source.variables.items()}
    return RawSeries(path, stamps, values, lines, utc_offsets)


def _row_stamps(source: SourceConfig, rows: np.ndarray) -> pd.DatetimeIndex:
    """``time_start + row x frequency`` for files whose rows are consecutive source steps."""
    return pd.DatetimeIndex(pd.Timestamp(source.time_start) + rows * source.step).as_unit("ns")


def _strip(stem: str, source: SourceConfig) -> str:
    prefix = source.station_id_prefix
    stripped = stem[len(prefix):] if prefix and stem.startswith(prefix) else stem
    return source.station_map.get(stripped, stripped)


def _column_ids(frame: pd.DataFrame, source: SourceConfig) -> pd.Series:
    ids = frame[source.station_column].astype("string").str.strip()
    return ids.replace(source.station_map) if source.station_map else ids


def _missing_codes(source: SourceConfig) -> list[float | str]:
    codes = list(source.missing_values)
    if source.format == "caravan_csv":
        codes += [code for code in CARAVAN_MISSING if code not in codes]
    return codes


@cached_per_file(maxsize=4)
def _read(path: Path, source: SourceConfig) -> pd.DataFrame:
    data = path.read_bytes()
    if not data.strip():
        raise InputDataError(path, "the file is empty")
    _check_field_counts(path, data)
    wanted = [*(spec.source for spec in source.variables.values())]
    if source.time_start is None:
        wanted.insert(0, source.time_column)
    if source.station_column is not None and source.format != "caravan_csv":
        wanted.append(source.station_column)
    try:
        header = pd.read_csv(io.BytesIO(data), nrows=0, header=0 if source.header else None).columns.tolist()
    except (pd.errors.ParserError, UnicodeDecodeError) as error:
        raise InputDataError(path, f"not a readable CSV table: {error}") from None
    names = None if source.header else [str(position + 1) for position in range(len(header))]
    check_columns(path, names or header, wanted, source)
    codes = [str(code) for code in _missing_codes(source)]
    text_columns = {name: str for name in (source.time_column, source.station_column) if name}
    try:
        return pd.read_csv(io.BytesIO(data), usecols=list(dict.fromkeys(wanted)), dtype=text_columns,
                           na_values=codes, keep_default_na=False, header=0 if source.header else None,
                           names=names, skip_blank_lines=source.time_start is None)
    except (pd.errors.ParserError, UnicodeDecodeError) as error:
        raise InputDataError(path, f"not a readable CSV table: {error}") from None


def _check_field_counts(path: Path, data: bytes) -> None:
    """Every non-empty line must have as many fields as the header (catches truncated lines).

    Vectorised over the raw bytes; quoted fields containing commas (station names) are not
    expected in data files and would be reported here.
    """
    raw = np.frombuffer(data, dtype=np.uint8)
    newline_positions = np.flatnonzero(raw == ord("\n"))
    ends = np.append(newline_positions, len(raw)) if raw[-1] != ord("\n") else newline_positions
    starts = np.concatenate(([0], ends[:-1] + 1))
    line_of_comma = np.searchsorted(ends, np.flatnonzero(raw == ord(",")))
    commas = np.bincount(line_of_comma, minlength=len(ends))[: len(ends)]
    lengths = ends - starts - (raw[np.maximum(ends - 1, 0)] == ord("\r"))
    nonempty = lengths > 0
    wrong = nonempty & (commas != commas[0])
    if wrong.any():
        line = int(np.argmax(wrong))
        text = data[starts[line]:ends[line]].decode(errors="replace").strip()
        raise InputDataError(path, f"expected {commas[0] + 1} comma-separated fields like the header, "
                             f"found {commas[line] + 1}: {text[:80]!r}", f"line {line + 1}")
