"""ECMWF open data (``ecmwf-opendata``) against a local server in ECMWF's layout, with ``.index`` files."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from hydroseq.errors import ConfigError, UnavailableError
from hydroseq.fetch import RetryPolicy, fetch_runs
from tests.fetch.sources import SourceServer, closed_port_url, grib_fields, write_ecmwf_run

RUN = pd.Timestamp("2026-11-02T00:00Z")
ISSUE = "2026-11-02T12:00Z"  # the 00 UTC run is the newest published (8 h latency)
STEPS = [0, 6, 12]


def _fetch(server: SourceServer, out: Path, policy: RetryPolicy, source: str = "ecmwf-hres", **options: object):
    return fetch_runs(source, ISSUE, out, steps=["0/12/6"], base_url=server.url, policy=policy, **options)


def test_the_run_file_holds_the_requested_fields_of_every_step_and_nothing_else(server: SourceServer,
                                                                                tmp_path: Path,
                                                                                fast: RetryPolicy) -> None:
    write_ecmwf_run(server.root, RUN, STEPS)  # 2t, 10u and tp at each step
    result = _fetch(server, tmp_path / "raw", fast)
    run_file = tmp_path / "raw" / "ecmwf-hres" / "ecmwf-hres_2026110200.grib2"
    assert result.written == (run_file,) and result.runs == (RUN,) and result.downloads == len(STEPS)
    assert grib_fields(run_file) == [(param, step, 0) for step in STEPS for param in ("tp", "2t")]
    # only the byte ranges of tp and 2t were downloaded, as the .index gives them
    data = server.gets(r"\.grib2$")
    assert len(data) == 2 * len(STEPS) and all(ranges and ranges.startswith("bytes=") for _, ranges in data)
    assert result.downloaded_bytes == run_file.stat().st_size < sum(
        path.stat().st_size for path in server.root.rglob("*.grib2"))
    sidecar = json.loads((run_file.parent / "ecmwf-hres_2026110200.fetch.json").read_text())
    assert sidecar["request"]["params"] == ["tp", "2t"] and sidecar["bytes"] == run_file.stat().st_size
    assert {path.name for path in run_file.parent.iterdir()} == {run_file.name, "ecmwf-hres_2026110200.fetch.json"}
    assert any("CC BY 4.0" in note for note in result.notes)


def test_a_second_fetch_downloads_nothing(server: SourceServer, tmp_path: Path, fast: RetryPolicy) -> None:
    write_ecmwf_run(server.root, RUN, STEPS)
    first = _fetch(server, tmp_path, fast, params=["tp", "2t"])
    server.log.clear()
    again = _fetch(server, tmp_path, fast, params=["tp", "2t"])
    assert again.skipped == first.written and again.written == () and server.log == []
    other = _fetch(server, tmp_path, fast, params=["tp"])  # another request: fetched again
    assert other.written == first.written and grib_fields(other.written[0])[0][0] == "tp"


def test_a_transfer_cut_short_is_tried_again(server: SourceServer, tmp_path: Path, fast: RetryPolicy) -> None:
    write_ecmwf_run(server.root, RUN, STEPS)
    server.fail("-6h-oper-fc.grib2", "cut")
    server.fail("-12h-oper-fc.index", "503")
    result = _fetch(server, tmp_path, fast)
    assert grib_fields(result.written[0]) == [(param, step, 0) for step in STEPS for param in ("tp", "2t")]
    assert len(server.gets("-6h-oper-fc.grib2")) == 3  # tp cut and again, then 2t
    assert len(server.gets("-12h-oper-fc.index")) == 3  # 503 and again for tp, then 2t


def test_a_fetch_that_fails_keeps_its_finished_steps_for_the_next(server: SourceServer, tmp_path: Path,
                                                                   fast: RetryPolicy) -> None:
    write_ecmwf_run(server.root, RUN, STEPS)
    server.fail("-12h-oper-fc.index", "500", "500", "500")
    with pytest.raises(UnavailableError) as failure:
        _fetch(server, tmp_path, fast)
    assert str(failure.value) == (f"ECMWF open data (HRES): cannot reach {server.url}/20261102/00z/ifs/0p25/oper/"
                                  "20261102000000-12h-oper-fc.index after 3 attempts (HTTP 500 Internal Server Error)")
    parts = tmp_path / "ecmwf-hres" / ".ecmwf-hres_2026110200.parts"
    assert sorted(path.name for path in parts.glob("*.grib2")) == ["000h.grib2", "006h.grib2"]
    server.log.clear()
    result = _fetch(server, tmp_path, fast)
    assert {path for path, _ in server.gets()} == {f"/20261102/00z/ifs/0p25/oper/20261102000000-12h-oper-fc.{kind}"
                                                    for kind in ("index", "grib2")}
    assert result.downloads == 1 and not parts.exists()
    assert [step for _, step, _ in grib_fields(result.written[0])] == [0, 0, 6, 6, 12, 12]


def test_a_run_not_published_yet_gives_way_to_the_one_before(server: SourceServer, tmp_path: Path,
                                                             fast: RetryPolicy) -> None:
    before = pd.Timestamp("2026-11-01T18:00Z")
    write_ecmwf_run(server.root, before, STEPS)  # the 00 UTC run is not there
    result = _fetch(server, tmp_path, fast)
    assert result.runs == (before,) and result.written[0].name == "ecmwf-hres_2026110118.grib2"
    assert "the run of 2026-11-02T00Z is not (all) published" in result.notes[0]
    assert "20261102000000-0h-oper-fc.index not found" in result.notes[0]


def test_neither_run_published_is_one_line_naming_what_is_missing(server: SourceServer, tmp_path: Path,
                                                                  fast: RetryPolicy) -> None:
    with pytest.raises(UnavailableError) as failure:
        _fetch(server, tmp_path, fast)
    message = str(failure.value)
    assert "\n" not in message and message.startswith("ECMWF open data (HRES): no run published by 2026-11-02T12:00Z")
    assert "20261102000000-0h-oper-fc.index not found" in message
    assert "20261101180000-0h-oper-fc.index not found" in message


def test_an_ensemble_run_holds_every_member(server: SourceServer, tmp_path: Path, fast: RetryPolicy) -> None:
    write_ecmwf_run(server.root, RUN, [0, 6], members=2)
    result = fetch_runs("ecmwf-ens", "2026-11-02T09:00Z", tmp_path, params=["tp"], steps=[0, 6], base_url=server.url,
                        policy=fast)
    assert result.written[0].name == "ecmwf-ens_2026110200.grib2"
    assert grib_fields(result.written[0]) == [("tp", step, member) for step in (0, 6) for member in (0, 1, 2)]
    assert all("/enfo/" in path for path, _ in server.gets())


def test_a_parameter_the_index_lacks_is_a_config_error(server: SourceServer, tmp_path: Path,
                                                       fast: RetryPolicy) -> None:
    write_ecmwf_run(server.root, RUN, STEPS)
    with pytest.raises(ConfigError, match=r"lists no field 'swvl1'"):
        _fetch(server, tmp_path, fast, params=["tp", "swvl1"])


def test_a_source_that_is_down_is_one_line_naming_it_and_the_url(tmp_path: Path, fast: RetryPolicy) -> None:
    down = closed_port_url()
    with pytest.raises(UnavailableError) as failure:
        fetch_runs("ecmwf-hres", ISSUE, tmp_path, steps=[0], base_url=down, policy=fast)
    assert str(failure.value) == (f"ECMWF open data (HRES): cannot reach {down}/20261102/00z/ifs/0p25/oper/"
                                  "20261102000000-0h-oper-fc.index after 3 attempts (Connection refused)")
    assert failure.value.exit_code == 6
