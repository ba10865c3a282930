"""ECMWF open data (HRES and ENS) through ``ecmwf-opendata``: the requested fields of one step of a run.

The client reads the step's ``.index`` (one JSON line per field, with its byte offset and length) and
downloads only the byte ranges of the requested parameters, from
``{root}/{yyyymmdd}/{HH}z/ifs/0p25/{oper|enfo}/{yyyymmddHH}0000-{step}h-{oper|enfo}-{fc|ef}.grib2``.
``root`` is ECMWF's site, or another given as ``Client(source=URL)``, the client's documented way of
choosing a mirror. Each field is asked for alone: asked for with others, a field the index lacks is only
a warning of the client's. The client's own retries are turned off (``maximum_retries=1``) so that a step is
retried whole by :func:`hydroseq.fetch.download.retrying`, with hydroseq's waits and messages.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import logging
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import requests

from hydroseq.errors import ConfigError
from hydroseq.fetch.download import Transient, check_fetched_grib, classify, retrying
from hydroseq.fetch.products import Piece, RunRequest
from hydroseq.fetch.session import last_answer

LOGGER = logging.getLogger(__name__)
ATTRIBUTION = "ECMWF open data is licensed CC BY 4.0: attribute ECMWF when using it"
# What the ``stream`` and ``type`` of a request are for each product (the client maps them to the URL's).
REQUESTS: dict[str, dict[str, Any]] = {"ecmwf-hres": {"stream": "oper", "type": "fc"},
                                        "ecmwf-ens": {"stream": "enfo", "type": ["cf", "pf"]}}

PieceFetcher = Callable[[Piece, Path], list[str]]


@contextlib.contextmanager
def piece_fetcher(request: RunRequest, session: requests.Session) -> Iterator[PieceFetcher]:
    """A function that writes the requested fields of one step of ``request``'s run to a file and returns
    the URLs it read; each step is tried as the policy of ``request`` says."""
    from ecmwf.opendata import Client  # type: ignore[import-untyped]

    client = Client(source=request.base_url, model="ifs", resol="0p25", maximum_retries=1, retry_after=0)
    client.session = session  # timeouts and User-Agent of hydroseq's session (its ``session`` attribute)
    label = request.product.label

    def fetch(piece: Piece, target: Path) -> list[str]:
        urls: list[str] = []
        with target.open("wb") as out:
            for param in request.params:
                part = target.with_name(f"{target.name}.{param}")
                try:
                    urls += retrying(label, functools.partial(_retrieve, client, request, piece, param, part),
                                     request.policy)
                    with part.open("rb") as data:
                        shutil.copyfileobj(data, out)
                finally:
                    part.unlink(missing_ok=True)
        return urls

    yield fetch


def _retrieve(client: Any, request: RunRequest, piece: Piece, param: str, target: Path) -> list[str]:
    """One attempt at one field of one step: the client's ``retrieve``, then a check that every GRIB message is
    whole. One field a request: asked for with others, a field the index lacks is skipped with a warning."""
    run = request.run
    fields = {"date": f"{run:%Y%m%d}", "time": run.hour, "step": piece.step, "param": param,
              **REQUESTS[request.product.name]}
    where = f"{request.base_url} (run {run:%Y-%m-%dT%HZ}, step {piece.step} h)"
    printed = io.StringIO()
    try:
        # The client prints its licence line on stdout and multiurl a progress bar on stderr, even into a
        # pipe: they would break ``--json`` and fill logs. Both are kept off the terminal; the licence is a note.
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            result = client.retrieve(fields, target=str(target))
    except json.JSONDecodeError as error:  # the client reads the index a JSON object a line
        last = client.session.last_response
        raise Transient(last.url if last is not None else where, f"not an index of JSON lines ({error}): "
                                                                 f"{last_answer(client.session)}") from None
    except ValueError as error:
        if "Cannot find index entries" not in str(error):
            raise
        raise ConfigError(f"{request.product.label}: the index of {where} lists no field {param!r} (a parameter "
                          "ECMWF open data does not have?)") from None
    except (AssertionError, RuntimeError, StopIteration) as error:
        # multiurl's checks of a transfer that ended early (sizes, multipart boundaries)
        raise Transient(where, _truncated(client.session, target)
                        or f"incomplete transfer ({type(error).__name__}: {error})"[:300]) from None
    except requests.RequestException as error:
        classified = classify(error, where)
        if classified is None:
            raise
        truncated = _cut(error)
        raise (Transient(where, truncated) if truncated and isinstance(classified, Transient) else classified) \
            from None
    finally:
        LOGGER.debug("ecmwf-opendata: %s", printed.getvalue().strip())
    check_fetched_grib(target, where)
    return [str(item[0] if isinstance(item, tuple) else item) for item in result.urls]


def _cut(error: BaseException) -> str | None:
    """``the transfer was truncated: expected N bytes, got M`` for an answer that ended before its length."""
    cut = re.search(r"IncompleteRead\((\d+) bytes read, (\d+) more expected\)", str(error))
    if cut is None:
        return None
    got, more = int(cut.group(1)), int(cut.group(2))
    return f"the transfer was truncated: expected {got + more} bytes, got {got}"


def _truncated(session: requests.Session, target: Path) -> str | None:
    """``the file was truncated: expected N bytes, got M`` when the last request, for GRIB data, asked for more
    bytes (its byte ranges, else its ``Content-Length``) than reached ``target``."""
    last = getattr(session, "last_response", None)
    if last is None or last.status_code not in (200, 206):
        return None
    ranges = re.findall(r"(\d+)-(\d+)", str(last.request.headers.get("Range", "")))
    asked = sum(int(end) - int(first) + 1 for first, end in ranges) if ranges else None
    if asked is None and last.headers.get("Content-Length", "").isdigit():
        asked = int(last.headers["Content-Length"])
    got = target.stat().st_size if target.exists() else 0
    return f"the file was truncated: expected {asked} bytes, got {got}" if asked is not None and got < asked else None
