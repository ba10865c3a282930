"""``fetch_runs``: the forecast run an issue time needs, as one GRIB2 file per run in the raw folder.

A run is downloaded piece by piece (a step, and for GEFS a member: one file at the source) into a hidden
parts folder beside its file, ``.{product}_{yyyymmddHH}.parts/``, each piece renamed into place when
complete; then the pieces are joined, in step order, into ``{product}/{product}_{yyyymmddHH}.grib2``
(renamed into place whole) with its sidecar, and the parts folder is removed. A fetch that is stopped
(or fails) keeps the pieces it finished: the next one downloads only the others. The parts of a run older
than the ones an issue time needs (a run the source had only partly) are removed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pandas as pd
import requests

from hydroseq.errors import ConfigError, UnavailableError
from hydroseq.fetch.download import NotPublished, RetryPolicy
from hydroseq.fetch.ecmwf import ATTRIBUTION
from hydroseq.fetch.products import (
    DEFAULT_PARAMS,
    DEFAULT_STEPS,
    RunRequest,
    parse_issue_time,
    parse_steps,
    product_named,
    run_stem,
    runs_needed,
)
from hydroseq.fetch.session import TimeoutSession
from hydroseq.fetch.store import FetchResult, is_complete, write_sidecar
from hydroseq.fileio import atomic_path, clean_stale_temporaries, make_output_dir, remove_path, write_text_atomic

LOGGER = logging.getLogger(__name__)
SHORT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")  # an ecCodes shortName: it also names files here
PieceFetcher = Callable[..., list[str]]


def fetch_runs(source: str, issue_time: str | pd.Timestamp, out: str | Path, *,
               params: Sequence[str] = DEFAULT_PARAMS, steps: Sequence[str | int] = DEFAULT_STEPS,
               members: int | None = None, base_url: str | None = None, latency_hours: float | None = None,
               timezone: str = "UTC", policy: RetryPolicy | None = None) -> FetchResult:
    """Download the run of a forecast product that ``issue_time`` needs into ``out/<source>/``.

    The run is the newest published by the issue time (reference time + the product's latency at or
    before it) whose cycle has every step; when the source does not have all of it, the run before.

    Parameters
    ----------
    source
        ``ecmwf-hres``, ``ecmwf-ens``, ``gfs`` or ``gefs`` (:data:`hydroseq.fetch.products.PRODUCTS`).
    issue_time
        ISO 8601 (``2026-11-02``: the end of that day in ``timezone``; ``2026-11-02T06:00Z``), or a UTC timestamp.
    out
        The raw folder; the run file goes to ``out/<source>/<source>_<yyyymmddHH>.grib2``.
    params
        Fields by ecCodes shortName (``tp``, ``2t``, ...); only their messages are downloaded.
    steps
        Forecast steps in hours: single hours or ``FIRST/LAST/BY`` ranges.
    members
        GEFS only: the control and the first ``members`` perturbed members (default all 30).
    base_url
        Another root than the product's (a mirror) with the same layout.
    latency_hours
        Replaces the catalogue's latency of the product (hours from a run's reference time until it is all
        published: :data:`hydroseq.grid.weather_products.WEATHER_PRODUCTS`).
    timezone
        The zone of an issue time given as a date, or without a zone.
    policy
        Retries and timeouts of each piece (default :class:`~hydroseq.fetch.download.RetryPolicy`).

    Returns
    -------
    FetchResult
        The run file written, or skipped when already complete.

    Raises
    ------
    ConfigError
        An unknown source, parameter or step range; a request the server refuses (HTTP 4xx but 404).
    UnavailableError
        The source cannot be reached after the retries, or has neither run.
    OutputPathError, NoSpaceError
        The raw folder cannot be written.
    """
    product = product_named(source)
    when = issue_time if isinstance(issue_time, pd.Timestamp) else parse_issue_time(issue_time, timezone)
    hours = parse_steps(steps)
    latency = None if latency_hours is None else pd.Timedelta(hours=latency_hours)
    policy = policy or RetryPolicy()
    if members is not None and product.name != "gefs":
        raise ConfigError(f"--members: {product.label} files hold every member; --members applies to gefs")
    if not params:
        raise ConfigError("--params: no field given")
    for param in params:
        if not SHORT_NAME.match(param):
            raise ConfigError(f"--params: {param!r} is not a field's shortName (letters and digits, then also _ . + -: "
                              "tp, 2t, 10u, ...)")
    folder = Path(out) / product.name
    notes: list[str] = []
    missing: list[str] = []
    candidates = runs_needed(product, when, hours, latency)
    _remove_older_parts(folder, product.name, min(candidates))
    with TimeoutSession(policy) as session:
        for run in candidates:
            request = RunRequest(product, run, tuple(dict.fromkeys(params)), hours, base_url or product.base_url,
                                 policy, members)
            if not request.pieces():
                raise ConfigError(f"--steps: {product.label} has no precipitation (tp) at step 0; ask for later steps")
            target = folder / f"{run_stem(product, run)}.grib2"
            if is_complete(target, request.identity()):
                return FetchResult(source, when, skipped=(target,), runs=(run,), notes=tuple(notes))
            try:
                downloads, size = _fetch_run(request, target, session)
            except NotPublished as absent:
                missing.append(str(absent))
                notes.append(f"the run of {run:%Y-%m-%dT%HZ} is not (all) published: {absent}")
                continue
            if product.name.startswith("ecmwf"):
                notes.append(ATTRIBUTION)
            if request.steps_taken() != request.steps:
                notes.append(f"{product.label} has no precipitation at step 0: the run file starts at step "
                             f"{request.steps_taken()[0]} h")
            return FetchResult(source, when, written=(target,), runs=(run,), downloads=downloads,
                               downloaded_bytes=size, notes=tuple(notes))
    raise UnavailableError(f"{product.label}: no run published by {when:%Y-%m-%dT%H:%MZ} is at the source: "
                           + "; ".join(missing))


def _fetch_run(request: RunRequest, target: Path, session: requests.Session) -> tuple[int, int]:
    """Download the missing pieces of a run, then join them into ``target``; returns the pieces downloaded
    and their bytes. Raises :class:`NotPublished` for a piece the source lacks (the pieces before it stay)."""
    parts = target.with_name(f".{target.stem}.parts")
    downloads = size = 0
    with _piece_fetcher(request, session) as fetch:
        _start_parts(parts, request)
        for piece in request.pieces():
            path = parts / piece.name
            if path.exists():
                continue
            with atomic_path(path) as tmp:
                urls = fetch(piece, tmp)
            LOGGER.debug("%s: %s from %s", request.product.label, path.name, " ".join(urls))
            downloads, size = downloads + 1, size + path.stat().st_size
    with atomic_path(target) as tmp, tmp.open("wb") as joined:
        for piece in request.pieces():
            with (parts / piece.name).open("rb") as part:
                shutil.copyfileobj(part, joined)
    write_sidecar(target, request.identity(), base_url=request.base_url, pieces=len(request.pieces()))
    remove_path(parts)
    return downloads, size


def _remove_older_parts(folder: Path, name: str, oldest: pd.Timestamp) -> None:
    """Remove the parts folders of runs older than ``oldest`` (runs left partly published): no fetch needs them."""
    for parts in folder.glob(f".{name}_*.parts"):
        stamp = parts.name.removeprefix(f".{name}_").removesuffix(".parts")
        if stamp.isdigit() and len(stamp) == 10 and pd.Timestamp(f"{stamp[:8]}T{stamp[8:]}Z") < oldest:
            remove_path(parts)


def _start_parts(parts: Path, request: RunRequest) -> None:
    """The parts folder of a run, emptied if an earlier fetch left pieces of another request, and without the
    temporaries of a fetch that was killed."""
    record = parts / "request.json"
    identity = json.dumps(request.identity(), sort_keys=True)
    if parts.exists():
        try:
            same = record.read_text(encoding="utf-8") == identity
        except OSError:
            same = False
        if not same:
            remove_path(parts)
    make_output_dir(parts)
    clean_stale_temporaries(parts)
    if not record.exists():
        write_text_atomic(record, identity)


@contextlib.contextmanager
def _piece_fetcher(request: RunRequest, session: requests.Session) -> Iterator[PieceFetcher]:
    """The source's piece fetcher, its library imported only now (an install without the extra can still
    run the other commands)."""
    if request.product.name.startswith("ecmwf"):
        from hydroseq.fetch.ecmwf import piece_fetcher
    else:
        from hydroseq.fetch.noaa import piece_fetcher
    with piece_fetcher(request, session) as fetch:
        yield fetch
