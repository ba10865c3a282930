"""What every reader returns, and the checks shared by the readers."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np
import pandas as pd

from hydroseq.config.ingest import SourceConfig
from hydroseq.errors import InputDataError

LoadedT = TypeVar("LoadedT")


def cached_per_file(maxsize: int) -> Callable[[Callable[[Path, SourceConfig], LoadedT]],
                                               Callable[[Path, SourceConfig], LoadedT]]:
    """Cache ``load(path, source)`` by the file's path, size and modification time and the source config.

    A file holding many stations is then parsed once per ingest, not once per station, and an
    edited file (new size or mtime) is read again.
    """
    def decorate(load: Callable[[Path, SourceConfig], LoadedT]) -> Callable[[Path, SourceConfig], LoadedT]:
        @functools.lru_cache(maxsize=maxsize)
        def cached(path: Path, size: int, mtime_ns: int, source_json: str) -> LoadedT:
            return load(path, SourceConfig.model_validate_json(source_json))

        @functools.wraps(load)
        def load_cached(path: Path, source: SourceConfig) -> LoadedT:
            stat = path.stat()
            return cached(path, stat.st_size, stat.st_mtime_ns, source.model_dump_json())

        return load_cached
    return decorate


@dataclass
class RawSeries:
    """One station's observations from one file, before any time or unit conversion.

    ``stamps`` are tz-naive wall-clock times in the source's declared zone; ``values`` maps output
    variable names to float64 arrays in the source units (NaN = missing); ``lines`` gives the file
    line of each stamp for messages (``None`` for NetCDF, where the stamp itself is quoted).
    """

    path: Path
    stamps: pd.DatetimeIndex
    values: dict[str, np.ndarray]
    lines: np.ndarray | None = None

    def where(self, position: int) -> str:
        """``line N, <stamp>`` or ``<stamp>`` for the observation at ``position``."""
        stamp = str(self.stamps[position])
        return f"line {int(self.lines[position])}, {stamp}" if self.lines is not None else stamp


def to_numbers(path: Path, column: pd.Series, name: str, lines: np.ndarray,
               missing: list[float | str]) -> np.ndarray:
    """A text or numeric column as float64, with missing codes as NaN.

    Raises :class:`InputDataError` naming the line of the first value that is not a number.
    """
    if column.dtype.kind in "fiu":
        numbers = column.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        text = column.astype("string").str.strip()
        numbers = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        codes = {str(code) for code in missing}
        bad = np.isnan(numbers) & text.notna().to_numpy() & (text.to_numpy(na_value="") != "") \
            & ~text.isin(codes).to_numpy(na_value=False)
        if bad.any():
            first = int(np.argmax(bad))
            raise InputDataError(path, f"column {name}: {text.iloc[first]!r} is not a number",
                                 f"line {int(lines[first])}")
    numeric_codes = [float(code) for code in missing if _is_number(code)]
    if numeric_codes:
        numbers = np.where(np.isin(numbers, numeric_codes), np.nan, numbers)
    return numbers


def parse_stamps(path: Path, text: pd.Series, time_format: str | None, lines: np.ndarray) -> pd.DatetimeIndex:
    """Timestamps from text; raises :class:`InputDataError` naming the first unparsable line."""
    try:
        stamps = pd.to_datetime(text, format=time_format)
    except (ValueError, TypeError, OverflowError):
        stamps = pd.to_datetime(text, format=time_format, errors="coerce")
        bad = stamps.isna().to_numpy()
        first = int(np.argmax(bad)) if bad.any() else 0
        raise InputDataError(path, f"timestamp {text.iloc[first]!r} cannot be parsed"
                             + (f" with format {time_format!r}" if time_format else ""),
                             f"line {int(lines[first])}") from None
    missing = stamps.isna().to_numpy()
    if missing.any():
        first = int(np.argmax(missing))
        raise InputDataError(path, "empty timestamp", f"line {int(lines[first])}")
    index = pd.DatetimeIndex(stamps)
    if index.tz is not None:
        index = index.tz_convert("UTC").tz_localize(None)
    return index.as_unit("ns")


def check_columns(path: Path, present: list[str], wanted: list[str], source: SourceConfig) -> None:
    """Raise :class:`InputDataError` if a configured column is absent from the file."""
    absent = [name for name in wanted if name not in present]
    if absent:
        raise InputDataError(path, f"column(s) {', '.join(absent)} named in source {source.label!r} "
                             f"are not in the file; it has {', '.join(map(str, present))}")


def _is_number(code: float | str) -> bool:
    try:
        float(code)
    except (TypeError, ValueError):
        return False
    return True
