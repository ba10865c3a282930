"""Bad input ends in a clear error naming file and line/timestamp (or a reported skip), never a
traceback, and nothing half-written is left behind. Inputs are cut from the real Caravan files."""

from __future__ import annotations

import shutil
from pathlib import Path

import netCDF4
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hydroseq.cli import main
from hydroseq.config import IngestConfig, validate_config
from hydroseq.errors import ExitCode, HydroseqError, InputDataError
from hydroseq.ingest import ingest
from tests.fixtures import replace_line

STATIONS = ["01022500", "01052500"]


def _setup(folder: Path, data_dir: Path, on_bad_station: str = "fail", rows: int = 120) -> dict:
    """Two real Caravan basins cut to their first ``rows`` days, and a config ingesting them."""
    (folder / "src").mkdir(exist_ok=True)
    for station in STATIONS:
        lines = (data_dir / "daily_caravan_camels_us" / f"{station}.csv").read_text().splitlines()[: rows + 1]
        (folder / "src" / f"{station}.csv").write_text("\n".join(lines) + "\n")
    table = (data_dir / "stations" / "caravan_camels_us.csv").read_text().splitlines()
    kept = [table[0]] + [line for line in table[1:] if line.split(",")[0] in STATIONS]
    (folder / "stations.csv").write_text("\n".join(kept) + "\n")
    return {
        "stations": {"path": str(folder / "stations.csv")},
        "sources": [{"path": str(folder / "src" / "*.csv"), "format": "caravan_csv", "frequency": "1D",
                     "timestamp": "interval_start", "timezone": "station_standard", "time_format": "%Y-%m-%d",
                     "variables": {"streamflow": {"source": "streamflow", "units": "mm/d"},
                                   "total_precipitation_sum": {"source": "total_precipitation_sum",
                                                               "units": "mm/d", "aggregation": "sum"}}}],
        "grid": {"frequency": "1D", "timezone": "Etc/GMT+8", "start": "1981-01-01", "end": "1981-03-31"},
        "on_bad_station": on_bad_station,
    }



def _run(folder: Path, config: dict):
    return ingest(validate_config(config, IngestConfig), folder / "out" / "data.nc", show_progress=False)


CASES = [
    ("text in a numeric column", lambda p: replace_line(p, 5, "1981-01-04,abc,-1.0,1.0,2.0"),
     ["line 5", "'abc' is not a number"]),
    ("truncated line", lambda p: replace_line(p, 7, "1981-01-06,1.2"), ["line 7", "fields"]),
    ("duplicated timestamp", lambda p: replace_line(p, 9, "1981-01-07,1,1,1,1"), ["duplicated timestamp", "line 9"]),
    ("unsorted timestamps", lambda p: replace_line(p, 9, "1980-12-01,1,1,1,1"), ["unsorted", "line 9"]),
    ("unparsable date", lambda p: replace_line(p, 4, "1981-13-45,1,1,1,1"), ["line 4", "cannot be parsed"]),
    ("empty file", lambda p: p.write_text(""), ["empty"]),
    ("header only", lambda p: p.write_text(p.read_text().splitlines()[0] + "\n"), ["no overlap"]),
    ("missing column", lambda p: p.write_text(p.read_text().replace("streamflow", "flow")),
     ["streamflow", "not in the file"]),
    ("binary garbage", lambda p: p.write_bytes(bytes(range(256)) * 4), []),
]


@pytest.mark.parametrize("name, damage, fragments", CASES, ids=[case[0] for case in CASES])
def test_bad_file_fails_with_a_clear_message_and_writes_nothing(tmp_path, data_dir, name, damage, fragments):
    config = _setup(tmp_path, data_dir)
    bad = tmp_path / "src" / "01052500.csv"
    damage(bad)
    with pytest.raises(InputDataError) as caught:
        _run(tmp_path, config)
    message = str(caught.value)
    assert str(bad) in message
    for fragment in fragments:
        assert fragment in message
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_skip_mode_drops_the_bad_station_and_reports_why(tmp_path, data_dir):
    config = _setup(tmp_path, data_dir, on_bad_station="skip")
    replace_line(tmp_path / "src" / "01052500.csv", 5, "1981-01-04,abc,-1.0,1.0,2.0")
    report = _run(tmp_path, config)
    assert report.stations["station"].tolist() == ["01022500"]
    assert "01052500" in report.dropped and "line 5" in report.dropped["01052500"]
    assert report.paths["json"].exists() and "abc" in report.paths["json"].read_text()


def test_station_missing_from_the_table(tmp_path, data_dir):
    config = _setup(tmp_path, data_dir)
    shutil.copy(tmp_path / "src" / "01022500.csv", tmp_path / "src" / "99999999.csv")
    with pytest.raises(InputDataError, match="station '99999999' is not in the station table"):
        _run(tmp_path, config)


def test_no_overlap_with_the_grid(tmp_path, data_dir):
    config = _setup(tmp_path, data_dir)
    config["grid"].update(start="2020-01-01", end="2020-12-31")
    with pytest.raises(InputDataError, match="no overlap with the grid"):
        _run(tmp_path, config)


def test_corrupt_netcdf(tmp_path, data_dir):
    config = _setup(tmp_path, data_dir)
    good = (data_dir / "caravan_format_samples" / "test_caravan_file.nc").read_bytes()
    (tmp_path / "corrupt.nc").write_bytes(good[: len(good) // 3])
    config["sources"].append({"path": str(tmp_path / "corrupt.nc"), "format": "caravan_netcdf", "frequency": "1D",
                              "station_id_prefix": "camels_",
                              "variables": {"t": {"source": "temperature_2m_mean", "units": "degC"}}})
    with pytest.raises(InputDataError, match=r"truncated: header expects \d+ bytes, file has \d+"):
        _run(tmp_path, config)


def test_nonexistent_local_time_is_named(tmp_path, build):
    path = tmp_path / "q.csv"
    path.write_text("time,value\n2015-03-08 01:55,1\n2015-03-08 02:30,1\n2015-03-08 03:05,1\n")
    source = {"path": str(path), "format": "csv", "station": "0001", "time_column": "time", "frequency": "irregular",
              "timestamp": "instantaneous", "timezone": "America/New_York",
              "variables": {"q": {"source": "value", "units": "m3/s"}}}
    with pytest.raises(InputDataError, match="02:30"):
        build.run(source, {"frequency": "1h", "start": "2015-03-08", "end": "2015-03-08"}, [path])


def test_area_needed_but_missing_names_the_station(tmp_path, data_dir):
    config = _setup(tmp_path, data_dir)
    table = tmp_path / "stations.csv"
    table.write_text(table.read_text().replace(",619.1,", ",,"))
    config["sources"][0]["variables"]["streamflow"]["output_units"] = "m3/s"
    with pytest.raises(InputDataError, match="01022500.*|area_km2"):
        _run(tmp_path, config)


def test_cli_prints_one_line_error_and_exits_input_data(tmp_path, data_dir, capsys):
    config = _setup(tmp_path, data_dir)
    replace_line(tmp_path / "src" / "01052500.csv", 5, "1981-01-04,abc,-1.0,1.0,2.0")
    import yaml
    (tmp_path / "ingest.yaml").write_text(yaml.safe_dump(config))
    status = main(["ingest", "--config", str(tmp_path / "ingest.yaml"), "--out", str(tmp_path / "out.nc")])
    error = capsys.readouterr().err
    assert status == ExitCode.INPUT_DATA and "line 5" in error and "Traceback" not in error
    assert not (tmp_path / "out.nc").exists()


MUTATIONS = st.sampled_from(["truncate_line", "text_value", "duplicate_line", "swap_lines", "cut_file",
                             "drop_header", "blank_middle", "extra_field", "garbage_line", "empty"])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutations=st.lists(st.tuples(MUTATIONS, st.integers(2, 120)), min_size=1, max_size=3),
       skip=st.booleans())
def test_fuzzed_files_end_in_an_error_or_a_reported_skip(tmp_path_factory, data_dir, mutations, skip):
    folder = tmp_path_factory.mktemp("fuzz")
    config = _setup(folder, data_dir, on_bad_station="skip" if skip else "fail", rows=60)
    path = folder / "src" / "01052500.csv"
    for mutation, line in mutations:
        _mutate(path, mutation, line)
    try:
        report = _run(folder, config)
    except HydroseqError as error:
        assert not skip, f"skip mode must not fail the run: {error}"
        assert isinstance(error, InputDataError) and str(path) in str(error)
        assert not (folder / "out" / "data.nc").exists()
        return
    if "01052500" not in report.stations["station"].tolist():
        assert "01052500" in report.dropped  # skipped, with a reason
    data = netCDF4.Dataset(folder / "out" / "data.nc")
    assert np.all(np.diff(data["time"][:]) > 0)
    data.close()


def _mutate(path: Path, mutation: str, line: int) -> None:
    lines = path.read_text().splitlines()
    index = min(line, len(lines)) - 1 if lines else 0
    if mutation == "empty":
        lines = []
    elif not lines:
        return
    elif mutation == "truncate_line":
        lines[index] = lines[index][: max(1, len(lines[index]) // 2)]
    elif mutation == "text_value":
        parts = lines[index].split(",")
        parts[-1] = "n/a?"
        lines[index] = ",".join(parts)
    elif mutation == "duplicate_line":
        lines.insert(index, lines[index])
    elif mutation == "swap_lines" and index + 1 < len(lines):
        lines[index], lines[index + 1] = lines[index + 1], lines[index]
    elif mutation == "cut_file":
        lines = lines[:index]
        if lines:
            lines[-1] = lines[-1][: len(lines[-1]) // 2]
    elif mutation == "drop_header":
        lines = lines[1:]
    elif mutation == "blank_middle":
        lines.insert(index, "")
    elif mutation == "extra_field":
        lines[index] += ",7"
    elif mutation == "garbage_line":
        lines[index] = "\x00\xff;;;"
    path.write_text("\n".join(lines) + ("\n" if lines else ""))
