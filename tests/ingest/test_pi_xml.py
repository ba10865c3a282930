"""``format: pi_xml``: the bundled basins exported as Delft-FEWS would export them ingest to the same grid values
as their Caravan CSVs, whatever the file's ``timeZone``; a hostile file fails in one line naming the file and
the line (malformed XML, text values, duplicated and unsorted times, wrong units, steps or types, ensembles,
binary values, daylight-saving zones); ``missVal`` is read as missing."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from lxml import etree

from hydroseq.config import IngestConfig, validate_config
from hydroseq.errors import InputDataError
from hydroseq.fileio.pi_xml import read_pi_series
from hydroseq.ingest import ingest
from tests.fixtures import replace_line
from tests.ingest.pi_builders import Series, caravan_series, pi_text, write_pi

STATIONS = ["01022500", "05057200", "11532500"]  # standard time UTC-5, UTC-6, UTC-8
SCHEMA = Path(__file__).resolve().parents[1] / "data" / "fews_pi" / "pi_timeseries.xsd"
VARIABLES = {"streamflow": {"source": "streamflow", "units": "mm/d"},
             "total_precipitation_sum": {"source": "total_precipitation_sum", "units": "mm/d", "aggregation": "sum"}}


def _config(folder: Path, data_dir: Path, source: dict, stations: list[str], end: str) -> IngestConfig:
    table = (data_dir / "stations" / "caravan_camels_us.csv").read_text().splitlines()
    kept = [table[0]] + [line for line in table[1:] if line.split(",")[0] in stations]
    (folder / "stations.csv").write_text("\n".join(kept) + "\n")
    return validate_config({"stations": {"path": str(folder / "stations.csv")}, "sources": [source],
                            "grid": {"frequency": "1D", "timezone": "Etc/GMT+8", "start": "2013-01-01", "end": end}},
                           IngestConfig)


def _pi_source(path: Path, **overrides: object) -> dict:
    return {"path": str(path), "format": "pi_xml", "frequency": "1D", "timestamp": "interval_end",
            "variables": VARIABLES, **overrides}


def _ingested(config: IngestConfig, out: Path) -> xr.Dataset:
    ingest(config, out, show_progress=False)
    with xr.open_dataset(out) as dataset:
        return dataset.load()


@pytest.mark.parametrize("time_zone", [1.0, -5.0])
def test_a_fews_export_of_the_bundled_basins_ingests_to_the_caravan_values(tmp_path, data_dir, time_zone):
    """The real-data case: three basins in three zones, exported in a fourth (CET) or in one of theirs."""
    export = write_pi(tmp_path / "export.xml", caravan_series(data_dir, STATIONS, list(VARIABLES), "2012-12-20",
                                                               "2014-12-31"), time_zone)
    assert etree.XMLSchema(etree.parse(str(SCHEMA))).validate(etree.parse(str(export)))
    from_pi = _ingested(_config(tmp_path, data_dir, _pi_source(export), STATIONS, "2014-12-31"), tmp_path / "pi.nc")
    csv = {"path": str(data_dir / "daily_caravan_camels_us" / "[0-9]*.csv"), "format": "caravan_csv",
           "frequency": "1D", "timestamp": "interval_start", "timezone": "station_standard",
           "time_format": "%Y-%m-%d", "variables": VARIABLES}
    config = _config(tmp_path, data_dir, csv, STATIONS, "2014-12-31")
    config.stations.ids = STATIONS
    from_csv = _ingested(config, tmp_path / "csv.nc")
    for name in VARIABLES:
        assert np.isfinite(from_pi[name].values).mean() > 0.8
        np.testing.assert_array_equal(from_pi[name].values, from_csv[name].values)
    assert np.isnan(from_pi["streamflow"].sel(station="01022500").values[-1])  # NA in Caravan, missVal in the file


def _two_stations(folder: Path, data_dir: Path) -> Path:
    return write_pi(folder / "export.xml", caravan_series(data_dir, STATIONS[:2], list(VARIABLES), "2012-12-31",
                                                          "2013-03-31"), 1.0)


def _line_of(path: Path, pattern: str, occurrence: int = 0) -> int:
    """The 1-based line of the ``occurrence``-th line of ``path`` matching ``pattern``."""
    return [k + 1 for k, line in enumerate(path.read_text().splitlines()) if re.search(pattern, line)][occurrence]



def _event_line(path: Path, occurrence: int = 0) -> int:
    """The line of the event ending the local day 2013-01-05 of the second station (UTC-6: 07:00 in UTC+1)."""
    return _line_of(path, 'event date="2013-01-06" time="07:00:00"', occurrence)


def _damage_event(text: str) -> Callable[[Path], None]:
    """Replace that event of the second station's streamflow by ``text``."""
    return lambda path: replace_line(path, _event_line(path), f"        {text}")


def _duplicate_event(path: Path) -> None:
    line = _event_line(path)
    replace_line(path, line + 1, path.read_text().splitlines()[line - 1])


def _with_a_second_member(path: Path) -> None:
    """The second station's streamflow series repeated as its ensemble member 1."""
    blocks = path.read_text().split("    <series>")
    member_line = "\n            <ensembleMemberIndex>1</ensembleMemberIndex>"
    member = blocks[3].replace("</parameterId>", "</parameterId>" + member_line, 1)
    path.write_text("    <series>".join([*blocks[:4], member, *blocks[4:]]))


def _replace_text(old: str, new: str, count: int = -1) -> Callable[[Path], None]:
    return lambda path: path.write_text(path.read_text().replace(old, new, count))


# name, damage, the line the message names (in the damaged file), fragments of the message
CASES = [
    ("truncated XML", lambda p: p.write_text(p.read_text()[: len(p.read_text()) // 2]),
     lambda p: len(p.read_text().splitlines()), ["not well-formed XML"]),
    ("text as a value", _damage_event('<event date="2013-01-06" time="07:00:00" value="abc"/>'),
     lambda p: _line_of(p, 'value="abc"'), ["'abc' is not a number"]),
    ("duplicated timestamp", _duplicate_event, lambda p: _event_line(p, 1),
     ["location 05057200, parameter streamflow: duplicated timestamp 2013-01-06 06:00:00 UTC"]),
    ("unsorted events", _damage_event('<event date="2012-12-01" time="07:00:00" value="1.0"/>'),
     lambda p: _line_of(p, "2012-12-01"), ["timestamp earlier than the one before (unsorted)"]),
    ("a date that is not one", _damage_event('<event date="2013-13-45" time="07:00:00" value="1.0"/>'),
     lambda p: _line_of(p, "2013-13-45"), ["'2013-13-45 07:00:00' are not yyyy-mm-dd hh:mm:ss"]),
    ("an event without value", _damage_event('<event date="2013-01-06" time="07:00:00"/>'),
     lambda p: _line_of(p, '<event date="2013-01-06" time="07:00:00"/>'), ["an event without its value"]),
    ("wrong units", _replace_text("<units>mm/d</units>", "<units>m3/s</units>", 1),
     lambda p: _line_of(p, "<header>"), ["units 'm3/s' in the file, the source declares 'mm/d'"]),
    ("an hourly series", _replace_text('unit="day"', 'unit="hour"'),
     lambda p: _line_of(p, "<header>"), ["timeStep 1 h is not the source's frequency 1D"]),
    ("instantaneous values", _replace_text("<type>mean", "<type>instantaneous"),
     lambda p: _line_of(p, "<header>"), ["type instantaneous stamps each value at its instant: set the source's "
                                         "timestamp to instantaneous"]),
    ("an ensemble member", _with_a_second_member, lambda p: _line_of(p, "<header>", 3),
     ["2 series of location 05057200, parameter streamflow", "ensemble member 1"]),
    ("a daylight-saving zone", _replace_text("<timeZone>1.0</timeZone>",
                                             "<daylightSavingObservingTimeZone>CET</daylightSavingObservingTimeZone>"),
     lambda p: 3, ["daylight-saving zone 'CET'"]),
    ("another PI document", _replace_text("TimeSeries", "Run"), lambda p: 2, ["not a PI TimeSeries document"]),
]


@pytest.mark.parametrize("name, damage, line, fragments", CASES, ids=[case[0] for case in CASES])
def test_a_hostile_file_fails_in_one_line_naming_file_and_line(tmp_path, data_dir, name, damage, line, fragments):
    export = _two_stations(tmp_path, data_dir)
    damage(export)
    config = _config(tmp_path, data_dir, _pi_source(export), STATIONS[:2], "2013-03-31")
    with pytest.raises(InputDataError) as caught:
        ingest(config, tmp_path / "out" / "data.nc", show_progress=False)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(export))
    assert f"(line {line(export)}" in message, message
    for fragment in fragments:
        assert fragment in message
    assert not (tmp_path / "out" / "data.nc").exists()


def test_binary_values_are_refused(tmp_path, data_dir):
    export = write_pi(tmp_path / "export.xml", [Series("01022500", "streamflow", _days(3), np.ones(3))])
    export.write_text("\n".join(line for line in export.read_text().splitlines() if "<event" not in line))
    export.with_suffix(".bin").write_bytes(np.ones(3, dtype="<f4").tobytes())
    with pytest.raises(InputDataError, match=r"export\.bin, which hydroseq does not read"):
        ingest(_config(tmp_path, data_dir, _pi_source(export, variables={"streamflow": VARIABLES["streamflow"]}),
                       ["01022500"], "2013-01-05"), tmp_path / "data.nc", show_progress=False)


def _days(count: int) -> pd.DatetimeIndex:
    return pd.date_range("2013-01-02T08:00", periods=count, freq="1D")  # the grid's first days (UTC-8) end


def _one_station(tmp_path: Path, data_dir: Path, values: np.ndarray, miss_value: float, **source: object):
    export = write_pi(tmp_path / "one.xml", [Series("01022500", "streamflow", _days(len(values)), values,
                                                    miss_value=miss_value)])
    config = _config(tmp_path, data_dir, _pi_source(export, variables={"streamflow": VARIABLES["streamflow"]},
                                                    **source), ["01022500"], "2013-01-04")
    return export, config


def test_miss_val_is_missing_and_an_undeclared_code_is_implausible(tmp_path, data_dir):
    values = np.array([1.5, -999.0, 2.5, 3.0])
    export, config = _one_station(tmp_path, data_dir, values, -999.0)
    gridded = _ingested(config, tmp_path / "a.nc")["streamflow"].values[0]
    np.testing.assert_array_equal(gridded, np.array([1.5, np.nan, 2.5, 3.0], dtype=np.float32))
    export.write_text(export.read_text().replace("<missVal>-999.0</missVal>", "<missVal>NaN</missVal>"))
    with pytest.raises(InputDataError, match=r"\(line 16, 2013-01-03 08:00:00\+00:00\).*-999"):
        ingest(config, tmp_path / "b.nc", show_progress=False)


def test_a_file_without_time_zone_is_read_in_the_sources_zone_and_a_contradicting_zone_fails(tmp_path, data_dir):
    values = np.array([1.0, 2.0, 3.0, 4.0])
    export, config = _one_station(tmp_path, data_dir, values, -999.0)
    utc = _ingested(config, tmp_path / "utc.nc")["streamflow"].values[0]
    local = _days(4) - np.timedelta64(8, "h")  # the same instants as wall-clock times of UTC-8
    write_pi(export, [Series("01022500", "streamflow", local, values)], time_zone=None)
    config.sources[0] = config.sources[0].model_copy(update={"timezone": "Etc/GMT+8"})
    np.testing.assert_array_equal(_ingested(config, tmp_path / "local.nc")["streamflow"].values[0], utc)
    write_pi(export, [Series("01022500", "streamflow", _days(4), values)], time_zone=1.0)
    with pytest.raises(InputDataError, match=r"UTC offset \+01:00 contradicts the source's timezone Etc/GMT\+8"):
        ingest(config, tmp_path / "bad.nc", show_progress=False)


def test_every_series_is_read_with_its_qualifiers_and_members_whatever_the_pi_version(tmp_path):
    stamps = _days(2)
    member = ["<ensembleId>E</ensembleId>", "<ensembleMemberIndex>2</ensembleMemberIndex>"]
    text = pi_text([Series("A", "Q", stamps, np.array([1.0, 2.0]), extra_header=["<qualifierId>q05</qualifierId>"]),
                    Series("A", "Q", stamps, np.array([3.0, np.nan]), extra_header=member)], time_zone=5.5)
    schema = etree.XMLSchema(etree.parse(str(SCHEMA)))
    assert schema.validate(etree.fromstring(text.encode()))
    text = text.replace('version="1.14"', 'version="1.22"').replace('value="1.0"', 'value="NaN"')  # NaN: missing
    assert not schema.validate(etree.fromstring(text.encode()))  # a PI version later than the schemas know
    (tmp_path / "f.xml").write_text(text)
    document = read_pi_series(tmp_path / "f.xml")
    assert [(s.qualifiers, s.member) for s in document.series] == [(("q05",), None), ((), "2")]
    assert np.isnan(document.series[0].values[0]) and document.series[0].values[1] == 2.0
    assert document.offset == np.timedelta64(330, "m")
    assert list(document.series[1].stamps) == list(stamps) and np.isnan(document.series[1].values[1])


def test_a_nonequidistant_series_is_an_irregular_source(tmp_path, data_dir):
    stamps = pd.DatetimeIndex(["2013-01-02T03:00", "2013-01-02T07:15", "2013-01-03T01:00"])
    export = write_pi(tmp_path / "q.xml", [Series("01022500", "Q.obs", stamps, np.array([2.0, 4.0, 9.0]),
                                                  kind="instantaneous", step=None, units="m3/s")], time_zone=-8.0)
    source = _pi_source(export, frequency="irregular", timestamp="instantaneous",
                        variables={"q": {"source": "Q.obs", "units": "m3/s"}})
    gridded = _ingested(_config(tmp_path, data_dir, source, ["01022500"], "2013-01-02"), tmp_path / "q.nc")["q"]
    np.testing.assert_array_equal(gridded.values[0], np.array([3.0, 9.0], dtype=np.float32))  # days end 08:00 UTC
