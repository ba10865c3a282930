"""Fuzz cases for the ingest's validity checks, run through the whole ``ingest`` (and a few through the
``hydroseq ingest`` command as a real process). Every case must end in a clear one-line
:class:`HydroseqError` naming the file, in a count in the report, or (for legitimate input such as
mixed EST/EDT offsets) in exactly the right values: no traceback, no silent acceptance.

Classes: UTC offsets (contradicting the source's zone, mixed with naive stamps, mixed and legitimate);
truncated NetCDF (classic, 64-bit offset, netCDF4, several cut fractions); fill values; infinite,
huge, negative and out-of-range values, and 'nan' text, under both ``on_implausible`` policies.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hydroseq.config import IngestConfig, validate_config
from hydroseq.errors import ExitCode, HydroseqError
from hydroseq.ingest import ingest

STATION = "01022500"
COLUMNS = ["date", "total_precipitation_sum", "temperature_2m_mean", "potential_evaporation_sum", "streamflow"]
VARIABLES = {"total_precipitation_sum": {"source": "total_precipitation_sum", "units": "mm/d", "aggregation": "sum"},
             "temperature_2m_mean": {"source": "temperature_2m_mean", "units": "degC"},
             "streamflow": {"source": "streamflow", "units": "mm/d"}}
GRID = {"frequency": "1D", "timezone": "Etc/GMT+8", "start": "1981-01-01", "end": "1981-03-31"}


def stations(data_dir: Path) -> dict:
    return {"path": str(data_dir / "stations" / "caravan_camels_us.csv"), "ids": [STATION]}


def caravan_case(folder: Path, data_dir: Path, policy: str = "fail") -> tuple[dict, Path]:
    """The real Caravan file of 01022500 cut to 120 days, and a config ingesting three of its columns."""
    path = folder / f"{STATION}.csv"
    lines = (data_dir / "daily_caravan_camels_us" / f"{STATION}.csv").read_text().splitlines()[:121]
    path.write_text("\n".join(lines) + "\n")
    source = {"path": str(path), "format": "caravan_csv", "frequency": "1D", "timestamp": "interval_start",
              "timezone": "station_standard", "time_format": "%Y-%m-%d", "on_implausible": policy,
              "variables": VARIABLES}
    return {"stations": stations(data_dir), "sources": [source], "grid": GRID}, path


def set_value(path: Path, line: int, column: str, text: str) -> None:
    lines = path.read_text().splitlines()
    fields = lines[line - 1].split(",")
    fields[COLUMNS.index(column)] = text
    lines[line - 1] = ",".join(fields)
    path.write_text("\n".join(lines) + "\n")


def run(config: dict, folder: Path):
    """``("error", message)`` or ``("report", report)``; any other exception fails the test."""
    try:
        return "report", ingest(validate_config(config, IngestConfig), folder / "out" / "data.nc", show_progress=False)
    except HydroseqError as error:
        assert not (folder / "out" / "data.nc").exists()
        return "error", str(error)


def assert_clear_error(outcome, path: Path, *fragments: str) -> None:
    kind, message = outcome
    assert kind == "error", f"silently accepted: {path}"
    assert "\n" not in message and str(path) in message, message
    for fragment in fragments:
        assert fragment in message, message


BAD_VALUES = [("streamflow", "inf"), ("streamflow", "-inf"), ("total_precipitation_sum", "Infinity"),
              ("total_precipitation_sum", "1e300"), ("total_precipitation_sum", "1e30"),
              ("total_precipitation_sum", "-0.5"), ("streamflow", "-3"), ("temperature_2m_mean", "-120"),
              ("temperature_2m_mean", "75"), ("temperature_2m_mean", "-1e300")]


@pytest.mark.parametrize("column, text", BAD_VALUES, ids=[f"{c}={t}" for c, t in BAD_VALUES])
@pytest.mark.parametrize("policy", ["fail", "mark_missing"])
def test_implausible_value_fails_or_is_counted(tmp_path, data_dir, column, text, policy):
    config, path = caravan_case(tmp_path, data_dir, policy)
    set_value(path, 31, column, text)  # 1981-01-30
    outcome = run(config, tmp_path)
    if policy == "fail":
        reason = "valid_m" if "inf" not in text.lower() else "not finite"
        assert_clear_error(outcome, path, "line 31", f"variable {column}", reason)
        return
    kind, report = outcome
    assert kind == "report"
    row = report.stations.set_index("station").loc[STATION]
    assert row[f"marked_missing_{column}"] == 1 and row["marked_missing"] == 1
    with xr.open_dataset(report.output) as ds:
        values = ds[column].sel(station=STATION).values
        assert np.isnan(values[29]) and np.isfinite(values[:29]).all() and np.isfinite(values[30:]).all()
        assert float(ds[f"coverage_{column}"].sel(station=STATION)) == pytest.approx(89 / 90)


@pytest.mark.parametrize("text", ["nan", "NaN", "NAN", "n/a"])
@pytest.mark.parametrize("policy", ["fail", "mark_missing"])
def test_nan_text_that_is_not_a_declared_missing_code_is_named(tmp_path, data_dir, text, policy):
    config, path = caravan_case(tmp_path, data_dir, policy)
    set_value(path, 12, "streamflow", text)
    assert_clear_error(run(config, tmp_path), path, "line 12", f"{text!r} is not a number")


def _offset_config(data_dir: Path, path: Path, zone: str | None) -> dict:
    source = {"path": str(path), "format": "csv", "station": STATION, "time_column": "time", "frequency": "1h",
              "timestamp": "instantaneous", "timezone": zone, "min_coverage": 0.5,
              "variables": {"streamflow": {"source": "q", "units": "m3/s"}}}
    grid = {"frequency": "1h", "timezone": "UTC", "start": "2015-03-07", "end": "2015-03-09"}
    return {"stations": stations(data_dir), "sources": [source], "grid": grid}


def _offset_file(path: Path, stamps: list[str]) -> Path:
    pd.DataFrame({"time": stamps, "q": np.arange(1.0, len(stamps) + 1)}).to_csv(path, index=False)
    return path


EST_DAY = [f"2015-03-08 {hour:02d}:00-05:00" for hour in range(6)]  # 02:00 EST is 03:00 EDT in New York
OFFSET_CASES = {
    "fixed zone differs": (["2015-03-07 06:00+00:00", "2015-03-07 07:00+00:00"], "+05:30", ["line 2", "contradicts"]),
    "Etc zone differs": (["2015-03-07 06:00Z", "2015-03-07 07:00Z"], "Etc/GMT+5", ["line 2", "contradicts"]),
    "EST all year in New York": (EST_DAY, "America/New_York", ["line 4", "offset -04:00"]),
    "station zone differs": (["2015-03-07 06:00+01:00", "2015-03-07 07:00+01:00"], "station",
                             ["line 2", "contradicts"]),
    "mixed offsets, fixed zone": (["2015-03-07 06:00-05:00", "2015-03-07 08:00-04:00"], "-05:00",
                                  ["line 3", "contradicts"]),
    "offset then naive": (["2015-03-07 06:00+00:00", "2015-03-07 07:00"], None, ["line 3", "on every row or on none"]),
    "naive then offset": (["2015-03-07 06:00", "2015-03-07 07:00+00:00"], "UTC", ["line 3", "on every row or on none"]),
    "offset not at the end": (["2015-03-07 06:00-05:00", "2015-03-07T07:00-0400 x"], None, ["line 3"]),
}


@pytest.mark.parametrize("name", list(OFFSET_CASES))
def test_offsets_that_contradict_end_in_a_clear_error(tmp_path, data_dir, name):
    stamps, zone, fragments = OFFSET_CASES[name]
    path = _offset_file(tmp_path / "q.csv", stamps)
    assert_clear_error(run(_offset_config(data_dir, path, zone), tmp_path), path, *fragments)


@pytest.mark.parametrize("zone", [None, "America/New_York", "station"])
def test_mixed_est_edt_offsets_are_converted_per_stamp(tmp_path, data_dir, zone):
    stamps = ["2015-03-08 00:00-05:00", "2015-03-08 01:00-05:00", "2015-03-08 03:00-04:00", "2015-03-08 04:00-04:00"]
    path = _offset_file(tmp_path / "q.csv", stamps)
    kind, report = run(_offset_config(data_dir, path, zone), tmp_path)
    assert kind == "report"
    with xr.open_dataset(report.output) as ds:
        q = ds["streamflow"].sel(station=STATION).to_series().dropna()
    assert list(q.index) == list(pd.to_datetime(["2015-03-08 05:00", "2015-03-08 06:00", "2015-03-08 07:00",
                                                 "2015-03-08 08:00"]))
    assert q.tolist() == [1.0, 2.0, 3.0, 4.0]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.integers(2, 121), st.sampled_from(BAD_VALUES)), min_size=1, max_size=6,
                      unique_by=lambda edit: edit[0]),
       policy=st.sampled_from(["fail", "mark_missing"]))
def test_fuzzed_implausible_values_are_named_or_counted_exactly(tmp_path_factory, data_dir, edits, policy):
    folder = tmp_path_factory.mktemp("fuzz")
    config, path = caravan_case(folder, data_dir, policy)
    for line, (column, text) in edits:
        set_value(path, line, column, text)
    outcome = run(config, folder)
    if policy == "fail":
        first_column = next(c for c in VARIABLES if any(column == c for _, (column, _) in edits))
        first_line = min(line for line, (column, _) in edits if column == first_column)
        assert_clear_error(outcome, path, f"line {first_line}", f"variable {first_column}")
        return
    kind, report = outcome
    assert kind == "report"
    row = report.stations.set_index("station").loc[STATION]
    for column in VARIABLES:
        assert row[f"marked_missing_{column}"] == sum(c == column for _, (c, _) in edits)
    with xr.open_dataset(report.output) as ds:
        for column in VARIABLES:
            assert np.isfinite(ds[column].values[~np.isnan(ds[column].values)]).all()
            assert np.nanmax(np.abs(ds[column].values)) < 1e3


def _cli(config: dict, folder: Path) -> subprocess.CompletedProcess:
    (folder / "ingest.yaml").write_text(yaml.safe_dump(config))
    script = Path(sys.executable).parent / "hydroseq"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "hydroseq"]
    arguments = ["ingest", "--config", str(folder / "ingest.yaml"), "--out", str(folder / "out.nc")]
    return subprocess.run([*command, *arguments], capture_output=True, text=True, timeout=300)


def _truncated_classic(folder: Path, data_dir: Path) -> tuple[dict, Path]:
    path = folder / "classic.nc"
    with xr.open_dataset(data_dir / "caravan_format_samples" / "test_caravan_file.nc", decode_times=False) as ds:
        ds.to_netcdf(path, format="NETCDF3_CLASSIC")
    data = path.read_bytes()
    path.write_bytes(data[: int(0.6 * len(data))])
    source = {"path": str(path), "format": "caravan_netcdf", "frequency": "1D", "timestamp": "interval_start",
              "timezone": "station_standard", "station_id_prefix": "camels_",
              "variables": {"t": {"source": "temperature_2m_mean", "units": "degC"}}}
    return {"stations": stations(data_dir), "sources": [source], "grid": GRID}, path


def _cli_cases(folder: Path, data_dir: Path, name: str) -> tuple[dict, Path, str]:
    if name == "contradicting offset":
        path = _offset_file(folder / "q.csv", OFFSET_CASES["fixed zone differs"][0])
        return _offset_config(data_dir, path, "+05:30"), path, "contradicts"
    if name == "truncated NETCDF3 classic":
        return (*_truncated_classic(folder, data_dir), "truncated: header expects")
    config, path = caravan_case(folder, data_dir)
    set_value(path, 40, "total_precipitation_sum", "inf")
    return config, path, "not finite"


@pytest.mark.parametrize("name", ["contradicting offset", "truncated NETCDF3 classic", "infinite value"])
def test_the_command_exits_input_data_with_one_line(tmp_path, data_dir, name):
    config, path, fragment = _cli_cases(tmp_path, data_dir, name)
    result = _cli(config, tmp_path)
    error = result.stderr.strip()
    assert result.returncode == ExitCode.INPUT_DATA, result.stderr
    assert "Traceback" not in result.stderr and len(error.splitlines()) == 1
    assert error.startswith("hydroseq ingest: error: ") and str(path) in error and fragment in error
    assert not (tmp_path / "out.nc").exists()


def test_the_command_prints_the_marked_missing_count(tmp_path, data_dir):
    config, path = caravan_case(tmp_path, data_dir, "mark_missing")
    set_value(path, 40, "total_precipitation_sum", "inf")
    set_value(path, 41, "streamflow", "-2")
    result = _cli(config, tmp_path)
    assert result.returncode == 0, result.stderr
    row = next(line for line in result.stdout.splitlines() if line.startswith(STATION))
    assert "marked" in result.stdout and row.split("│")[-1].strip() == "2"  # the last column, "marked missing"
    table = pd.read_csv(tmp_path / "out.report.csv", dtype={"station": str}).set_index("station")
    assert table.loc[STATION, "marked_missing"] == 2 and table.loc[STATION, "marked_missing_streamflow"] == 1
    assert '"marked_missing": 2' in (tmp_path / "out.report.json").read_text()
