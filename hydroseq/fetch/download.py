"""HTTP downloads shared by the fetchers: retries with backoff, timeouts, byte ranges resumed after a cut.

:func:`retrying` runs one request (or a library call that makes several) until it succeeds: a connection
refused or cut, a timeout, HTTP 408/425/429/5xx are tried again after a wait that doubles each time
(:class:`RetryPolicy`); after the last attempt the source is unreachable, an
:class:`~hydroseq.errors.UnavailableError` naming the source and the URL (exit 6). HTTP 404 is
:class:`NotPublished` at once (the caller may fall back to an earlier run); any other refusal is a
:class:`~hydroseq.errors.ConfigError` naming the URL and the status (a wrong ``--base-url``, access denied).

:func:`download` writes a file, or byte ranges of it, into a file the caller opened (a temporary of
:func:`hydroseq.fileio.atomic_path`, so the target appears only when complete). A response cut short is
resumed from the byte it stopped at with an HTTP ``Range`` request, not downloaded again.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

import requests

from hydroseq.errors import ConfigError, UnavailableError
from hydroseq.fetch.session import deadline_passed, what_came
from hydroseq.fetch.store import check_grib

LOGGER = logging.getLogger(__name__)
T = TypeVar("T")
TRANSIENT_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
CHUNK_BYTES = 1 << 20
ByteRange = tuple[int, int | None]  # first and last byte, both included; last None: to the end of the file


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a source is asked.

    Attributes
    ----------
    attempts
        Tries of each request before the source counts as unreachable (1: no retry).
    first_wait_s
        Wait before the second try; it doubles before each further one, up to ``max_wait_s``.
    max_wait_s
        The longest wait between two tries.
    connect_timeout_s, read_timeout_s
        How long a connection may take to open, and a response to send its next bytes.
    deadline_s
        How long one request may take from its start to its last byte (a server that trickles its answer
        a byte at a time never reaches the read timeout); past it the attempt has failed.
    """

    attempts: int = 5
    first_wait_s: float = 2.0
    max_wait_s: float = 60.0
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 60.0
    deadline_s: float = 600.0

    def __post_init__(self) -> None:
        if self.attempts < 1 or self.first_wait_s < 0 or self.max_wait_s < 0 or not self.deadline_s > 0:
            raise ConfigError(f"retries: attempts must be 1 or more, waits 0 or more and the deadline more than 0, "
                              f"got {self}")

    def waits(self) -> Iterator[float]:
        """The waits before the second, third, ... attempt."""
        wait = self.first_wait_s
        for _ in range(self.attempts - 1):
            yield min(wait, self.max_wait_s)
            wait *= 2


class NotPublished(Exception):
    """The source answered that a file is not there (HTTP 404): not published yet, or never."""

    def __init__(self, url: str, reason: str = "not found") -> None:
        super().__init__(f"{url} {reason}")
        self.url = url
        self.reason = reason


class Transient(Exception):
    """A failure that another attempt may not have: the connection refused or cut, a timeout, HTTP 5xx."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason


def retrying(source: str, call: Callable[[], T], policy: RetryPolicy,
             sleep: Callable[[float], None] = time.sleep) -> T:
    """``call()``, tried again after each :class:`Transient` failure as ``policy`` says.

    Raises
    ------
    UnavailableError
        When the last attempt failed too: ``<source>: cannot reach <url> after N attempts (<reason>)``.
    """
    waits = policy.waits()
    attempt = 1
    while True:
        try:
            return call()
        except Transient as failure:
            wait = next(waits, None)
            if wait is None:
                raise UnavailableError(f"{source}: cannot reach {failure.url} after {policy.attempts} "
                                       f"attempt{'s' if policy.attempts > 1 else ''} ({failure.reason})") from None
            LOGGER.warning("%s: %s (attempt %d of %d; again in %.3g s)", source, failure, attempt,
                           policy.attempts, wait)
            sleep(wait)
            attempt += 1


def classify(error: BaseException, url: str) -> Exception | None:
    """What a failed request means: :class:`NotPublished`, :class:`Transient`, a :class:`ConfigError`
    (any other HTTP refusal), or None for an error that is not an HTTP failure."""
    if isinstance(error, requests.HTTPError) and error.response is not None:
        status, where = error.response.status_code, error.response.url or url
        if status == 404:
            return NotPublished(where)
        if status in TRANSIENT_STATUS:
            return Transient(where, f"HTTP {status} {error.response.reason or ''}".strip())
        return ConfigError(f"{where}: the server refused the request with HTTP {status} "
                           f"{error.response.reason or ''}".rstrip())
    passed = deadline_passed(error) if isinstance(error, (requests.RequestException, ConnectionError)) else None
    if passed is not None:
        return Transient(_url_of(error, url), passed)
    if isinstance(error, requests.Timeout):
        return Transient(_url_of(error, url), "no answer in time")
    if isinstance(error, (requests.ConnectionError, requests.exceptions.ChunkedEncodingError,
                          requests.exceptions.ContentDecodingError, ConnectionError)):
        return Transient(_url_of(error, url), reason(error))
    return None


def reason(error: BaseException) -> str:
    """The innermost cause of a network error in a few words (``Connection refused``)."""
    text = str(error)
    match = re.search(r"\[Errno -?\d+\] ([^'\")\]]+)", text) or re.search(r"(IncompleteRead\([^)]*\))", text)
    if match:
        return match.group(1).strip().rstrip(".")
    if "Connection aborted" in text or "RemoteDisconnected" in text:
        return "the server closed the connection"
    return type(error).__name__


def _url_of(error: BaseException, default: str) -> str:
    request = getattr(error, "request", None)
    return str(getattr(request, "url", None) or default)


def download(session: requests.Session, url: str, out: IO[bytes], source: str, policy: RetryPolicy,
             ranges: Sequence[ByteRange] | None = None) -> int:
    """Append the file at ``url`` (or only its byte ``ranges``, in order) to ``out``; returns the bytes written.

    Each range (the whole file: one range) is tried as ``policy`` says; a response cut short is resumed
    from where it stopped. A server that answers a byte range with the whole file is a
    :class:`~hydroseq.errors.ConfigError` (the file would be downloaded whole for each range).

    Raises
    ------
    NotPublished
        If the server answers 404.
    UnavailableError
        If a range cannot be had after the last attempt.
    """
    written = 0
    for first, last in ranges or [(0, None)]:
        start = out.tell()
        retrying(source, functools.partial(_copy_range, session, url, out, start, first, last, ranges is not None),
                 policy)
        written += out.tell() - start
    return written


def _copy_range(session: requests.Session, url: str, out: IO[bytes], start: int, first: int, last: int | None,
                ranged: bool) -> None:
    """One attempt at the bytes ``first..last`` of ``url``, continuing after what an earlier attempt wrote
    at ``start..`` of ``out``."""
    done = out.tell() - start
    begin = first + done
    headers = {"Range": f"bytes={begin}-{'' if last is None else last}"} if ranged or begin > 0 else {}
    try:
        with session.get(url, headers=headers, stream=True) as response:
            response.raise_for_status()
            if headers and response.status_code != 206:
                if ranged:
                    raise ConfigError(f"{url}: the server ignores byte ranges (HTTP {response.status_code} to a "
                                      "Range request), so the fields asked for cannot be taken alone")
                out.seek(start)
                out.truncate()
                done = begin = 0
            expected = _expected_bytes(response, begin, last)
            # a body cut short then ends the iteration instead of raising: the bytes that came are kept, and
            # the check below has the next attempt ask for the rest
            response.raw.enforce_content_length = False
            received = 0
            for chunk in response.iter_content(CHUNK_BYTES):
                out.write(chunk)
                received += len(chunk)
    except (requests.RequestException, ConnectionError) as error:
        classified = classify(error, url)
        if classified is None:
            raise
        raise classified from None
    if expected is not None and received > expected:  # not the bytes asked for: this attempt's are dropped
        out.seek(start + done)
        out.truncate()
        raise Transient(url, f"a response of {received} bytes where {expected} were asked for")
    if expected is not None and received < expected:
        raise Transient(url, f"the transfer was truncated: expected {expected} bytes, got {received}")


def _expected_bytes(response: requests.Response, begin: int, last: int | None) -> int | None:
    """The bytes the response should carry: what its ``Content-Range`` says (which must start at ``begin``) or
    its ``Content-Length`` (None when the server says neither, or compresses the body)."""
    if response.status_code == 206:
        content_range = re.match(r"bytes (\d+)-(\d+)/", response.headers.get("Content-Range", ""))
        if content_range is None or int(content_range.group(1)) != begin:
            raise Transient(response.url, f"a partial response that does not start at byte {begin} "
                                          f"(Content-Range {response.headers.get('Content-Range')!r})")
        end = int(content_range.group(2))
        return (end if last is None else min(end, last)) - begin + 1
    length = response.headers.get("Content-Length")
    if length is None or response.headers.get("Content-Encoding"):
        return None
    return int(length)


def within(seconds: float, url: str, call: Callable[[], T]) -> T:
    """``call()`` with a deadline, for a library whose requests have no timeout of their own: past it the
    attempt is :class:`Transient` (the call goes on in a daemon thread, its result discarded)."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as error:  # handed to the caller's thread below
            outcome["error"] = error

    worker = threading.Thread(target=run, name="hydroseq-fetch", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise Transient(url, f"no answer within {seconds:.0f} s")
    if "error" in outcome:
        raise outcome["error"]
    value: T = outcome["value"]
    return value


def check_fetched_grib(target: Path, where: str) -> None:
    """Refuse a fetched file that does not hold whole GRIB messages, as :class:`Transient` (retried): a file
    shorter than its messages say, or no GRIB at all (an HTML page, say, named by what it is)."""
    try:
        check_grib(target)
    except ValueError as error:
        with target.open("rb") as written:
            start = written.read(200)
        raise Transient(where, str(error) if start.startswith(b"GRIB") else f"not GRIB data: {what_came(start)}") \
            from None
