"""A local HTTP server laid out like each source ``hydroseq fetch`` reads, and the files it serves.

* ECMWF open data: ``{root}/{yyyymmdd}/{HH}z/ifs/0p25/{oper|enfo}/{yyyymmddHH}0000-{step}h-{oper-fc|enfo-ef}.grib2``
  with its ``.index`` beside it (one JSON object a line: the MARS keys of a field, ``_offset``, ``_length``).
* NOAA GFS: ``gfs.{yyyymmdd}/{HH}/atmos/gfs.t{HH}z.pgrb2.0p25.f{FFF}`` with ``.idx`` (wgrib2's inventory:
  ``n:offset:d=YYYYMMDDHH:VAR:level:forecast:``); GEFS:
  ``gefs.{yyyymmdd}/{HH}/atmos/pgrb2ap5/ge{c00|pNN}.t{HH}z.pgrb2a.0p50.f{FFF}`` the same way.
* USGS NWIS: ``/nwis/iv/?format=json&sites=...`` answering WaterML as JSON, from the readings given.

The GRIB2 messages are written with ecCodes on a 4 x 3 grid. The server answers GET and HEAD with
``Content-Length`` and ``Accept-Ranges: bytes``, one byte range (206, ``Content-Range``) or several
(``multipart/byteranges``), logs every request, and fails on demand (:meth:`SourceServer.fail`).
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import eccodes
import numpy as np
import pandas as pd

NCEP_NAMES = {"2t": ("TMP", "2 m above ground"), "tp": ("APCP", "surface"), "10u": ("UGRD", "10 m above ground"),
              "prmsl": ("PRMSL", "mean sea level")}


def grib_message(centre: str, short_name: str, run: pd.Timestamp, step: int, member: int | None = None,
                 start: int = 0) -> bytes:
    """One GRIB2 field on a 4 x 3 grid; ``tp`` accumulated from ``start`` to ``step``; ``member`` makes it an
    ensemble field (0: ECMWF's control forecast ``cf``, else ``pf``)."""
    handle = eccodes.codes_grib_new_from_samples("regular_ll_sfc_grib2")
    try:
        eccodes.codes_set(handle, "centre", centre)
        if member is not None:
            if centre == "ecmf":
                for key, value in (("setLocalDefinition", 1), ("localDefinitionNumber", 1), ("stream", "enfo"),
                                   ("type", "cf" if member == 0 else "pf")):
                    eccodes.codes_set(handle, key, value)
            eccodes.codes_set(handle, "productDefinitionTemplateNumber", 1)
        eccodes.codes_set(handle, "dataDate", int(f"{run:%Y%m%d}"))
        eccodes.codes_set(handle, "dataTime", run.hour * 100)
        if short_name == "tp":
            eccodes.codes_set(handle, "stepType", "accum")
        eccodes.codes_set(handle, "shortName", short_name)
        eccodes.codes_set(handle, "stepRange", f"{start}-{step}" if short_name == "tp" else str(step))
        if member is not None:
            eccodes.codes_set(handle, "perturbationNumber", member)
            eccodes.codes_set(handle, "numberOfForecastsInEnsemble", 51)
        for key, value in (("Ni", 4), ("Nj", 3), ("latitudeOfFirstGridPointInDegrees", 50.0),
                           ("longitudeOfFirstGridPointInDegrees", 0.0), ("latitudeOfLastGridPointInDegrees", 48.0),
                           ("longitudeOfLastGridPointInDegrees", 3.0), ("iDirectionIncrementInDegrees", 1.0),
                           ("jDirectionIncrementInDegrees", 1.0)):
            eccodes.codes_set(handle, key, value)
        eccodes.codes_set_values(handle, np.linspace(step, step + 1, 12) + (member or 0))
        return bytes(eccodes.codes_get_message(handle))
    finally:
        eccodes.codes_release(handle)


def grib_fields(path: Path) -> list[tuple[str, int, int]]:
    """``(shortName, end step, member number)`` of every message of a GRIB file, read with ecCodes."""
    fields = []
    with path.open("rb") as handle:
        while (message := eccodes.codes_grib_new_from_file(handle)) is not None:
            fields.append((eccodes.codes_get(message, "shortName"), int(eccodes.codes_get(message, "endStep")),
                           int(eccodes.codes_get(message, "number")) if eccodes.codes_is_defined(message, "number")
                           else 0))
            eccodes.codes_release(message)
    return fields


def write_ecmwf_run(root: Path, run: pd.Timestamp, steps: list[int], params: tuple[str, ...] = ("2t", "10u", "tp"),
                    members: int | None = None) -> list[Path]:
    """A run of ECMWF open data under ``root`` (``members``: an ENS run with the control and that many
    perturbed members), its ``.index`` files beside; returns the GRIB files."""
    stream, kind = ("oper", "fc") if members is None else ("enfo", "ef")
    folder = root / f"{run:%Y%m%d}" / f"{run:%H}z" / "ifs" / "0p25" / stream
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for step in steps:
        path = folder / f"{run:%Y%m%d%H}0000-{step}h-{stream}-{kind}.grib2"
        lines, data = [], b""
        for number in [None] if members is None else range(members + 1):
            for param in params:
                message = grib_message("ecmf", param, run, step, number)
                entry = {"domain": "g", "date": f"{run:%Y%m%d}", "time": f"{run:%H}00", "expver": "0001",
                         "class": "od", "type": "fc" if number is None else "cf" if number == 0 else "pf",
                         "stream": stream, "step": str(step), "levtype": "sfc"}
                if number:
                    entry["number"] = str(number)
                lines.append(json.dumps({**entry, "param": param, "_offset": len(data), "_length": len(message)}))
                data += message
        path.write_bytes(data)
        path.with_suffix(".index").write_text("\n".join(lines) + "\n")
        paths.append(path)
    return paths


def write_noaa_run(root: Path, model: str, run: pd.Timestamp, steps: list[int], members: int = 0) -> list[Path]:
    """A run of NOAA GFS (``model='gfs'``) or GEFS (control and ``members`` perturbed members) under ``root``
    in the NODD buckets' layout, with wgrib2 ``.idx`` inventories; every step has sea-level pressure, 2 m
    temperature, 10 m wind and (but step 0) precipitation accumulated in the last 6 h and since the start."""
    paths = []
    for member in [None] if model == "gfs" else range(members + 1):
        for step in steps:
            if model == "gfs":
                path = root / f"gfs.{run:%Y%m%d}" / f"{run:%H}" / "atmos" / f"gfs.t{run:%H}z.pgrb2.0p25.f{step:03d}"
            else:
                name = "c00" if member == 0 else f"p{member:02d}"
                path = (root / f"gefs.{run:%Y%m%d}" / f"{run:%H}" / "atmos" / "pgrb2ap5"
                        / f"ge{name}.t{run:%H}z.pgrb2a.0p50.f{step:03d}")
            buckets = sorted({start for start in (step - 6, 0) if 0 <= start < step}, reverse=True)
            fields = [("prmsl", 0), ("2t", 0), ("10u", 0)] + [("tp", start) for start in buckets]
            lines, data = [], b""
            for count, (param, start) in enumerate(fields, 1):
                variable, level = NCEP_NAMES[param]
                when = (f"{start}-{step} hour acc fcst" if param == "tp" else "anl" if step == 0
                        else f"{step} hour fcst")
                lines.append(f"{count}:{len(data)}:d={run:%Y%m%d%H}:{variable}:{level}:{when}:"
                             + ("" if member is None else f"ENS={'low-res ctl' if member == 0 else f'+{member}'}"))
                data += grib_message("kwbc", param, run, step, member, start)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            Path(f"{path}.idx").write_text("\n".join(lines) + "\n")
            paths.append(path)
    return paths


def nwis_document(readings: dict[str, list[tuple[str, str]]]) -> dict[str, object]:
    """An NWIS instantaneous-values response (WaterML as JSON) for ``site -> [(dateTime with offset, value)]``."""
    series = []
    for site, values in readings.items():
        series.append({
            "sourceInfo": {"siteName": f"GAUGE {site}", "siteCode": [{"value": site, "network": "NWIS",
                                                                       "agencyCode": "USGS"}]},
            "variable": {"variableCode": [{"value": "00060", "network": "NWIS", "vocabulary": "NWIS:UnitValues"}],
                         "variableName": "Streamflow, ft&#179;/s", "unit": {"unitCode": "ft3/s"},
                         "noDataValue": -999999.0},
            "values": [{"value": [{"value": value, "qualifiers": ["P"], "dateTime": stamp} for stamp, value in values],
                        "qualifier": [{"qualifierCode": "P", "qualifierDescription": "Provisional data subject to "
                                       "revision."}], "method": [{"methodDescription": "", "methodID": 1}]}],
            "name": f"USGS:{site}:00060:00000"})
    return {"name": "ns1:timeSeriesResponseType", "value": {"queryInfo": {}, "timeSeries": series}, "nil": False}


Route = Callable[[dict[str, list[str]]], tuple[int, str, bytes]]


class SourceServer(ThreadingHTTPServer):
    """Serves ``root`` (and ``routes``: path -> function of the query) over HTTP on 127.0.0.1."""

    daemon_threads = True

    def __init__(self, root: Path) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.root = root
        self.routes: dict[str, Route] = {}
        self.log: list[tuple[str, str, str | None]] = []  # method, path (with query), Range header
        self.faults: dict[str, list[str]] = {}  # path suffix -> faults to play, one per GET (see fail)

    @property
    def url(self) -> str:
        """The server's root URL."""
        return f"http://127.0.0.1:{self.server_address[1]}"

    def fail(self, path_suffix: str, *faults: str) -> None:
        """Answer the next GETs of a path ending in ``path_suffix`` with ``faults`` in turn: ``500``/``503``
        (an error status), ``cut`` (the headers of the whole answer, half its body, then the connection closed),
        ``short:N`` (the same without the body's last N bytes), ``trickle:S`` (the whole answer, a byte every S
        seconds), ``redirect:URL`` (a 302 to URL followed by the request's path and query)."""
        self.faults.setdefault(path_suffix, []).extend(faults)

    def gets(self, pattern: str = "") -> list[tuple[str, str | None]]:
        """``(path, Range)`` of the GET requests whose path matches ``pattern``."""
        return [(path, ranges) for method, path, ranges in self.log if method == "GET" and re.search(pattern, path)]


@contextmanager
def serving(root: Path) -> Iterator[SourceServer]:
    """A :class:`SourceServer` on ``root``, running in a thread for the block."""
    server = SourceServer(root)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def closed_port_url() -> str:
    """The URL of a port nothing listens on (a server that is down: connection refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class _Handler(BaseHTTPRequestHandler):
    server: SourceServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_HEAD(self) -> None:
        self._answer(send_body=False)

    def do_GET(self) -> None:
        self._answer(send_body=True)

    def _answer(self, send_body: bool) -> None:
        server = self.server
        server.log.append((self.command, self.path, self.headers.get("Range")))
        split = urlsplit(self.path)
        fault = next((queue.pop(0) for suffix, queue in server.faults.items()
                      if split.path.endswith(suffix) and queue and send_body), None)
        if fault in ("500", "503"):
            return self._plain(int(fault), b"server error\n")
        if fault and fault.startswith("redirect:"):
            self.send_response(302)
            self.send_header("Location", fault.removeprefix("redirect:").rstrip("/") + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        if split.path in server.routes:
            status, kind, body = server.routes[split.path](parse_qs(split.query))
            return self._send(status, {"Content-Type": kind}, body, send_body, fault)
        path = (server.root / split.path.lstrip("/")).resolve()
        if not path.is_relative_to(server.root.resolve()) or not path.is_file():
            return self._plain(404, b"not found\n", send_body)
        data = path.read_bytes()
        ranges = _ranges(self.headers.get("Range"), len(data))
        if ranges is None:
            return self._send(200, {"Accept-Ranges": "bytes"}, data, send_body, fault)
        if len(ranges) == 1:
            first, last = ranges[0]
            return self._send(206, {"Accept-Ranges": "bytes", "Content-Range": f"bytes {first}-{last}/{len(data)}"},
                              data[first:last + 1], send_body, fault)
        boundary = "hydroseqboundary"
        body = b"".join(f"--{boundary}\r\nContent-Type: application/octet-stream\r\n"
                        f"Content-Range: bytes {first}-{last}/{len(data)}\r\n\r\n".encode() + data[first:last + 1]
                        + b"\r\n" for first, last in ranges) + f"--{boundary}--\r\n".encode()
        return self._send(206, {"Content-Type": f"multipart/byteranges; boundary={boundary}"}, body, send_body,
                          fault)

    def _plain(self, status: int, body: bytes, send_body: bool = True) -> None:
        self._send(status, {"Content-Type": "text/plain"}, body, send_body, None)

    def _send(self, status: int, headers: dict[str, str], body: bytes, send_body: bool, fault: str | None) -> None:
        cut = fault == "cut" or (fault or "").startswith("short:")
        self.send_response(status)
        for name, value in {**headers, "Content-Length": str(len(body))}.items():
            self.send_header(name, value)
        if cut:
            self.send_header("Connection", "close")
        self.end_headers()
        if send_body and fault and fault.startswith("trickle:"):
            return self._trickle(body, float(fault.removeprefix("trickle:")))
        if send_body:
            kept = len(body)
            if fault == "cut":
                kept //= 2
            elif cut and fault:
                kept -= int(fault.removeprefix("short:"))
            self.wfile.write(body[:kept])
        if cut:
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)

    def _trickle(self, body: bytes, seconds: float) -> None:
        """``body`` a byte every ``seconds``, until it is sent or the client goes away."""
        try:
            for position in range(len(body)):
                self.wfile.write(body[position:position + 1])
                self.wfile.flush()
                time.sleep(seconds)
        except OSError:
            self.close_connection = True


def _ranges(header: str | None, size: int) -> list[tuple[int, int]] | None:
    """The byte ranges of a ``Range: bytes=a-b,c-`` header, ends included and clipped to the file."""
    if not header or not header.startswith("bytes="):
        return None
    ranges = []
    for part in header.removeprefix("bytes=").split(","):
        first, _, last = part.strip().partition("-")
        ranges.append((int(first), min(int(last), size - 1) if last else size - 1))
    return ranges
