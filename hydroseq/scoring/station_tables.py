"""The CSV tables a user gives per station (thresholds, rating curves): rows with their line numbers, checked
numbers, and one-line errors that name the file and the line."""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator, Sequence
from pathlib import Path

from hydroseq.errors import InputDataError
from hydroseq.scoring.table_units import split_header


def table_rows(path: Path, required: Sequence[str], one_of: Sequence[str] = (),
               units: dict[str, str] | None = None) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line, row)`` of each data row of the CSV at ``path``, cells stripped (empty for a short row).

    A column's units in its header (``discharge [m3/s]``, :func:`hydroseq.scoring.table_units.split_header`) are
    split off its name: the row is keyed ``discharge``, and ``units``, when given, gets ``{"discharge": "m3/s"}``
    for every column (``""`` where the header names none) before the first row.

    Raises
    ------
    InputDataError
        If the file cannot be read, is empty, is not CSV text, lacks a ``required`` column or every
        column of ``one_of`` (when given), or names a column twice.
    """
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            split = [split_header(name) for name in reader.fieldnames or []]
            header = [name for name, _ in split]
            if not header:
                raise InputDataError(path, f"is empty, expected the header {','.join([*required, *one_of[:1]])}")
            repeated = sorted({name for name in header if header.count(name) > 1})
            if repeated:
                raise InputDataError(path, f"names the column {', '.join(repeated)} more than once", "line 1")
            missing = [column for column in required if column not in header]
            if one_of and not set(one_of) & set(header):
                missing.append(" or ".join(one_of))
            if missing:
                raise InputDataError(path, f"missing column {', '.join(missing)} (has {', '.join(header)})", "line 1")
            if units is not None:
                units.update(split)
            reader.fieldnames = header
            for row in reader:
                yield reader.line_num, {name: str(row.get(name) or "").strip() for name in header}
    except OSError as error:
        raise InputDataError(path, f"cannot be read ({error.strerror or type(error).__name__})") from None
    except (UnicodeDecodeError, csv.Error) as error:
        raise InputDataError(path, f"is not a readable CSV text file ({error})") from None


def table_number(text: str, what: str, path: Path, line: int, non_negative: bool = True) -> float:
    """The finite number ``text`` of the column ``what``, or an :class:`InputDataError` naming the line."""
    try:
        value = float(text)
    except ValueError:
        raise InputDataError(path, f"{what} {text!r} is not a number", f"line {line}") from None
    if not math.isfinite(value):
        raise InputDataError(path, f"{what} {text!r} is not a finite number", f"line {line}")
    if non_negative and value < 0.0:
        raise InputDataError(path, f"{what} {text} is negative", f"line {line}")
    return value


def known_station(station: str, wanted: Sequence[str] | dict[str, int], path: Path, line: int) -> str:
    """``station`` if it is one of the data's stations, else an :class:`InputDataError` naming the line."""
    if not station:
        raise InputDataError(path, "station must not be empty", f"line {line}")
    if station not in wanted:
        raise InputDataError(path, f"station {station!r} is not one of the {len(wanted)} stations of the data",
                             f"line {line}")
    return station
