"""Delft-FEWS PI-XML time series documents, read and written: the format a FEWS General Adapter exchanges.

A ``TimeSeries`` document (namespace :data:`NAMESPACE`) holds ``series``, each a header (``type``,
``locationId``, ``parameterId``, ``qualifierId``, ``ensembleId`` / ``ensembleMemberIndex``, ``timeStep``,
``startDate``, ``endDate``, ``forecastDate``, ``missVal``, ``units``, ...) and its ``event`` elements
(``date``, ``time``, ``value``). Dates and times are wall-clock times of one fixed offset, the document's
``timeZone`` in decimal hours from UTC (``0.0``: UTC); a document without one leaves the zone to its reader.

Files are parsed with lxml without resolving entities or fetching anything (a file from elsewhere cannot make
the parser read local files or the network); a file that is not well-formed XML, or a header or an event that
cannot be read, is an :class:`~hydroseq.errors.InputDataError` naming the line. Documents are written in UTC,
version :data:`VERSION`, valid against the published ``pi_timeseries.xsd`` (``tests/data/fews_pi``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from lxml import etree  # type: ignore[import-untyped]  # no type information (lxml-stubs not installed)

from hydroseq.errors import InputDataError
from hydroseq.fileio.atomic import write_bytes_atomic

NAMESPACE = "http://www.wldelft.nl/fews/PI"
SCHEMA_LOCATION = "http://fews.wldelft.nl/schemas/version1.0/pi-schemas/pi_timeseries.xsd"
VERSION = "1.14"  # the newest PI version the published schemas we validate against define (tests/data/fews_pi)
STEP_UNITS = {"second": "s", "minute": "min", "hour": "h", "day": "D", "week": "W"}
KINDS = ("instantaneous", "mean", "accumulative")
_XSI = "http://www.w3.org/2001/XMLSchema-instance"
_NAMED_ZONE = "daylightSavingObservingTimeZone"  # a named zone with daylight saving (later PI versions)


@dataclass(frozen=True)
class PiSeries:
    """One ``series``: its header fields and its events.

    ``stamps`` are UTC when the document has a ``timeZone`` (read: else wall-clock times as written),
    ``values`` float64 (NaN: missing, read from ``missVal`` or ``NaN``), ``step`` None for a ``nonequidistant``
    series, ``member`` the ``ensembleMemberIndex`` (or ``ensembleMemberId``). ``lines`` and ``header_line`` are
    where a read series stands in its file; the fields after them are written only (when set).
    """

    location: str
    parameter: str
    kind: str
    step: pd.Timedelta | None
    stamps: pd.DatetimeIndex
    values: np.ndarray
    qualifiers: tuple[str, ...] = ()
    member: str | None = None
    units: str | None = None
    forecast_date: pd.Timestamp | None = None
    lines: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    header_line: int = 0
    ensemble_id: str | None = None
    long_name: str | None = None
    station_name: str | None = None
    lat: float | None = None
    lon: float | None = None

    @property
    def label(self) -> str:
        """``location 01022500, parameter Q.obs`` (with its qualifiers and member): how messages name it."""
        extra = "".join(f", qualifier {qualifier}" for qualifier in self.qualifiers)
        return f"location {self.location}, parameter {self.parameter}{extra}" + (
            f", ensemble member {self.member}" if self.member is not None else "")


@dataclass(frozen=True)
class PiDocument:
    """A PI time series file: its series in order and its ``timeZone`` (None: none given)."""

    series: tuple[PiSeries, ...]
    offset: pd.Timedelta | None


def tag(name: str) -> str:
    """``{http://www.wldelft.nl/fews/PI}name``: an element name in the PI namespace."""
    return f"{{{NAMESPACE}}}{name}"


def parse_document(path: str | Path, root: str) -> Any:
    """The root element of the PI document ``path``, checked to be ``<root>`` in the PI namespace."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, remove_comments=True)
    try:
        element = etree.parse(str(path), parser).getroot()
    except etree.XMLSyntaxError as error:
        raise InputDataError(path, f"not well-formed XML: {error.msg}", f"line {error.lineno}") from None
    except OSError as error:
        raise InputDataError(path, f"cannot be read: {error}") from None
    if element.tag != tag(root):
        raise InputDataError(path, f"not a PI {root} document: its root element is {element.tag} (expected {root} "
                             f"in the namespace {NAMESPACE})", f"line {element.sourceline}")
    return element


def utc_offset(path: str | Path, root: Any) -> pd.Timedelta | None:
    """The document's ``timeZone`` as a UTC offset (None when it has none); a daylight-saving zone is refused."""
    named = root.find(tag(_NAMED_ZONE))
    if named is not None:
        raise InputDataError(path, f"times in the daylight-saving zone {named.text!r}: hydroseq reads PI files "
                             "with a fixed offset only; export them with a timeZone (0.0: UTC)",
                             f"line {named.sourceline}")
    zone = root.find(tag("timeZone"))
    if zone is None:
        return None
    try:
        hours = float(zone.text or "0.0")
    except ValueError:
        hours = float("nan")
    if not abs(hours) <= 14:
        raise InputDataError(path, f"timeZone {zone.text!r} is not an offset in hours from UTC (e.g. 0.0 or -5.0)",
                             f"line {zone.sourceline}")
    return pd.Timedelta(seconds=round(hours * 3600))


def wall_clock(path: str | Path, elements: Sequence[Any]) -> pd.DatetimeIndex:
    """The ``date`` and ``time`` attributes of ``elements`` as wall-clock times."""
    texts = pd.Series([f"{element.get('date')} {element.get('time')}" for element in elements], dtype=object)
    stamps = pd.to_datetime(texts, format="%Y-%m-%d %H:%M:%S", errors="coerce")
    if stamps.isna().any():
        bad = int(np.argmax(stamps.isna().to_numpy()))
        name = elements[bad].tag.split("}")[-1]
        raise InputDataError(path, f"{name}: date and time {texts[bad]!r} are not yyyy-mm-dd hh:mm:ss",
                             f"line {elements[bad].sourceline}")
    return pd.DatetimeIndex(stamps).as_unit("ns")


def read_pi_series(path: str | Path) -> PiDocument:
    """Every series of the PI time series file ``path``, times converted to UTC by its ``timeZone``."""
    root = parse_document(path, "TimeSeries")
    offset = utc_offset(path, root)
    return PiDocument(tuple(_read_series(path, element, offset or pd.Timedelta(0))
                            for element in root.iterfind(tag("series"))), offset)


def _read_series(path: str | Path, element: Any, offset: pd.Timedelta) -> PiSeries:
    header = element.find(tag("header"))
    if header is None:
        raise InputDataError(path, "a series without a header", f"line {element.sourceline}")
    texts = {name: _text(path, header, name) for name in ("type", "locationId", "parameterId")}
    if texts["type"] not in KINDS:
        raise InputDataError(path, f"header type {texts['type']!r}: expected {', '.join(KINDS)}",
                             f"line {header.sourceline}")
    member = header.find(tag("ensembleMemberIndex"))
    member = header.find(tag("ensembleMemberId")) if member is None else member
    events = element.findall(tag("event"))
    values = _values(path, events)
    miss_value = header.find(tag("missVal"))
    missing = float("nan") if miss_value is None or not (miss_value.text or "").strip() else float(miss_value.text)
    values[values == missing] = np.nan
    units, forecast_date = header.find(tag("units")), header.find(tag("forecastDate"))
    return PiSeries(
        location=texts["locationId"], parameter=texts["parameterId"], kind=texts["type"], step=_step(path, header),
        stamps=wall_clock(path, events) - offset, values=values,
        qualifiers=tuple((qualifier.text or "").strip() for qualifier in header.findall(tag("qualifierId"))),
        member=None if member is None else (member.text or "").strip(),
        units=None if units is None or not (units.text or "").strip() else units.text.strip(),
        forecast_date=None if forecast_date is None else wall_clock(path, [forecast_date])[0] - offset,
        lines=np.array([event.sourceline for event in events], dtype=np.int64), header_line=header.sourceline)


def _text(path: str | Path, header: Any, name: str) -> str:
    element = header.find(tag(name))
    if element is None or not (element.text or "").strip():
        raise InputDataError(path, f"a series header without {name}", f"line {header.sourceline}")
    return str(element.text).strip()


def _step(path: str | Path, header: Any) -> pd.Timedelta | None:
    element = header.find(tag("timeStep"))
    unit = None if element is None else element.get("unit")
    if unit == "nonequidistant":
        return None
    if unit not in STEP_UNITS:
        line = header.sourceline if element is None else element.sourceline
        raise InputDataError(path, f"timeStep unit {unit!r}: hydroseq reads {', '.join(STEP_UNITS)} steps and "
                             "nonequidistant series", f"line {line}")
    multiplier, divider = int(element.get("multiplier", "1")), int(element.get("divider", "1"))
    return pd.Timedelta(multiplier, STEP_UNITS[unit]) / divider


def _values(path: str | Path, events: list[Any]) -> np.ndarray:
    for attribute in ("date", "time", "value"):
        absent = [event for event in events if event.get(attribute) is None]
        if absent:
            raise InputDataError(path, f"an event without its {attribute}", f"line {absent[0].sourceline}")
    texts = [event.get("value") for event in events]
    try:
        return np.asarray(texts, dtype=np.float64)
    except ValueError:
        bad = next(k for k, text in enumerate(texts) if not _is_number(text))
        raise InputDataError(path, f"event value {texts[bad]!r} is not a number",
                             f"line {events[bad].sourceline}") from None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def write_pi_series(path: str | Path, series: Sequence[PiSeries], miss_value: float, source_system: str) -> Path:
    """Write ``series`` (UTC stamps, regular steps) as a PI time series document in UTC, atomically.

    Each series holds an event per stamp, ``miss_value`` where its value is missing; values are written as the
    shortest text that reads back as the same float32.
    """
    root = etree.Element(tag("TimeSeries"), nsmap={None: NAMESPACE, "xsi": _XSI}, version=VERSION)
    root.set(f"{{{_XSI}}}schemaLocation", f"{NAMESPACE} {SCHEMA_LOCATION}")
    etree.SubElement(root, tag("timeZone")).text = "0.0"
    for one in series:
        element = etree.SubElement(root, tag("series"))
        header = etree.SubElement(element, tag("header"))
        _add(header, "type", one.kind)
        _add(header, "locationId", one.location)
        _add(header, "parameterId", one.parameter)
        for qualifier in one.qualifiers:
            _add(header, "qualifierId", qualifier)
        if one.member is not None:
            _add(header, "ensembleId", one.ensemble_id)
            _add(header, "ensembleMemberIndex", one.member)
        assert one.step is not None, "PI series are written with a regular step"
        etree.SubElement(header, tag("timeStep"), _time_step(one.step))
        dates, times = _date_and_time(one.stamps)
        etree.SubElement(header, tag("startDate"), date=dates[0], time=times[0])
        etree.SubElement(header, tag("endDate"), date=dates[-1], time=times[-1])
        if one.forecast_date is not None:
            issue_date, issue_time = _date_and_time(pd.DatetimeIndex([one.forecast_date]))
            etree.SubElement(header, tag("forecastDate"), date=issue_date[0], time=issue_time[0])
        _add(header, "missVal", repr(float(miss_value)))
        optional = {"longName": one.long_name, "stationName": one.station_name, "lat": one.lat, "lon": one.lon,
                    "units": one.units, "sourceSystem": source_system}
        for name, text in optional.items():
            if text is not None and not (isinstance(text, float) and np.isnan(text)):
                _add(header, name, repr(text) if isinstance(text, float) else text)
        for date, time, value in zip(dates, times, np.asarray(one.values, dtype=np.float32), strict=True):
            text = repr(float(miss_value)) if np.isnan(value) else np.format_float_positional(value, unique=True,
                                                                                              trim="-")
            etree.SubElement(element, tag("event"), date=date, time=time, value=text)
    write_bytes_atomic(path, etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True))
    return Path(path)


def _add(parent: Any, name: str, text: str | None) -> None:
    etree.SubElement(parent, tag(name)).text = text


def _date_and_time(stamps: pd.DatetimeIndex) -> tuple[list[str], list[str]]:
    text = np.datetime_as_string(np.asarray(stamps, dtype="datetime64[s]"))
    return [value[:10] for value in text], [value[11:19] for value in text]


def _time_step(step: pd.Timedelta) -> dict[str, str]:
    """PI ``timeStep`` attributes: the largest of day, hour, minute, second that divides ``step``."""
    for unit, length in (("day", pd.Timedelta(days=1)), ("hour", pd.Timedelta(hours=1)),
                         ("minute", pd.Timedelta(minutes=1))):
        if step % length == pd.Timedelta(0):
            return {"unit": unit, "multiplier": str(step // length)}
    return {"unit": "second", "multiplier": str(int(step.total_seconds()))}
