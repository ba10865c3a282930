"""The session ``hydroseq fetch`` asks through, against local servers: a redirect to another server is refused in
one line naming both (exit 3) and that server is never asked, one on the same server is followed; a server that
trickles its answer a byte at a time meets the request's deadline (``--deadline``), then the retries, then exit 6,
in seconds instead of never."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pandas as pd
import pytest

from hydroseq.cli import main
from hydroseq.errors import ExitCode
from hydroseq.fetch import RetryPolicy, fetch_runs
from tests.fetch.sources import SourceServer, grib_fields, serving, write_ecmwf_run, write_noaa_run

RUN = pd.Timestamp("2026-11-02T00:00Z")
ECMWF_INDEX = "/20261102/00z/ifs/0p25/oper/20261102000000-6h-oper-fc.index"
ECMWF_DATA = "/20261102/00z/ifs/0p25/oper/20261102000000-6h-oper-fc.grib2"
GFS_DATA = "/gfs.20261102/00/atmos/gfs.t00z.pgrb2.0p25.f006"
NWIS = "/nwis/iv/"


def _command(source: str, server: SourceServer, out: Path, *options: str) -> list[str]:
    when = {"ecmwf-hres": "2026-11-02T12:00Z", "gfs": "2026-11-02T06:00Z"}.get(source, "2026-11-02")
    steps = ["--steps", "6/12/6"] if source != "nwis" else []
    return ["-q", "fetch", "--source", source, "--issue-time", when, "--out", str(out), "--base-url", server.url,
            "--attempts", "2", "--retry-wait", "0", *steps, *options]


@pytest.mark.parametrize("source, path", [("ecmwf-hres", ECMWF_INDEX), ("ecmwf-hres", ECMWF_DATA),
                                          ("gfs", GFS_DATA), ("nwis", NWIS)])
def test_a_redirect_to_another_server_is_refused_naming_both(server, tmp_path, capsys, source, path) -> None:
    write_ecmwf_run(server.root, RUN, [6, 12])
    write_noaa_run(server.root, "gfs", RUN, [6, 12])
    stations = tmp_path / "stations.txt"
    stations.write_text("01646500\n")
    with serving(server.root) as elsewhere:
        server.fail(path, f"redirect:{elsewhere.url}")
        extra = ["--stations", str(stations)] if source == "nwis" else []
        status = main(_command(source, server, tmp_path / "raw", *extra))
        error = capsys.readouterr().err.strip()
        assert status == ExitCode.CONFIG, error
        assert len(error.splitlines()) == 1 and error.startswith(f"hydroseq fetch: error: {server.url}{path}"), error
        assert f": the server redirects to another server, {elsewhere.url}{path}" in error
        assert elsewhere.log == []


def test_a_redirect_on_the_same_server_is_followed(server: SourceServer, tmp_path: Path, fast: RetryPolicy) -> None:
    write_ecmwf_run(server.root, RUN, [6, 12])
    shutil.copytree(server.root / "20261102", server.root / "moved" / "20261102")
    server.fail(ECMWF_DATA, f"redirect:{server.url}/moved")  # the first field of step 6 h
    result = fetch_runs("ecmwf-hres", "2026-11-02T12:00Z", tmp_path, steps=[6, 12], base_url=server.url, policy=fast)
    assert grib_fields(result.written[0]) == [(param, step, 0) for step in (6, 12) for param in ("tp", "2t")]
    assert len(server.gets("^/moved" + ECMWF_DATA)) == 1


@pytest.mark.parametrize("source, path", [("ecmwf-hres", ECMWF_INDEX), ("gfs", GFS_DATA)])
def test_a_server_that_trickles_its_answer_meets_the_deadline(server, tmp_path, capsys, source, path) -> None:
    write_ecmwf_run(server.root, RUN, [6, 12])
    write_noaa_run(server.root, "gfs", RUN, [6, 12])
    size = (server.root / path.lstrip("/")).stat().st_size
    server.fail(path, *["trickle:0.5"] * 4)  # a byte every half second: minutes for the file, no read ever waits 5 s
    began = time.monotonic()
    status = main(_command(source, server, tmp_path / "raw", "--deadline", "2"))
    took = time.monotonic() - began
    error = capsys.readouterr().err.strip()
    assert status == ExitCode.UNAVAILABLE, error
    assert len(error.splitlines()) == 1 and error.endswith(
        "after 2 attempts (no complete answer within 2 s (the deadline of a request, --deadline))"), error
    assert size * 0.5 > 60 and took < 30, (size, took)


def test_the_deadline_must_be_a_positive_number(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["fetch", "--source", "gfs", "--issue-time", "2026-11-02", "--out", str(tmp_path), "--deadline", "0"])
    assert stopped.value.code == ExitCode.USAGE
    assert "--deadline: expected a number above 0, got '0'" in capsys.readouterr().err
