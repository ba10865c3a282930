"""PI-XML files for the tests, written as a Delft-FEWS General Adapter exports them (one element per line),
independently of hydroseq's own PI writer: time series from values, the bundled Caravan basins as a FEWS
export, and a PI run file."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from hydroseq.ingest.timegrid import standard_zone

HEADER = ('<?xml version="1.0" encoding="UTF-8"?>\n'
          '<TimeSeries xmlns="http://www.wldelft.nl/fews/PI" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
          'xsi:schemaLocation="http://www.wldelft.nl/fews/PI '
          'http://fews.wldelft.nl/schemas/version1.0/pi-schemas/pi_timeseries.xsd" version="1.14">')
CARAVAN_TYPES = {"streamflow": "mean", "total_precipitation_sum": "accumulative", "temperature_2m_mean": "mean",
                 "potential_evaporation_sum": "accumulative"}


@dataclass
class Series:
    """One PI series: UTC ``stamps`` and ``values`` (NaN written as ``missVal``) and its header fields."""

    location: str
    parameter: str
    stamps: pd.DatetimeIndex
    values: np.ndarray
    kind: str = "mean"
    step: tuple[str, int] | None = ("day", 1)  # None: nonequidistant
    units: str | None = "mm/d"
    miss_value: float = -999.0
    extra_header: list[str] = field(default_factory=list)  # e.g. ["<ensembleMemberIndex>0</ensembleMemberIndex>"]


def pi_text(series: list[Series], time_zone: float | None = 0.0) -> str:
    """A PI time series document; times written in ``time_zone`` (hours from UTC; None: no timeZone, UTC)."""
    shift = pd.Timedelta(hours=time_zone or 0.0)
    lines = [HEADER] + ([f"    <timeZone>{time_zone:.1f}</timeZone>"] if time_zone is not None else [])
    for one in series:
        local = one.stamps + shift
        step = ('<timeStep unit="nonequidistant"/>' if one.step is None
                else f'<timeStep unit="{one.step[0]}" multiplier="{one.step[1]}"/>')
        lines += ["    <series>", "        <header>", f"            <type>{one.kind}</type>",
                  f"            <locationId>{one.location}</locationId>",
                  f"            <parameterId>{one.parameter}</parameterId>",
                  *(f"            {line}" for line in one.extra_header), f"            {step}",
                  f'            <startDate date="{local[0]:%Y-%m-%d}" time="{local[0]:%H:%M:%S}"/>',
                  f'            <endDate date="{local[-1]:%Y-%m-%d}" time="{local[-1]:%H:%M:%S}"/>',
                  f"            <missVal>{one.miss_value}</missVal>",
                  *([f"            <units>{one.units}</units>"] if one.units is not None else []),
                  "        </header>"]
        for stamp, value in zip(local, one.values, strict=True):
            text = repr(one.miss_value) if np.isnan(value) else repr(float(value))
            lines.append(f'        <event date="{stamp:%Y-%m-%d}" time="{stamp:%H:%M:%S}" value="{text}" flag="0"/>')
        lines.append("    </series>")
    return "\n".join([*lines, "</TimeSeries>"]) + "\n"


def write_pi(path: Path, series: list[Series], time_zone: float | None = 0.0) -> Path:
    """:func:`pi_text` written to ``path``."""
    path.write_text(pi_text(series, time_zone))
    return path


def caravan_series(data_dir: Path, stations: list[str], variables: list[str], first: str, last: str) -> list[Series]:
    """The bundled Caravan basins' days ``first..last`` as FEWS exports them: each local standard-time day's
    value stamped at the day's end (UTC here), one series per basin and variable, ``NA`` as ``missVal``."""
    table = pd.read_csv(data_dir / "stations" / "caravan_camels_us.csv", dtype={"station_id": str})
    zones = dict(zip(table["station_id"], table["timezone"], strict=True))
    series = []
    for station in stations:
        frame = pd.read_csv(data_dir / "daily_caravan_camels_us" / f"{station}.csv", parse_dates=["date"])
        frame = frame[(frame["date"] >= first) & (frame["date"] <= last)]
        day_ends = pd.DatetimeIndex(frame["date"] + pd.Timedelta(days=1))
        utc = day_ends.tz_localize(standard_zone(zones[station])).tz_convert("UTC").tz_localize(None)
        series += [Series(station, name, utc, frame[name].to_numpy(dtype=float), kind=CARAVAN_TYPES[name],
                          units="degC" if name == "temperature_2m_mean" else "mm/d") for name in variables]
    return series


def run_file_text(start: str, end: str, time0: str, time_zone: float = 0.0) -> str:
    """A PI run file as the General Adapter's exportRunFileActivity writes it (times given in ``time_zone``)."""
    def when(name: str, text: str) -> str:
        stamp = pd.Timestamp(text)
        return f'    <{name} date="{stamp:%Y-%m-%d}" time="{stamp:%H:%M:%S}"/>'

    return "\n".join([
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<Run xmlns="http://www.wldelft.nl/fews/PI" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://www.wldelft.nl/fews/PI http://fews.wldelft.nl/schemas/version1.0/pi-schemas/'
        'pi_run.xsd" version="1.5">',
        "    <logLevel>info</logLevel>", f"    <timeZone>{time_zone:.1f}</timeZone>",
        when("startDateTime", start), when("endDateTime", end), when("time0", time0),
        "    <workDir>/fews/Modules/hydroseq</workDir>",
        "    <inputTimeSeriesFile>/fews/Modules/hydroseq/input/forcing.xml</inputTimeSeriesFile>",
        "    <outputDiagnosticFile>/fews/Modules/hydroseq/diagnostics.xml</outputDiagnosticFile>",
        "    <outputTimeSeriesFile>/fews/Modules/hydroseq/output/forecast.xml</outputTimeSeriesFile>",
        "</Run>"]) + "\n"
