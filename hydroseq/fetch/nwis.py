"""``fetch_gauges``: the discharge readings of USGS gauges from NWIS's Instantaneous Values service.

``GET {root}/nwis/iv/?format=json&sites=S1,S2&parameterCd=00060&startDT=..Z&endDT=..Z&siteStatus=all``
(https://waterservices.usgs.gov/docs/instantaneous-values/), read with ``requests``. dataretrieval's
``nwis.get_iv`` asks the same service, but it is deprecated there (to be removed in 2027 for the new Water
Data APIs), its address is a module constant with no documented way to change it, and it returns a
DataFrame where hydroseq keeps the readings as the service gave them, in UTC.

The readings go to one CSV per UTC day, ``nwis/nwis_iv_<yyyymmdd>.csv``, columns ``station_id`` (as in
the station list), ``time`` (UTC, ISO 8601), ``discharge`` (ft3 s-1, empty where NWIS has no value) and
``qualifiers`` (NWIS's codes: ``P`` provisional, ``A`` approved, ``Ice``, ...): an ingest ``csv`` source
with ``station_column: station_id`` reads them. A day whose file holds the readings up to the day's end
(or up to the issue time, asked again) is not downloaded again.
"""

from __future__ import annotations

import csv
import functools
import io
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import requests

from hydroseq.errors import ConfigError, InputDataError
from hydroseq.fetch.download import NotPublished, RetryPolicy, Transient, classify, retrying
from hydroseq.fetch.products import parse_issue_time
from hydroseq.fetch.session import TimeoutSession
from hydroseq.fetch.store import FetchResult, read_sidecar, write_sidecar
from hydroseq.fileio import atomic_path, make_output_dir

BASE_URL = "https://waterservices.usgs.gov"
LABEL = "USGS NWIS"
SITES_PER_REQUEST = 100
SITE_NUMBER = re.compile(r"^\d{8,15}$")
DISCHARGE = "00060"


def fetch_gauges(stations: str | Path | Sequence[str], issue_time: str | pd.Timestamp, out: str | Path, *,
                 days: int = 1, station_prefix: str = "", base_url: str | None = None, timezone: str = "UTC",
                 policy: RetryPolicy | None = None) -> FetchResult:
    """Download the discharge readings of ``stations`` before ``issue_time`` into ``out/nwis/``, a file a day.

    Parameters
    ----------
    stations
        Station ids, or a file of them (a CSV with a ``station_id`` or ``station`` column, or one id a line);
        each is ``station_prefix`` followed by a USGS site number (8 to 15 digits).
    issue_time
        ISO 8601 (``2026-11-02``: the end of that day in ``timezone``), or a UTC timestamp.
    out
        The raw folder.
    days
        The UTC days to cover, the issue time's last (1: that day only; more picks up late readings).
    station_prefix
        Stripped from each id to give the site number (``camels_`` for ``camels_01013500``).
    base_url
        Another root than ``https://waterservices.usgs.gov`` with the same service.
    timezone
        The zone of an issue time given as a date, or without a zone.
    policy
        Retries and timeouts (default :class:`~hydroseq.fetch.download.RetryPolicy`).

    Returns
    -------
    FetchResult
        The day files written, and those already complete (skipped).

    Raises
    ------
    ConfigError
        A station that is not a site number, ``days`` below 1, a request NWIS refuses.
    InputDataError
        A response that is not NWIS's JSON, or gives discharge in other units than ft3/s.
    UnavailableError
        NWIS cannot be reached after the retries.
    """
    if days < 1:
        raise ConfigError(f"--days: expected 1 or more, got {days}")
    when = issue_time if isinstance(issue_time, pd.Timestamp) else parse_issue_time(issue_time, timezone)
    ids = _station_ids(stations)
    sites = {_site_number(station, station_prefix, stations): station for station in ids}
    identity: dict[str, object] = {"source": "nwis", "parameter": DISCHARGE, "sites": sorted(sites)}
    folder = make_output_dir(Path(out) / "nwis")
    days_wanted = pd.date_range((when - pd.Timedelta(1, "ns")).floor("D") - pd.Timedelta(days=days - 1), periods=days,
                                freq="D")
    wanted = {day: (folder / f"nwis_iv_{day:%Y%m%d}.csv", min(day + pd.Timedelta(days=1), when)) for day in days_wanted}
    due = {day: (path, end) for day, (path, end) in wanted.items() if not _complete(path, identity, end)}
    skipped = tuple(path for day, (path, _) in wanted.items() if day not in due)
    if not due:
        return FetchResult("nwis", when, skipped=skipped)
    root, policy = (base_url or BASE_URL).rstrip("/"), policy or RetryPolicy()
    readings: list[Reading] = []
    size = requests_made = 0
    with TimeoutSession(policy) as session:
        numbers = sorted(sites)
        for first in range(0, len(numbers), SITES_PER_REQUEST):
            query = {"format": "json", "sites": ",".join(numbers[first:first + SITES_PER_REQUEST]),
                     "parameterCd": DISCHARGE, "siteStatus": "all", "startDT": f"{min(due):%Y-%m-%dT%H:%MZ}",
                     "endDT": f"{when:%Y-%m-%dT%H:%MZ}"}
            document, url, received = retrying(LABEL, functools.partial(_ask, session, f"{root}/nwis/iv/", query),
                                               policy)
            readings += [(sites[site], *rest) for site, *rest in _readings(document, url)]
            size, requests_made = size + received, requests_made + 1
    for day, (path, end) in due.items():
        _write_day(path, [reading for reading in readings if day <= reading[1] < end])
        write_sidecar(path, identity, start=f"{day:%Y-%m-%dT%H:%MZ}", end=f"{end:%Y-%m-%dT%H:%MZ}", base_url=root)
    silent = [station for station in ids if station not in {reading[0] for reading in readings}]
    notes = [f"no discharge reading from {len(silent)} station(s) since {min(due):%Y-%m-%d}: "
             + ", ".join(silent[:10]) + (" ..." if len(silent) > 10 else "")] if silent else []
    return FetchResult("nwis", when, written=tuple(path for path, _ in due.values()), skipped=skipped,
                       downloads=requests_made, downloaded_bytes=size, notes=tuple(notes))


# station (or site number), UTC time, discharge as NWIS wrote it ("": no value), qualifiers
Reading = tuple[str, pd.Timestamp, str, str]


def _station_ids(stations: str | Path | Sequence[str]) -> list[str]:
    """Station ids given as a list, or read from a file (a station table's ``station_id`` or ``station``
    column, or one id a line)."""
    if not isinstance(stations, (str, Path)):
        ids = [str(station).strip() for station in stations if str(station).strip()]
        if not ids:
            raise ConfigError("--stations: no station given")
        return list(dict.fromkeys(ids))
    path = Path(stations)
    try:
        lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"--stations {path}: unreadable ({error})") from None
    lines = [line for line in lines if line and not line.startswith("#")]
    header = next(csv.reader(lines[:1]), [])
    column = next((name for name in ("station_id", "station") if name in header), None)
    if column is not None:
        position = header.index(column)
        lines = [row[position].strip() for row in csv.reader(lines[1:])
                 if len(row) > position and row[position].strip()]
    if not lines:
        raise InputDataError(path, "lists no station")
    return list(dict.fromkeys(lines))


def _site_number(station: str, prefix: str, listed_in: object) -> str:
    number = station.removeprefix(prefix)
    if not SITE_NUMBER.match(number):
        where = f" in {listed_in}" if isinstance(listed_in, (str, Path)) else ""
        raise ConfigError(f"--stations: {station!r}{where} is not a USGS site number (8 to 15 digits"
                          + (f" after the prefix {prefix!r})" if prefix else "; --station-prefix strips a prefix)"))
    return number


def _complete(path: Path, identity: dict[str, object], end: pd.Timestamp) -> bool:
    """Whether ``path`` holds the readings of ``identity``'s sites up to ``end``, as its sidecar says."""
    record = read_sidecar(path)
    try:
        return (record is not None and record.get("request") == identity and path.stat().st_size == record["bytes"]
                and pd.Timestamp(str(record["end"])) >= end)
    except (OSError, ValueError, KeyError):
        return False


def _ask(session: requests.Session, url: str, query: dict[str, str]) -> tuple[dict[str, Any], str, int]:
    """One attempt at one request: the JSON document, the URL asked and the bytes received. NWIS answers
    404 when no site has data in the period: an empty document."""
    try:
        response = session.get(url, params=query)
        response.raise_for_status()
    except requests.RequestException as error:
        classified = classify(error, url)
        if classified is None:
            raise
        if isinstance(classified, NotPublished):
            return {}, classified.url, 0
        raise classified from None
    try:
        document = response.json()
    except ValueError:
        kind = "an HTML page" if "html" in response.headers.get("Content-Type", "") else "a response"
        raise Transient(response.url, f"{kind} that is not JSON (the service is down or limiting requests)") from None
    if not isinstance(document, dict):
        raise InputDataError(response.url, "not an NWIS instantaneous-values JSON document")
    return document, response.url, len(response.content)


def _readings(document: dict[str, Any], url: str) -> list[Reading]:
    """``(site number, UTC time, discharge text or "", qualifiers)`` of an IV JSON document (WaterML as JSON:
    ``value.timeSeries[]``, each with ``sourceInfo.siteCode``, ``variable`` and ``values[].value[]``)."""
    readings: list[Reading] = []
    try:
        for series in document.get("value", {}).get("timeSeries", []):
            site = str(series["sourceInfo"]["siteCode"][0]["value"])
            variable = series["variable"]
            unit = variable.get("unit", {}).get("unitCode", "ft3/s")
            if unit != "ft3/s":
                raise InputDataError(url, f"site {site}: discharge in {unit!r}, expected ft3/s")
            missing = float(variable.get("noDataValue", -999999.0))
            blocks = [block for block in series.get("values", []) if block.get("value")]
            for item in blocks[0]["value"] if blocks else []:  # a site with two sensors: the first one's
                value = str(item["value"]).strip()
                readings.append((site, pd.Timestamp(item["dateTime"]).tz_convert("UTC"),
                                 "" if float(value) == missing else value, " ".join(item.get("qualifiers", []))))
    except (KeyError, IndexError, TypeError, ValueError) as error:
        raise InputDataError(url, f"not an NWIS instantaneous-values JSON document ({type(error).__name__}: "
                                  f"{error})") from None
    return readings


def _write_day(path: Path, readings: list[Reading]) -> None:
    """One day's readings as a CSV, by station and time."""
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["station_id", "time", "discharge", "qualifiers"])
    for station, time, value, qualifiers in sorted(readings, key=lambda reading: (reading[0], reading[1])):
        writer.writerow([station, f"{time:%Y-%m-%dT%H:%M:%SZ}", value, qualifiers])
    with atomic_path(path) as tmp:
        tmp.write_text(text.getvalue(), encoding="utf-8")
