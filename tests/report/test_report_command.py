"""``hydroseq report`` on bad input: one line naming the file and what is wrong, the documented exit status,
and no page written (an earlier page left as it was). Then what a good page holds without a browser: no
reference to anything outside the file, data that cannot end its script element, the same bytes twice."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from hydroseq.cli import main
from hydroseq.report import write_report
from hydroseq.report.render import json_for_script

pytestmark = pytest.mark.slow


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Exit status and the error lines of ``hydroseq report ARGV``."""
    status = main(["report", *argv])
    return status, capsys.readouterr().err.strip()


@pytest.fixture
def copies(report_inputs: dict[str, Path], tmp_path: Path) -> dict[str, Path]:
    """Copies of the forecast set and the hindcast set (with scores and manifest), free to be broken."""
    out = {}
    for name in ("forecast", "hindcast", "previous"):
        source = report_inputs[name]
        for sibling in source.parent.glob(f"{source.stem}*"):
            shutil.copy(sibling, tmp_path / sibling.name)
        out[name] = tmp_path / source.name
    return out


def bad_inputs(report_inputs: dict[str, Path], copies: dict[str, Path], tmp_path: Path) -> list[tuple[list[str], int,
                                                                                                       str, Path]]:
    forecast, hindcast = copies["forecast"], copies["hindcast"]
    truncated = tmp_path / "truncated.nc"
    truncated.write_bytes(forecast.read_bytes()[:4000])
    text_file = tmp_path / "forecast.nc.txt"
    text_file.write_text("station,lead\n01022500,1\n")
    scores = hindcast.with_name(f"{hindcast.stem}_scores.csv")
    other_units = tmp_path / "other_units.nc"
    with xr.open_dataset(report_inputs["data"]) as dataset:
        edited = dataset.load()
    edited["streamflow"].attrs["units"] = "m3 s-1"
    edited.to_netcdf(other_units)
    return [
        (["--forecast", str(tmp_path / "absent.nc")], 4, "absent.nc: no such file", tmp_path / "absent.nc"),
        (["--forecast", str(truncated)], 4, "not a readable NetCDF file", truncated),
        (["--forecast", str(text_file)], 4, "not a readable NetCDF file", text_file),
        (["--forecast", str(hindcast)], 4, "a hindcast (92 issue times)", hindcast),
        (["--hindcast", str(forecast)], 4, "not a hindcast", forecast),
        (["--forecast", str(forecast), "--previous", str(forecast)], 4, "not before the forecast", forecast),
        (["--forecast", str(copies["previous"]), "--previous", str(forecast)], 4, "not before the forecast", forecast),
        (["--forecast", str(forecast), "--data", str(hindcast)], 4, "has no 'time' coordinate of its own", hindcast),
        (["--forecast", str(forecast), "--data", str(other_units)], 4, "observed streamflow in 'm3 s-1'", other_units),
        (["--hindcast", str(hindcast), "--data", str(report_inputs["data"])], 4, "differs from", hindcast),
        (["--previous", str(forecast)], 3, "--previous goes with --forecast", Path("--previous")),
        ([], 3, "give --forecast", Path("--hindcast")),
        (["--forecast", str(forecast), "--out", str(forecast)], 3, "is one of the inputs", forecast),
    ] + [(["--hindcast", str(hindcast)], 4, "differs from", scores)]


def test_every_bad_input_is_one_line_naming_the_file_and_nothing_is_written(
        report_inputs: dict[str, Path], copies: dict[str, Path], tmp_path: Path, capsys) -> None:
    out = tmp_path / "page.html"
    scores = copies["hindcast"].with_name(f"{copies['hindcast'].stem}_scores.csv")
    scores.write_text(scores.read_text() + "01022500,1,model,3,0.5,0.5\n")  # edited after the hindcast
    for argv, status, message, named in bad_inputs(report_inputs, copies, tmp_path):
        argv = argv if "--out" in argv else [*argv, "--out", str(out)]
        code, error = run(argv, capsys)
        assert code == status, (argv, error)
        assert len(error.splitlines()) == 1 and "Traceback" not in error, error
        assert message in error and named.name in error, (message, error)
        assert not out.exists() and not list(tmp_path.glob("*.tmp*"))


def test_a_failed_page_leaves_the_earlier_page_as_it_was(report_inputs: dict[str, Path], tmp_path: Path,
                                                         capsys) -> None:
    out = tmp_path / "page.html"
    out.write_text("yesterday's page")
    code, _ = run(["--forecast", str(report_inputs["hindcast"]), "--out", str(out)], capsys)
    assert code == 4 and out.read_text() == "yesterday's page"


def test_the_command_writes_the_page_and_says_where(report_inputs: dict[str, Path], tmp_path: Path, capsys) -> None:
    out = tmp_path / "page.html"
    status = main(["--json", "report", "--forecast", str(report_inputs["forecast"]), "--data",
                   str(report_inputs["data"]), "--out", str(out)])
    summary = json.loads(capsys.readouterr().out)
    assert status == 0 and summary["page"] == str(out) and summary["kind"] == "forecast"
    assert summary["stations"] == 31 and summary["bytes"] == out.stat().st_size


def test_the_page_refers_to_nothing_outside_itself(report_inputs: dict[str, Path]) -> None:
    for name in ("forecast_page", "deterministic_page", "verification_page"):
        html = report_inputs[name].read_text()
        assert not re.search(r"<(script|img|link|iframe)[^>]*\b(src|href)=\"(?!data:)", html), name
        assert "@import" not in html and not re.search(r"url\(\s*['\"]?(https?:)?//", html)


def test_the_data_cannot_end_its_script_element() -> None:
    text = json_for_script({"name": "</script><script>alert(1)</script><!--", "line": "a\u2028b"})
    assert "</" not in text and "<!--" not in text and "\u2028" not in text
    assert json.loads(text) == {"name": "</script><script>alert(1)</script><!--", "line": "a\u2028b"}


def test_the_same_forecast_gives_the_same_page(report_inputs: dict[str, Path], tmp_path: Path) -> None:
    write_report(tmp_path / "again.html", forecast=report_inputs["forecast"], data=report_inputs["data"],
                 hindcast=report_inputs["hindcast"], previous=report_inputs["previous"])
    assert (tmp_path / "again.html").read_bytes() == report_inputs["forecast_page"].read_bytes()


def test_a_station_list_makes_a_page_per_region_and_a_big_network_is_refused(report_inputs: dict[str, Path],
                                                                             tmp_path: Path, capsys) -> None:
    region = tmp_path / "region.csv"  # a station table cut to a region: its station_id column is read
    region.write_text('station_id,name\n01022500,"Narraguagus River, Maine"\n01052500,Diamond River\n')
    out = tmp_path / "region.html"
    report = write_report(out, forecast=report_inputs["forecast"], data=report_inputs["data"], stations=region)
    assert report.stations == 2 and out.read_text().count('<tr data-index="') == 2
    ids = tmp_path / "ids.txt"
    ids.write_text("# one id a line\n01022500\n99999999\n")
    code, error = run(["--forecast", str(report_inputs["forecast"]), "--stations", str(ids), "--out",
                       str(tmp_path / "x.html")], capsys)
    assert code == 4 and error.endswith("ids.txt: station 99999999 is not in the forecast")
    code, error = run(["--forecast", str(report_inputs["forecast"]), "--max-stations", "30", "--out",
                       str(tmp_path / "x.html")], capsys)
    assert code == 3 and "has 31 stations, more than a page holds well (30): write one page per region" in error
    assert not (tmp_path / "x.html").exists()


def test_what_the_data_file_holds_after_the_issue_time_changes_nothing_on_the_page(report_inputs: dict[str, Path],
                                                                                   tmp_path: Path) -> None:
    """Perturb the future: every variable after the issue step replaced by noise (two draws) gives the same page,
    byte for byte; the observation of the issue step itself (the control) changes it."""
    with xr.open_dataset(report_inputs["data"]) as dataset:
        original = dataset.load()
    issue = np.datetime64("2014-10-01T08:00", "ns")
    after = original["time"].values > issue
    assert after.sum() > 60  # the bundled file goes on to the end of 2014
    inputs = {"forecast": report_inputs["forecast"], "hindcast": report_inputs["hindcast"],
              "previous": report_inputs["previous"]}
    rng = np.random.default_rng(0)
    for draw in range(2):
        perturbed = original.copy(deep=True)
        for name, variable in perturbed.data_vars.items():
            if variable.dims == ("station", "time"):
                future = variable.values[:, after]
                perturbed[name].values[:, after] = rng.uniform(0, 1000, future.shape).astype(future.dtype)
        perturbed.to_netcdf(tmp_path / f"future_{draw}.nc")
        write_report(tmp_path / f"page_{draw}.html", data=tmp_path / f"future_{draw}.nc", **inputs)
        assert (tmp_path / f"page_{draw}.html").read_bytes() == report_inputs["forecast_page"].read_bytes()
    control = original.copy(deep=True)
    control["streamflow"].loc[{"time": issue}] = control["streamflow"].sel(time=issue) + 1.0
    control.to_netcdf(tmp_path / "issue_day.nc")
    write_report(tmp_path / "control.html", data=tmp_path / "issue_day.nc", **inputs)
    assert (tmp_path / "control.html").read_bytes() != report_inputs["forecast_page"].read_bytes()
