"""What every reader returns, and the checks shared by the readers."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, TypeVar

import numpy as np
import pandas as pd

from hydroseq.config.ingest import SourceConfig
from hydroseq.errors import ConfigError, InputDataError
from hydroseq.grid.date_text import day_month_order_problem

LoadedT = TypeVar("LoadedT")
LOGGER = logging.getLogger(__name__)


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

    ``stamps`` are tz-naive: wall-clock times in the source's declared zone when ``utc_offsets`` is
    ``None``, otherwise UTC instants, the file having given each stamp's UTC offset (``utc_offsets``,
    int64 ns, wall clock minus UTC). ``values`` maps output variable names to float64 arrays in the
    source units (NaN = missing); ``lines`` gives the file line of each stamp for messages (``None``
    for NetCDF, where the stamp itself is quoted).
    """

    path: Path
    stamps: pd.DatetimeIndex
    values: dict[str, np.ndarray]
    lines: np.ndarray | None = None
    utc_offsets: np.ndarray | None = None

    def where(self, position: int) -> str:
        """``line N, <stamp>`` or ``<stamp>`` for the observation at ``position`` (as written, with
        its UTC offset if it had one)."""
        stamp = str(self.stamps[position])
        if self.utc_offsets is not None:
            offset = int(self.utc_offsets[position])
            stamp = f"{self.stamps[position] + pd.Timedelta(offset)}{format_offset(offset)}"
        return f"line {int(self.lines[position])}, {stamp}" if self.lines is not None else stamp

    def take(self, order: np.ndarray) -> RawSeries:
        """The observations at the positions ``order``, in that order."""
        return RawSeries(self.path, self.stamps[order], {k: v[order] for k, v in self.values.items()},
                         None if self.lines is None else self.lines[order],
                         None if self.utc_offsets is None else self.utc_offsets[order])


def format_offset(offset_ns: int) -> str:
    """``+05:30`` / ``-05:00`` for an offset in ns."""
    minutes = int(offset_ns // 60_000_000_000)
    sign = "+" if minutes >= 0 else "-"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


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


def parse_stamps(path: Path, text: pd.Series, time_format: str | None,
                 lines: np.ndarray) -> tuple[pd.DatetimeIndex, np.ndarray | None]:
    """Timestamps from text, and their UTC offsets if they carry any.

    Returns tz-naive wall-clock stamps and ``None`` when no stamp has an offset; otherwise the UTC
    instants and each stamp's offset in ns (offsets may differ from row to row, e.g. -05:00 and
    -04:00 across a DST change). Raises :class:`InputDataError` naming the first unparsable line,
    or the first line whose stamp has an offset when an earlier one has none (or the reverse), and
    the first stamp when, without ``time_format``, it gives the day and the month before the year
    (pandas would guess their order from it: ``03/04/2014``).
    """
    if time_format is None:
        _reject_unstated_day_month_order(path, text, lines)
    try:
        stamps = pd.to_datetime(text, format=time_format)
    except (ValueError, TypeError, OverflowError) as error:
        if "Mixed timezones" in str(error):
            return _mixed_offsets(path, text, time_format, lines)
        _raise_unparsable(path, text, time_format, lines)
    missing = stamps.isna().to_numpy()
    if missing.any():
        first = int(np.argmax(missing))
        raise InputDataError(path, "empty timestamp", f"line {int(lines[first])}")
    index = pd.DatetimeIndex(stamps)
    if index.tz is None:
        return index.as_unit("ns"), None
    utc = index.tz_convert("UTC").tz_localize(None).as_unit("ns")
    offsets = (index.tz_localize(None).as_unit("ns") - utc).asi8.copy()
    return utc, offsets


def _reject_unstated_day_month_order(path: Path, text: pd.Series, lines: np.ndarray) -> None:
    present = text.notna().to_numpy()
    if not present.any():
        return
    first = int(np.argmax(present))
    problem = day_month_order_problem(str(text.iloc[first]))
    if problem is not None:
        raise InputDataError(path, f"timestamp {str(text.iloc[first]).strip()!r} {problem}: set the source's "
                             "time_format (e.g. %d/%m/%Y for day first, %m/%d/%Y for month first)",
                             f"line {int(lines[first])}")


_OFFSET_SUFFIX = r"(Z|[+-]\d{2}:?\d{2})$"


def _mixed_offsets(path: Path, text: pd.Series, time_format: str | None,
                   lines: np.ndarray) -> tuple[pd.DatetimeIndex, np.ndarray]:
    """Stamps whose UTC offsets differ between rows: each converted by its own offset."""
    try:
        utc = pd.DatetimeIndex(pd.to_datetime(text, format=time_format, utc=True))
    except (ValueError, TypeError, OverflowError):
        _raise_unparsable(path, text, time_format, lines)
    suffix = text.astype("string").str.strip().str.extract(_OFFSET_SUFFIX, expand=False)
    if suffix.isna().any():
        first = int(np.argmax(suffix.isna().to_numpy()))
        raise InputDataError(path, f"timestamp {text.iloc[first]!r}: cannot read its UTC offset "
                             "(write it at the end, like +05:30 or Z)", f"line {int(lines[first])}")
    per_suffix = {code: _suffix_ns(code) for code in suffix.unique()}
    offsets = suffix.map(per_suffix).to_numpy(dtype=np.int64)
    return utc.tz_localize(None).as_unit("ns"), offsets


def _suffix_ns(code: str) -> int:
    return 0 if code == "Z" else int(pd.Timestamp(f"2000-01-01T00:00{code}").utcoffset().total_seconds()) * 10**9


def _raise_unparsable(path: Path, text: pd.Series, time_format: str | None, lines: np.ndarray) -> NoReturn:
    stripped = text.astype("string").str.strip()
    has_offset = stripped.str.contains(_OFFSET_SUFFIX.replace("(", "(?:", 1), regex=True).to_numpy(na_value=False)
    if has_offset.any() and not has_offset.all():
        first = int(np.argmax(has_offset != has_offset[0]))
        problem = "has no UTC offset, but" if has_offset[0] else "has a UTC offset, but"
        raise InputDataError(path, f"timestamp {text.iloc[first]!r} {problem} the first stamp "
                             f"{text.iloc[0]!r} {'has one' if has_offset[0] else 'has none'}: a column "
                             "must give an offset on every row or on none", f"line {int(lines[first])}")
    stamps = pd.to_datetime(text, format=time_format, errors="coerce", utc=bool(has_offset.any()))
    bad = stamps.isna().to_numpy()
    first = int(np.argmax(bad)) if bad.any() else 0
    raise InputDataError(path, f"timestamp {text.iloc[first]!r} cannot be parsed"
                         + (f" with format {time_format!r}" if time_format else ""),
                         f"line {int(lines[first])}") from None


def check_dated_days(path: Path, source: SourceConfig, stamps: pd.DatetimeIndex, written: str) -> None:
    """Dates without a time of day (``written``: the first as the file gives it) read as interval ends.

    A date names the day its value covers (Caravan, CAMELS, USGS daily values); read as the end of an interval,
    each value lands on the grid day before its date. With ``timestamp`` left at its default (``interval_end``)
    that is a :class:`~hydroseq.errors.ConfigError` naming the file; set so explicitly, a warning naming the
    first such file of the source.
    """
    if source.timestamp != "interval_end" or len(stamps) == 0 or ":" in written \
            or not (stamps == stamps.normalize()).all():
        return
    if "timestamp" not in source.model_fields_set:
        raise ConfigError(f"{path}: the stamps are dates without a time of day ({written.strip()!r}) and source "
                          f"{source.label!r} does not say what they mark: set timestamp: interval_start if a date "
                          "names the day its value covers (Caravan, CAMELS, USGS daily values), or timestamp: "
                          "interval_end if it is the midnight the value's interval ends at (each value then lands "
                          "on the grid day before its date)")
    if source.label not in _WARNED:
        _WARNED.add(source.label)
        LOGGER.warning("%s: source %r reads dates without a time of day as interval ends (timestamp: "
                       "interval_end): each value lands on the grid day before its date", path, source.label)


_WARNED: set[str] = set()  # the sources warned about by check_dated_days, once per process


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
