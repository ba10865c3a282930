"""USGS NWIS instantaneous values against a local server answering ``/nwis/iv/`` with WaterML as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from hydroseq.errors import ConfigError, UnavailableError
from hydroseq.fetch import RetryPolicy, fetch_gauges
from tests.fetch.sources import SourceServer, closed_port_url, nwis_document

# Eastern time (-05:00): 2026-11-01T20:00-05:00 is 2026-11-02T01:00Z
READINGS = {"01646500": [("2026-11-01T18:45:00.000-05:00", "5030"), ("2026-11-01T20:00:00.000-05:00", "5010"),
                         ("2026-11-02T06:00:00.000-05:00", "-999999")],
            "01013500": [("2026-11-02T00:00:00.000-05:00", "1.52")]}


def _serve(server: SourceServer, readings: dict[str, list[tuple[str, str]]] = READINGS) -> list[dict[str, list[str]]]:
    """Answer /nwis/iv/ with ``readings`` (of the sites asked for); returns the queries it got."""
    queries: list[dict[str, list[str]]] = []

    def answer(query: dict[str, list[str]]) -> tuple[int, str, bytes]:
        queries.append(query)
        sites = query["sites"][0].split(",")
        body = json.dumps(nwis_document({site: values for site, values in readings.items() if site in sites}))
        return 200, "application/json;charset=UTF-8", body.encode()

    server.routes["/nwis/iv/"] = answer
    return queries


def test_the_days_readings_go_to_one_csv_in_utc(server: SourceServer, tmp_path: Path, fast: RetryPolicy) -> None:
    queries = _serve(server)
    stations = tmp_path / "stations.csv"
    stations.write_text("station_id,name\nusgs_01646500,Potomac\nusgs_01013500,Fish River\nusgs_02000000,Silent\n")
    result = fetch_gauges(stations, "2026-11-02T12:00Z", tmp_path / "raw", station_prefix="usgs_",
                          base_url=server.url, policy=fast)
    day = tmp_path / "raw" / "nwis" / "nwis_iv_20261102.csv"
    assert result.written == (day,) and result.skipped == () and result.downloads == 1
    assert queries == [{"format": ["json"], "sites": ["01013500,01646500,02000000"], "parameterCd": ["00060"],
                        "siteStatus": ["all"], "startDT": ["2026-11-02T00:00Z"], "endDT": ["2026-11-02T12:00Z"]}]
    # the reading of 18:45 -05:00 is the day before in UTC; -999999 is NWIS's "no value"
    assert day.read_text().splitlines() == ["station_id,time,discharge,qualifiers",
                                            "usgs_01013500,2026-11-02T05:00:00Z,1.52,P",
                                            "usgs_01646500,2026-11-02T01:00:00Z,5010,P",
                                            "usgs_01646500,2026-11-02T11:00:00Z,,P"]
    assert result.notes == ("no discharge reading from 1 station(s) since 2026-11-02: usgs_02000000",)
    sidecar = json.loads((day.parent / "nwis_iv_20261102.fetch.json").read_text())
    assert sidecar["end"] == "2026-11-02T12:00Z" and sidecar["request"]["sites"] == ["01013500", "01646500",
                                                                                     "02000000"]


def test_a_day_already_complete_is_not_asked_again(server: SourceServer, tmp_path: Path, fast: RetryPolicy) -> None:
    queries = _serve(server)
    sites = ["01646500", "01013500"]
    first = fetch_gauges(sites, "2026-11-02T12:00Z", tmp_path, days=2, base_url=server.url, policy=fast)
    assert [path.name for path in first.written] == ["nwis_iv_20261101.csv", "nwis_iv_20261102.csv"]
    assert queries[-1]["startDT"] == ["2026-11-01T00:00Z"]
    again = fetch_gauges(sites, "2026-11-02T12:00Z", tmp_path, days=2, base_url=server.url, policy=fast)
    assert again.written == () and again.skipped == first.written and len(queries) == 1
    later = fetch_gauges(sites, "2026-11-02T18:00Z", tmp_path, days=2, base_url=server.url, policy=fast)
    assert [path.name for path in later.written] == ["nwis_iv_20261102.csv"]  # the day before is complete
    assert [path.name for path in later.skipped] == ["nwis_iv_20261101.csv"]
    assert queries[-1]["startDT"] == ["2026-11-02T00:00Z"] and queries[-1]["endDT"] == ["2026-11-02T18:00Z"]
    assert pd.read_csv(later.skipped[0], dtype=str)["station_id"].tolist() == ["01646500"]


def test_a_failed_or_cut_answer_is_asked_again(server: SourceServer, tmp_path: Path, fast: RetryPolicy) -> None:
    queries = _serve(server)
    server.fail("/nwis/iv/", "503", "cut")
    result = fetch_gauges(["01646500"], "2026-11-02T12:00Z", tmp_path, base_url=server.url, policy=fast)
    assert len(server.gets("/nwis/iv/")) == 3 and len(queries) == 2  # 503, cut, answered
    assert len(pd.read_csv(result.written[0])) == 2


def test_an_html_page_instead_of_json_is_retried_then_one_line(server: SourceServer, tmp_path: Path,
                                                               fast: RetryPolicy) -> None:
    server.routes["/nwis/iv/"] = lambda query: (200, "text/html", b"<html><body>Service down</body></html>")
    with pytest.raises(UnavailableError, match=r"^USGS NWIS: cannot reach http://127\.0\.0\.1:\d+/nwis/iv/\?format=json"
                                               r".* after 3 attempts \(an HTML page that is not JSON"):
        fetch_gauges(["01646500"], "2026-11-02T12:00Z", tmp_path, base_url=server.url, policy=fast)
    assert not (tmp_path / "nwis" / "nwis_iv_20261102.csv").exists()


def test_a_service_that_is_down_is_one_line(tmp_path: Path, fast: RetryPolicy) -> None:
    down = closed_port_url()
    with pytest.raises(UnavailableError) as failure:
        fetch_gauges(["01646500"], "2026-11-02T12:00Z", tmp_path, base_url=down, policy=fast)
    assert str(failure.value).startswith(f"USGS NWIS: cannot reach {down}/nwis/iv/?format=json&sites=01646500")
    assert str(failure.value).endswith("after 3 attempts (Connection refused)")


def test_a_station_that_is_not_a_site_number_is_a_config_error(tmp_path: Path) -> None:
    listed = tmp_path / "ids.txt"
    listed.write_text("# gauges\n01646500\ncamels_01013500\n")
    with pytest.raises(ConfigError, match=rf"'camels_01013500' in {listed} is not a USGS site number"):
        fetch_gauges(listed, "2026-11-02", tmp_path)
