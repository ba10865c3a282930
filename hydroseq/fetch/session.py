"""The HTTP session every fetcher asks through: timeouts, an overall deadline per request, same-host redirects.

A ``requests`` session times a connection and each wait for the next bytes, not a whole answer: a server
(or a proxy) that sends a byte every few seconds keeps a request alive for ever. :class:`TimeoutSession`
gives each request a deadline (:attr:`~hydroseq.fetch.download.RetryPolicy.deadline_s`, ``--deadline``) from
its start to its last byte, its body read after the call too: the sockets of its connections shorten each
wait to the time left, and past it a read fails as a timeout, which the fetchers retry as any other. It
follows a redirect only on the same host and port (``http`` may become ``https``, not the reverse): a
redirect elsewhere, a captive portal's login page or a mirror that moved, is a
:class:`~hydroseq.errors.ConfigError` naming both addresses. It keeps the last response, for messages that
say what came instead of an index or a GRIB file.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
import weakref
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from hydroseq import __version__
from hydroseq.errors import ConfigError

DEADLINE_TEXT = "the deadline of a request, --deadline"
_REQUEST = threading.local()  # .deadline (time.monotonic) and .seconds of the thread's newest request
_TIMEOUTS: weakref.WeakKeyDictionary[socket.socket, float | None] = weakref.WeakKeyDictionary()


class RedirectRefused(ConfigError):
    """A server redirected a request to another host or port (or from ``https`` to ``http``)."""

    def __init__(self, url: str, target: str) -> None:
        super().__init__(f"{url}: the server redirects to another server, {target}; hydroseq follows redirects on the "
                         "same host and port only (a proxy's or captive portal's page? a mirror that moved: give "
                         "--base-url)")


class TimeoutSession(requests.Session):
    """A ``requests`` session whose requests time out as the policy says (``timeout`` given or not, as by a
    library), each within its deadline, redirected on the same host only; it names hydroseq in the
    ``User-Agent`` and keeps the last response (:attr:`last_response`)."""

    def __init__(self, policy: Any) -> None:
        super().__init__()
        self.default_timeout = (policy.connect_timeout_s, policy.read_timeout_s)
        self.deadline_s = float(policy.deadline_s)
        self.last_response: requests.Response | None = None
        self.headers["User-Agent"] = f"hydroseq/{__version__} {self.headers['User-Agent']}"
        self.hooks["response"].append(self._keep)
        for prefix in ("http://", "https://"):
            self.mount(prefix, _DeadlineAdapter())

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> requests.Response:
        """As :meth:`requests.Session.request`, with the policy's timeouts where none is given, within the
        deadline (which also covers reading a streamed body later in this thread)."""
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = self.default_timeout
        _REQUEST.deadline, _REQUEST.seconds = time.monotonic() + self.deadline_s, self.deadline_s
        return super().request(method, url, *args, **kwargs)

    def get_redirect_target(self, resp: requests.Response) -> str | None:
        """The redirect's target if it stays on the host; raises :class:`RedirectRefused` otherwise."""
        target = super().get_redirect_target(resp)
        if target is not None and not _same_server(resp.url, urljoin(resp.url, target)):
            raise RedirectRefused(resp.url, urljoin(resp.url, target))
        return target

    def _keep(self, response: requests.Response, *args: Any, **kwargs: Any) -> requests.Response:
        self.last_response = response
        return response


def _same_server(url: str, target: str) -> bool:
    """Whether ``target`` is on the host and port of ``url`` (``http`` may become ``https`` on the default ports)."""
    before, after = urlsplit(url), urlsplit(target)
    if after.hostname != before.hostname or (before.scheme, after.scheme) == ("https", "http"):
        return False
    if (before.scheme, after.scheme) == ("http", "https") and (before.port, after.port) == (None, None):
        return True
    return after.scheme == before.scheme and after.port == before.port


def what_came(body: bytes, kind: str = "") -> str:
    """What an answer holds (``body``: its first bytes, ``kind``: its ``Content-Type``), for a message: an HTML
    page, or its first bytes."""
    text = body[:200].lower()
    if "html" in kind.lower() or any(tag in text for tag in (b"<!doctype", b"<html", b"<head", b"<body", b"</")):
        return "an HTML page (a captive portal's or a proxy's?)"
    return f"{body[:40]!r}" if body else "an empty answer"


def last_answer(session: requests.Session) -> str:
    """What the session's last response held (:func:`what_came`), if its body was read."""
    last = getattr(session, "last_response", None)
    body = getattr(last, "_content", None)  # read already (not a stream left open)
    if last is None or not isinstance(body, bytes):
        return "an answer not read"
    return what_came(body[:200], last.headers.get("Content-Type", ""))


def deadline_passed(error: BaseException) -> str | None:
    """The reason to give when ``error`` (a ``requests`` error, however wrapped) came of a request's deadline."""
    seen: list[BaseException] = [error]
    while seen:
        current = seen.pop()
        if DEADLINE_TEXT in str(current):
            return str(current)
        seen += [item for item in (*current.args, current.__cause__, current.__context__)
                 if isinstance(item, BaseException) and len(seen) < 32]
    return None


def _time_left() -> float | None:
    """Seconds left to the thread's newest request (None: no request made here)."""
    deadline = getattr(_REQUEST, "deadline", None)
    return None if deadline is None else deadline - time.monotonic()


class _DeadlineMixin:
    """Socket reads that wait no longer than the time left to the request's deadline."""

    __slots__ = ()

    def settimeout(self, value: float | None) -> None:
        _TIMEOUTS[self] = value  # type: ignore[index]
        super().settimeout(value)  # type: ignore[misc]

    def _shortened(self) -> None:
        left = _time_left()
        if left is None:
            return
        if left <= 0:
            raise TimeoutError(f"no complete answer within {_REQUEST.seconds:g} s ({DEADLINE_TEXT})")
        given = _TIMEOUTS.get(self)  # type: ignore[call-overload]
        super().settimeout(left if given is None else min(given, left))  # type: ignore[misc]

    def recv_into(self, *args: Any, **kwargs: Any) -> int:
        self._shortened()
        try:
            return super().recv_into(*args, **kwargs)  # type: ignore[misc]
        except TimeoutError:
            left = _time_left()
            if left is not None and left <= 0.001:
                raise TimeoutError(f"no complete answer within {_REQUEST.seconds:g} s ({DEADLINE_TEXT})") from None
            raise

    def recv(self, *args: Any, **kwargs: Any) -> bytes:
        self._shortened()
        return super().recv(*args, **kwargs)  # type: ignore[misc]


class _DeadlineSocket(_DeadlineMixin, socket.socket):
    __slots__ = ()


class _DeadlineSSLSocket(_DeadlineMixin, ssl.SSLSocket):
    pass


def _with_deadline(connection: HTTPConnection) -> None:
    """The connection's socket made to keep to the deadline (a plain or TLS socket; any other is left)."""
    sock = connection.sock
    if type(sock) is ssl.SSLSocket:
        sock.__class__ = _DeadlineSSLSocket
    elif type(sock) is socket.socket:
        sock.__class__ = _DeadlineSocket
    else:
        return
    _TIMEOUTS[sock] = sock.gettimeout()


class _DeadlineHTTPConnection(HTTPConnection):
    def connect(self) -> None:
        super().connect()
        _with_deadline(self)


class _DeadlineHTTPSConnection(HTTPSConnection):
    def connect(self) -> None:
        super().connect()
        _with_deadline(self)


class _DeadlineHTTPPool(HTTPConnectionPool):
    ConnectionCls = _DeadlineHTTPConnection


class _DeadlineHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _DeadlineHTTPSConnection


class _DeadlineAdapter(HTTPAdapter):
    """An adapter whose connections' sockets keep to the request's deadline."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _DeadlineHTTPPool, "https": _DeadlineHTTPSPool}
