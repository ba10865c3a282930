"""NOAA GFS and GEFS (Herbie) against a local server in the NODD buckets' layout, with wgrib2 ``.idx`` files."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from hydroseq.errors import ConfigError, UnavailableError
from hydroseq.fetch import RetryPolicy, fetch_runs
from tests.fetch.sources import SourceServer, closed_port_url, grib_fields, write_noaa_run

RUN = pd.Timestamp("2026-11-02T00:00Z")
ISSUE = "2026-11-02T06:00Z"  # the 00 UTC run is the newest published (5 h latency)
GFS = "/gfs.20261102/00/atmos/gfs.t00z.pgrb2.0p25.f{:03d}"


def _fetch(server: SourceServer, out: Path, policy: RetryPolicy, source: str = "gfs", **options: object):
    options.setdefault("steps", ["0/12/6"])
    return fetch_runs(source, ISSUE, out, base_url=server.url, policy=policy, **options)


def test_only_the_requested_fields_are_downloaded_by_byte_range(server: SourceServer, tmp_path: Path,
                                                                fast: RetryPolicy) -> None:
    write_noaa_run(server.root, "gfs", RUN, [0, 6, 12])  # PRMSL, TMP, UGRD, APCP (6-hourly and since the start)
    result = _fetch(server, tmp_path, fast)
    run_file = tmp_path / "gfs" / "gfs_2026110200.grib2"
    assert result.written == (run_file,) and result.runs == (RUN,)
    # 2 m temperature and the precipitation since the start (not the 6-hourly bucket at 12 h); no precipitation
    # at step 0, so the run starts at step 6 (a run's fields share their steps)
    assert grib_fields(run_file) == [("2t", 6, 0), ("tp", 6, 0), ("2t", 12, 0), ("tp", 12, 0)]
    assert server.gets(GFS.format(12) + "$") == [(GFS.format(12), "bytes=215-429"), (GFS.format(12), "bytes=884-")]
    assert all(ranges for path, ranges in server.gets(r"\.f\d{3}$")) and not server.gets(GFS.format(0))
    assert result.notes == ("NOAA GFS has no precipitation at step 0: the run file starts at step 6 h",)
    assert (tmp_path / "gfs" / "gfs_2026110200.fetch.json").exists()
    assert _fetch(server, tmp_path, fast, params=["2t"]).written == (run_file,)  # another request: fetched again
    assert grib_fields(run_file) == [("2t", step, 0) for step in (0, 6, 12)]


def test_a_second_fetch_downloads_nothing(server: SourceServer, tmp_path: Path, fast: RetryPolicy) -> None:
    write_noaa_run(server.root, "gfs", RUN, [0, 6, 12])
    first = _fetch(server, tmp_path, fast)
    server.log.clear()
    again = _fetch(server, tmp_path, fast)
    assert again.skipped == first.written and again.written == () and server.log == []


def test_a_cut_transfer_is_resumed_from_where_it_stopped(server: SourceServer, tmp_path: Path,
                                                        fast: RetryPolicy) -> None:
    write_noaa_run(server.root, "gfs", RUN, [0, 6, 12])
    server.fail(GFS.format(12), "cut")  # the 2 m temperature's range, half sent
    server.fail(GFS.format(6) + ".idx", "503")
    result = _fetch(server, tmp_path, fast)
    assert server.gets(GFS.format(12) + "$") == [(GFS.format(12), "bytes=215-429"), (GFS.format(12), "bytes=322-429"),
                                                 (GFS.format(12), "bytes=884-")]
    assert len(server.gets(GFS.format(6) + r"\.idx")) == 2
    assert grib_fields(result.written[0])[-2:] == [("2t", 12, 0), ("tp", 12, 0)]


def test_the_ensemble_run_holds_the_members_asked_for(server: SourceServer, tmp_path: Path,
                                                      fast: RetryPolicy) -> None:
    write_noaa_run(server.root, "gefs", RUN, [0, 6], members=3)
    result = _fetch(server, tmp_path, fast, source="gefs", steps=[6], params=["tp"], members=2)
    assert result.written[0].name == "gefs_2026110200.grib2" and result.downloads == 3
    assert grib_fields(result.written[0]) == [("tp", 6, member) for member in (0, 1, 2)]
    assert {path.rsplit("/", 1)[-1] for path, _ in server.gets(r"\.f006$")} == {
        "gec00.t00z.pgrb2a.0p50.f006", "gep01.t00z.pgrb2a.0p50.f006", "gep02.t00z.pgrb2a.0p50.f006"}


def test_a_run_not_published_yet_gives_way_to_the_one_before(server: SourceServer, tmp_path: Path,
                                                             fast: RetryPolicy) -> None:
    before = pd.Timestamp("2026-11-01T18:00Z")
    write_noaa_run(server.root, "gfs", before, [0, 6, 12])
    result = _fetch(server, tmp_path, fast)
    assert result.runs == (before,) and result.written[0].name == "gfs_2026110118.grib2"
    assert f"{GFS.format(6)} not found" in result.notes[0]


def test_a_field_missing_from_the_inventory_names_the_inventory(server: SourceServer, tmp_path: Path,
                                                                fast: RetryPolicy) -> None:
    write_noaa_run(server.root, "gfs", RUN, [0, 6])
    with pytest.raises(ConfigError, match=r"f000\.idx: no message 'DPT:2 m above ground' \(2d\) in the inventory"):
        _fetch(server, tmp_path, fast, steps=[0], params=["2t", "2d"])
    with pytest.raises(ConfigError, match=r"--steps: NOAA GFS has no precipitation \(tp\) at step 0"):
        _fetch(server, tmp_path, fast, steps=[0], params=["tp"])


def test_a_source_that_is_down_is_one_line_naming_it_and_the_url(tmp_path: Path, fast: RetryPolicy) -> None:
    down = closed_port_url()
    with pytest.raises(UnavailableError) as failure:
        fetch_runs("gfs", ISSUE, tmp_path, steps=[6], base_url=down, policy=fast)
    assert str(failure.value) == (f"NOAA GFS: cannot reach {down}{GFS.format(6)} after 3 attempts "
                                  "(Connection refused)")


def test_a_run_published_in_part_is_resumed_later_and_dropped_once_no_issue_time_needs_it(
        server: SourceServer, tmp_path: Path, fast: RetryPolicy) -> None:
    before = pd.Timestamp("2026-11-01T18:00Z")
    write_noaa_run(server.root, "gfs", before, [6, 12])
    write_noaa_run(server.root, "gfs", RUN, [6])  # the 00 UTC run has step 6 only so far
    result = _fetch(server, tmp_path, fast)
    parts = tmp_path / "gfs" / ".gfs_2026110200.parts"
    assert result.runs == (before,) and [path.name for path in parts.glob("*.grib2")] == ["006h.grib2"]
    write_noaa_run(server.root, "gfs", RUN, [12])  # now all of it
    server.log.clear()
    again = _fetch(server, tmp_path, fast)
    assert again.runs == (RUN,) and again.downloads == 1 and not parts.exists()
    assert {path for path, _ in server.gets()} == {GFS.format(12) + ".idx", GFS.format(12)}
    write_noaa_run(server.root, "gfs", RUN + pd.Timedelta(hours=6), [6])  # another run published in part
    assert _fetch(server, tmp_path, fast, latency_hours=0).runs == (RUN,)
    assert (tmp_path / "gfs" / ".gfs_2026110206.parts").exists()
    with pytest.raises(UnavailableError):  # a day later: neither run the issue time needs is there
        fetch_runs("gfs", "2026-11-03T06:00Z", tmp_path, steps=[6, 12], base_url=server.url, policy=fast)
    assert not (tmp_path / "gfs" / ".gfs_2026110206.parts").exists()
