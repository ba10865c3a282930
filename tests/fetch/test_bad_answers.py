"""``hydroseq fetch`` against a local server that answers badly: an index that is not JSON lines, an HTML page
(a captive portal's, a proxy's) where an index, an inventory or GRIB data was expected, a file 10 bytes shorter
than its index says, a field name that would leave the raw folder. Each ends in one line: the source retried
and then unavailable (exit 6) saying what came, or the option refused (exit 3); never a traceback (exit 70)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from hydroseq.cli import main
from hydroseq.errors import ExitCode
from tests.fetch.sources import SourceServer, write_ecmwf_run, write_noaa_run

RUN = pd.Timestamp("2026-11-02T00:00Z")
ECMWF = ["fetch", "--source", "ecmwf-hres", "--issue-time", "2026-11-02T12:00Z", "--steps", "0/12/6"]
GFS = ["fetch", "--source", "gfs", "--issue-time", "2026-11-02T06:00Z", "--steps", "6/12/6"]
PORTAL = b"<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>Accept the terms to go on</body></html>\n"


def _fetch(server: SourceServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str],
           *options: str) -> tuple[int, str]:
    status = main(["-q", *command, "--out", str(tmp_path / "raw"), "--base-url", server.url, "--attempts", "2",
                   "--retry-wait", "0", *options])
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "Traceback" not in error, error
    assert not list((tmp_path / "raw").glob("*/*.grib2")), "no run file may be written (finished pieces may stay)"
    return status, error


def _portal(server: SourceServer, path: str) -> None:
    server.routes[path] = lambda query: (200, "text/html; charset=utf-8", PORTAL)


def test_an_html_page_for_the_ecmwf_index_is_retried_then_unavailable(server, tmp_path, capsys) -> None:
    write_ecmwf_run(server.root, RUN, [0, 6, 12])
    index = "/20261102/00z/ifs/0p25/oper/20261102000000-0h-oper-fc.index"
    _portal(server, index)
    status, error = _fetch(server, tmp_path, capsys, ECMWF)
    assert status == ExitCode.UNAVAILABLE, error
    assert error.startswith(f"hydroseq fetch: error: ECMWF open data (HRES): cannot reach {server.url}{index} after "
                            "2 attempts (not an index of JSON lines")
    assert error.endswith("an HTML page (a captive portal's or a proxy's?))")
    assert len(server.gets(index)) == 2


def test_an_index_that_is_not_json_lines_is_retried_then_unavailable(server, tmp_path, capsys) -> None:
    paths = write_ecmwf_run(server.root, RUN, [0, 6, 12])
    paths[1].with_suffix(".index").write_text('{"param": "tp", "_offset": 0\n')  # cut inside its first line
    status, error = _fetch(server, tmp_path, capsys, ECMWF)
    assert status == ExitCode.UNAVAILABLE, error
    assert "20261102000000-6h-oper-fc.index after 2 attempts (not an index of JSON lines (Expecting ',' delimiter" \
           in error and error.endswith("""b'{"param": "tp", "_offset": 0\\n')""")


@pytest.mark.parametrize("source", ["ecmwf-hres", "gfs"])
def test_an_html_page_for_grib_data_is_retried_then_unavailable(server, tmp_path, capsys, source) -> None:
    if source == "gfs":
        write_noaa_run(server.root, "gfs", RUN, [6, 12])
        data = "/gfs.20261102/00/atmos/gfs.t00z.pgrb2.0p25.f006"
    else:
        write_ecmwf_run(server.root, RUN, [0, 6, 12])
        data = "/20261102/00z/ifs/0p25/oper/20261102000000-6h-oper-fc.grib2"
    (server.root / data.lstrip("/")).write_bytes(PORTAL * 20)  # where the byte ranges of the index point
    status, error = _fetch(server, tmp_path, capsys, GFS if source == "gfs" else ECMWF)
    assert status == ExitCode.UNAVAILABLE, error
    assert error.endswith("after 2 attempts (not GRIB data: an HTML page (a captive portal's or a proxy's?))"), error


def test_an_html_page_for_the_noaa_inventory_is_retried_then_unavailable(server, tmp_path, capsys) -> None:
    write_noaa_run(server.root, "gfs", RUN, [6, 12])
    inventory = "/gfs.20261102/00/atmos/gfs.t00z.pgrb2.0p25.f006.idx"
    _portal(server, inventory)
    status, error = _fetch(server, tmp_path, capsys, GFS)
    assert status == ExitCode.UNAVAILABLE, error
    assert error.startswith(f"hydroseq fetch: error: NOAA GFS: cannot reach {server.url}{inventory} after 2 attempts "
                            "(not a wgrib2 inventory")
    assert error.endswith("an HTML page (a captive portal's or a proxy's?))")


@pytest.mark.parametrize("source", ["ecmwf-hres", "gfs"])
def test_a_file_10_bytes_short_is_truncated_expected_n_bytes_got_m(server, tmp_path, capsys, source) -> None:
    if source == "gfs":
        paths = write_noaa_run(server.root, "gfs", RUN, [6, 12])
    else:
        paths = write_ecmwf_run(server.root, RUN, [0, 6, 12])
    size = paths[1].stat().st_size
    paths[1].write_bytes(paths[1].read_bytes()[:-10])  # its index still gives the last field's whole length
    status, error = _fetch(server, tmp_path, capsys, GFS if source == "gfs" else ECMWF)
    assert status == ExitCode.UNAVAILABLE, error
    assert "after 2 attempts (the file was truncated: " in error, error
    if source == "ecmwf-hres":  # its last field, tp then 2t, asked alone: 2t is the last message
        assert error.endswith("expected 239 bytes, got 229)"), error
    else:  # the last range runs to the end of the file: the GRIB message's own length tells
        assert error.endswith("GRIB message 2 at byte 215 expects 239 bytes, got 229)"), error
    assert size - 10 == paths[1].stat().st_size


@pytest.mark.parametrize("source, command", [("ecmwf-hres", ECMWF), ("gfs", GFS)])
@pytest.mark.parametrize("param", ["../tp", "tp/../../x", ".hidden"])
def test_a_field_name_that_is_no_short_name_is_refused(server, tmp_path, capsys, source, command, param) -> None:
    status, error = _fetch(server, tmp_path, capsys, [*command, "--params", param])
    assert status == ExitCode.CONFIG, error
    assert error == (f"hydroseq fetch: error: --params: {param!r} is not a field's shortName (letters and digits, "
                     "then also _ . + -: tp, 2t, 10u, ...)")
    assert server.log == [] and not (tmp_path / "raw").exists()
