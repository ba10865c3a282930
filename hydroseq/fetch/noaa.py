"""NOAA GFS and GEFS through Herbie (``herbie-data``): the requested fields of one step (and member) of a run.

Herbie knows where each file of a run is (``gfs.{yyyymmdd}/{HH}/atmos/gfs.t{HH}z.pgrb2.0p25.f{FFF}``,
``gefs.{yyyymmdd}/{HH}/atmos/pgrb2ap5/ge{c00|pNN}.t{HH}z.pgrb2a.0p50.f{FFF}``) and reads its ``.idx``
inventory (wgrib2's: ``n:offset:d=YYYYMMDDHH:VAR:level:forecast:``), which gives the byte ranges of the
requested fields. The root is NOAA's AWS bucket, or another (``--base-url``): a Herbie model template, Herbie's
documented way of adding sources (what a Herbie plugin registers), puts the bucket's layout under it.
Herbie's own download has no retries or timeouts and writes its target in place, so the ranges are
downloaded by :func:`hydroseq.fetch.download.download`, resumably and with retries.
"""

from __future__ import annotations

import contextlib
import io
import logging
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pandas as pd
import requests

from hydroseq.errors import ConfigError
from hydroseq.fetch.download import (
    ByteRange,
    NotPublished,
    Transient,
    check_fetched_grib,
    classify,
    download,
    retrying,
    within,
)
from hydroseq.fetch.products import Piece, RunRequest
from hydroseq.fetch.session import last_answer

LOGGER = logging.getLogger(__name__)
HERBIE_PRODUCTS = {"gfs": "pgrb2.0p25", "gefs": "atmos.5"}
MIRROR_MODEL = "hydroseq_mirror"
# The wgrib2 inventory text of each field (ecCodes shortName -> pattern; tp: accumulated since the run's start,
# as ECMWF's tp, not the 6-hourly bucket the files also hold).
FIELDS: dict[str, Callable[[int], str]] = {
    "tp": lambda step: f":APCP:surface:0-{step} hour acc",
    "2t": lambda step: ":TMP:2 m above ground:",
    "2d": lambda step: ":DPT:2 m above ground:",
    "10u": lambda step: ":UGRD:10 m above ground:",
    "10v": lambda step: ":VGRD:10 m above ground:",
    "sp": lambda step: ":PRES:surface:",
    "prmsl": lambda step: ":PRMSL:mean sea level:",
}

PieceFetcher = Callable[[Piece, Path], list[str]]


@contextlib.contextmanager
def piece_fetcher(request: RunRequest, session: requests.Session) -> Iterator[PieceFetcher]:
    """A function that writes the requested fields of one piece of ``request``'s run to a file and returns
    the URLs it read (the GRIB file and its inventory)."""
    unknown = [param for param in request.params if param not in FIELDS]
    if unknown:
        raise ConfigError(f"--params: {request.product.label}: no field {unknown[0]!r} (one of {', '.join(FIELDS)})")
    herbie = _herbie()
    with tempfile.TemporaryDirectory(prefix="hydroseq-herbie-") as scratch, _asked_through(session):
        # Herbie keeps each .idx it reads in scratch, and asks with hydroseq's session (deadline, redirects)

        def fetch(piece: Piece, target: Path) -> list[str]:
            grib_url, idx_url, ranges = retrying(request.product.label,
                                                 lambda: _locate(herbie, request, piece, Path(scratch), session),
                                                 request.policy)
            retrying(request.product.label, lambda: _download(session, grib_url, target, request, ranges),
                     request.policy)
            return [grib_url, idx_url]

        yield fetch


class _SessionRequests:
    """The ``requests`` module as Herbie uses it, its ``get`` and ``head`` asked through hydroseq's session."""

    def __init__(self, session: requests.Session) -> None:
        self._session = session

    def get(self, url: str, **options: Any) -> requests.Response:
        """``session.get``."""
        return self._session.get(url, **options)

    def head(self, url: str, **options: Any) -> requests.Response:
        """``session.head`` (no redirect followed, as ``requests.head``)."""
        return self._session.head(url, **options)

    def __getattr__(self, name: str) -> Any:
        return getattr(requests, name)


@contextlib.contextmanager
def _asked_through(session: requests.Session) -> Iterator[None]:
    """Herbie's requests asked through ``session`` for the block (Herbie calls ``requests.get`` and ``head``)."""
    import herbie.core

    plain = getattr(herbie.core, "requests")  # noqa: B009 (the module Herbie imported, not one it exports)
    setattr(herbie.core, "requests", _SessionRequests(session))  # noqa: B010
    try:
        yield
    finally:
        setattr(herbie.core, "requests", plain)  # noqa: B010


def _download(session: requests.Session, url: str, target: Path, request: RunRequest,
              ranges: list[ByteRange]) -> None:
    """One attempt at a piece's byte ranges (each resumed and retried as the policy says), which must hold whole
    GRIB messages: :class:`Transient` otherwise (a file shorter than its inventory says, or no GRIB at all)."""
    with target.open("wb") as out:
        download(session, url, out, request.product.label, request.policy, ranges)
    check_fetched_grib(target, url)


def _herbie() -> Any:
    """Herbie's ``Herbie`` class, with the mirror template registered; what Herbie prints on its first import
    (the config file it creates) is logged, not printed on stdout."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), warnings.catch_warnings():
        # Herbie warns on every import about the placeholder template file it wrote into its own config folder
        warnings.filterwarnings("ignore", "Herbie: Custom model templates", DeprecationWarning)
        import herbie.models
        from herbie.core import Herbie
    if printed.getvalue().strip():
        LOGGER.debug("herbie: %s", printed.getvalue().strip())
    setattr(herbie.models, MIRROR_MODEL, MirrorTemplate)
    return Herbie


class MirrorTemplate:
    """A Herbie model template: NOAA's bucket layout of the model named by the ``mirror_of`` argument, under
    the root URL of the ``mirror_root`` argument (Herbie sets a Herbie object's extra arguments as its
    attributes before calling ``template``)."""

    mirror_of: str
    mirror_root: str
    SOURCES: dict[str, str]

    def template(self) -> None:
        """Herbie's template of ``mirror_of``, its AWS source moved to ``mirror_root``."""
        import herbie.models

        getattr(herbie.models, self.mirror_of).template(self)
        self.SOURCES = {"mirror": self.mirror_root.rstrip("/") + urlparse(self.SOURCES["aws"]).path}


def _locate(herbie: Any, request: RunRequest, piece: Piece, scratch: Path,
            session: requests.Session) -> tuple[str, str, list[ByteRange]]:
    """One attempt at finding a piece's GRIB file and inventory and the byte ranges of its requested fields."""
    model = request.product.name
    run = request.run.tz_convert("UTC").tz_localize(None)
    if run >= pd.Timestamp.now("UTC").tz_localize(None):
        raise NotPublished(request.base_url, "has no run that has not started yet")
    options: dict[str, Any] = {"model": MIRROR_MODEL, "mirror_of": model, "mirror_root": request.base_url,
                               "priority": ["mirror"], "product": HERBIE_PRODUCTS[model], "fxx": piece.step,
                               "save_dir": scratch, "overwrite": True, "verbose": False}
    if piece.member is not None:
        options["member"] = piece.member
    seconds = 4 * (request.policy.connect_timeout_s + request.policy.read_timeout_s)
    try:
        found = within(seconds, request.base_url, lambda: herbie(run, **options))
        expected = next(iter(found.SOURCES.values()))
        if found.grib is None or found.idx is None:
            _why_absent(session, expected if found.grib is None else f"{expected}.idx")
        search = "|".join(f"(?:{FIELDS[param](piece.step)})" for param in request.params)
        try:
            inventory = within(seconds, str(found.idx), lambda: found.inventory(search))
            ranges = _ranges(inventory, request, piece, str(found.idx))
        except (ValueError, KeyError, IndexError, TypeError) as error:  # Herbie read what is no inventory
            raise Transient(str(found.idx), f"not a wgrib2 inventory ({type(error).__name__}): "
                                            f"{last_answer(session)}") from None
    except requests.RequestException as error:
        classified = classify(error, request.base_url)
        if classified is None:
            raise
        raise classified from None
    return str(found.grib), str(found.idx), ranges


def _why_absent(session: requests.Session, url: str) -> None:
    """Herbie found no file at ``url``: raise :class:`NotPublished` if the server says 404, :class:`Transient`
    if it fails (Herbie takes any failure for absence)."""
    try:
        session.head(url, allow_redirects=True).raise_for_status()
    except requests.RequestException as error:
        classified = classify(error, url)
        raise (classified or Transient(url, str(error))) from None
    raise NotPublished(url)


def _ranges(inventory: pd.DataFrame, request: RunRequest, piece: Piece, idx_url: str) -> list[ByteRange]:
    """The byte ranges of the inventory's lines, neighbouring messages merged; every field present."""
    for param in request.params:
        pattern = FIELDS[param](piece.step)
        if not inventory["search_this"].str.contains(pattern, regex=False).any():
            raise ConfigError(f"{idx_url}: no message {pattern.strip(':')!r} ({param}) in the inventory (a field "
                              f"{request.product.label} does not have at step {piece.step} h?)")
    ranges: list[ByteRange] = []
    for first, last in sorted(zip(inventory["start_byte"], inventory["end_byte"], strict=True)):
        end = None if pd.isna(last) else int(last)
        if ranges and ranges[-1][1] is not None and ranges[-1][1] + 1 == int(first):
            ranges[-1] = (ranges[-1][0], end)
        else:
            ranges.append((int(first), end))
    return ranges
