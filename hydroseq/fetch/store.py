"""What the fetchers leave in the raw folder: complete files only, each with a sidecar saying what it holds.

A file is written to a temporary beside it and renamed into place when complete
(:func:`hydroseq.fileio.atomic_path`); then its sidecar ``<stem>.fetch.json`` records what was asked
(source, run or day, fields, steps, stations), its size and SHA-256. A later fetch that asks for the
same finds the file complete (:func:`is_complete`: same request, same size) and downloads nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from hydroseq.fileio import sha256_file, write_text_atomic

SIDECAR_SUFFIX = ".fetch.json"
SIDECAR_FORMAT = "hydroseq-fetch/1"


@dataclass(frozen=True)
class FetchResult:
    """What a fetch did.

    Attributes
    ----------
    source
        ``--source``: a forecast product's name, or ``nwis``.
    issue_time
        The issue time the files are for (UTC).
    written
        Files downloaded (or completed) by this fetch.
    skipped
        Files already complete in the raw folder, not downloaded again.
    runs
        Reference times (UTC) of the forecast runs written or skipped; empty for ``nwis``.
    downloads
        Files (run pieces, or NWIS responses) downloaded; pieces left by an interrupted fetch are reused.
    downloaded_bytes
        Bytes downloaded.
    notes
        Things to know: a run not published that the previous one replaced, stations without readings.
    """

    source: str
    issue_time: pd.Timestamp
    written: tuple[Path, ...] = ()
    skipped: tuple[Path, ...] = ()
    runs: tuple[pd.Timestamp, ...] = ()
    downloads: int = 0
    downloaded_bytes: int = 0
    notes: tuple[str, ...] = field(default=())


def sidecar_path(path: Path) -> Path:
    """``<stem>.fetch.json`` beside ``<stem>.<suffix>``."""
    return path.with_name(path.stem + SIDECAR_SUFFIX)


def write_sidecar(path: Path, request: Mapping[str, object], **details: object) -> None:
    """Record that ``path`` is complete and what it holds (``request``), with its size and SHA-256."""
    record = {"format": SIDECAR_FORMAT, "file": path.name, "bytes": path.stat().st_size,
              "sha256": sha256_file(path), "request": dict(request), **details}
    write_text_atomic(sidecar_path(path), json.dumps(record, indent=1) + "\n")


def read_sidecar(path: Path) -> dict[str, object] | None:
    """The sidecar of ``path``, or None if there is none or it is unreadable."""
    try:
        record = json.loads(sidecar_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("format") == SIDECAR_FORMAT else None


def is_complete(path: Path, request: Mapping[str, object]) -> bool:
    """Whether ``path`` is there with a sidecar recording ``request`` and the file's present size."""
    record = read_sidecar(path)
    try:
        return record is not None and record.get("request") == dict(request) and path.stat().st_size == record["bytes"]
    except OSError:
        return False


def check_grib(path: Path) -> int:
    """The number of GRIB messages in ``path``, each checked to be whole (its length as its indicator section
    gives it, ending in ``7777``).

    Raises
    ------
    ValueError
        Describing the first message that is cut short or malformed, or a file with none.
    """
    count, position, size = 0, 0, path.stat().st_size
    with path.open("rb") as handle:
        while header := handle.read(16):
            if header[:4] != b"GRIB"[:len(header[:4])]:
                raise ValueError(f"no GRIB message starts at byte {position} (message {count + 1})")
            if len(header) < 16:
                raise ValueError(f"the file was truncated: GRIB message {count + 1} at byte {position} ends after "
                                 f"{len(header)} bytes")
            edition = header[7]
            length = int.from_bytes(header[8:16] if edition == 2 else header[4:7], "big")
            if position + length > size:
                raise ValueError(f"the file was truncated: GRIB message {count + 1} at byte {position} expects "
                                 f"{length} bytes, got {size - position}")
            handle.seek(position + length - 4)
            if length < 20 or handle.read(4) != b"7777":
                raise ValueError(f"GRIB message {count + 1} at byte {position} is malformed: its {length} bytes do "
                                 "not end in 7777")
            count, position = count + 1, position + length
    if count == 0:
        raise ValueError("no GRIB message in the file")
    return count
