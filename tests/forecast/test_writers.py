"""Forecast files: CF-NetCDF structure, CSV layout, atomic and byte-identical writes; the table of formats."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import time
from pathlib import Path

import netCDF4
import numpy as np
import pandas as pd
import pytest
import xarray as xr

from hydroseq import __version__
from hydroseq.cli import main
from hydroseq.errors import ConfigError, ExitCode
from hydroseq.fileio import atomic_path
from hydroseq.forecast import run_forecast
from hydroseq.forecast.result import ForecastResult
from hydroseq.forecast.writers import WRITERS, ForecastWriter, output_path, output_writers, refuse_for_hindcast
from hydroseq.forecast.writers.csv import CSV_COLUMNS, format_value, write_forecast_csv
from hydroseq.forecast.writers.netcdf import write_forecast_netcdf


def _result(n_issue: int = 1, leads: tuple[int, ...] = (1, 2, 3), step: str = "1D") -> ForecastResult:
    issues = np.array(["2014-10-01T08:00"], dtype="datetime64[ns]") + np.arange(n_issue) * np.timedelta64(1, "D")
    values = np.linspace(0.01, 12.5, n_issue * 3 * len(leads), dtype=np.float32).reshape(n_issue, 3, len(leads))
    values[:, 2, :] = np.nan  # the third station could not be forecast
    return ForecastResult(
        issue_times=issues, stations=("01022500", "01547700", "09999999"), leads=np.array(leads),
        step=pd.Timedelta(step), values=values, variable="streamflow", units="mm/d",
        long_name="forecast of streamflow", attributes={"model_run_id": "abc123"},
        skipped={"09999999": "no valid input"}, station_names=("A", "B", "C"),
        lats=np.array([46.7, 41.5, 37.0]), lons=np.array([-68.1, -77.4, -80.0]),
    )


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_netcdf_is_cf_forecast_layout(tmp_path: Path) -> None:
    result = _result()
    path = write_forecast_netcdf(result, tmp_path / "f.nc")
    with xr.open_dataset(path) as ds:
        assert ds["streamflow"].dims == ("station", "lead")
        assert ds["streamflow"].attrs["units"] == "mm/d"
        assert ds["forecast_reference_time"].values == np.datetime64("2014-10-01T08:00", "ns")
        assert ds["forecast_period"].values.tolist() == [24.0, 48.0, 72.0]  # hours
        assert ds["time"].dims == ("lead",)
        assert ds["time"].values[0] == np.datetime64("2014-10-02T08:00", "ns")
        assert list(ds["station"].values) == list(result.stations)
        assert ds.attrs["Conventions"] == "CF-1.8" and ds.attrs["model_run_id"] == "abc123"
        np.testing.assert_array_equal(ds["streamflow"].values, result.values[0])
    with netCDF4.Dataset(path) as nc:
        coordinates = nc["streamflow"].coordinates.split()
        assert {"forecast_reference_time", "forecast_period", "time"} <= set(coordinates)
        assert nc["forecast_reference_time"].standard_name == "forecast_reference_time"
        assert nc["forecast_period"].standard_name == "forecast_period" and nc["forecast_period"].units == "hours"
        assert nc["time"].standard_name == "time" and nc["time"].units.startswith("seconds since 1970-01-01")
        assert nc["station"].cf_role == "timeseries_id"
        assert nc["lat"].units == "degrees_north"


def test_hindcast_netcdf_has_an_issue_time_dimension(tmp_path: Path) -> None:
    result = _result(n_issue=4, leads=(0,), step="1h")
    with xr.open_dataset(write_forecast_netcdf(result, tmp_path / "h.nc")) as ds:
        assert ds["streamflow"].dims == ("forecast_reference_time", "station", "lead")
        assert ds["time"].dims == ("forecast_reference_time", "lead")
        np.testing.assert_array_equal(ds["time"].values[:, 0], result.issue_times)  # lead 0: valid at issue
        assert ds["forecast_period"].values[0] == 0.0


def test_rewrites_are_byte_identical(tmp_path: Path) -> None:
    result = _result(n_issue=2)
    first_nc = write_forecast_netcdf(result, tmp_path / "f.nc")
    first_csv = write_forecast_csv(result, tmp_path / "f.csv")
    hashes = _sha(first_nc), _sha(first_csv)
    time.sleep(1.1)  # a creation time stored at one-second resolution would show up now
    write_forecast_netcdf(result, tmp_path / "f.nc")
    write_forecast_csv(result, tmp_path / "f.csv")
    assert (_sha(first_nc), _sha(first_csv)) == hashes
    other = _result(n_issue=2, leads=(1, 2, 4))
    assert _sha(write_forecast_netcdf(other, tmp_path / "g.nc")) != hashes[0]


def test_failed_write_keeps_the_previous_file(tmp_path: Path) -> None:
    path = write_forecast_netcdf(_result(), tmp_path / "f.nc")
    before = _sha(path)
    broken = _result()
    object.__setattr__(broken, "variable", "")  # netCDF4 refuses an empty variable name mid-write
    with pytest.raises(RuntimeError):
        write_forecast_netcdf(broken, path)
    assert _sha(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.nc"]  # no temporary file left behind


def test_csv_rows(tmp_path: Path) -> None:
    result = _result(n_issue=2)
    with open(write_forecast_csv(result, tmp_path / "f.csv"), newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0]) == (*CSV_COLUMNS, "station_name")
    assert len(rows) == 2 * 2 * 3  # issue times x forecast stations x leads; the NaN station is left out
    assert {row["station"] for row in rows} == {"01022500", "01547700"}
    first = rows[0]
    assert first == {"station": "01022500", "issue_time": "2014-10-01T08:00:00Z", "lead": "1",
                     "valid_time": "2014-10-02T08:00:00Z", "value": format_value(result.values[0, 0, 0]),
                     "station_name": "A"}
    values = np.array([float(row["value"]) for row in rows], dtype=np.float32)
    np.testing.assert_array_equal(values, result.values[:, :2, :].reshape(-1))  # exact float32 round trip


def test_csv_has_a_column_per_ensemble_member(tmp_path: Path) -> None:
    result = _result()
    members = np.stack([result.values * 0.9, result.values * 1.1], axis=-1)  # [issue, station, lead, member]
    path = write_forecast_csv(dataclasses.replace(result, members=members), tmp_path / "f.csv")
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0]) == (*CSV_COLUMNS, "value_member0", "value_member1", "station_name")
    for member in range(2):
        written = np.array([float(row[f"value_member{member}"]) for row in rows], dtype=np.float32)
        np.testing.assert_array_equal(written, members[:, :2, :, member].reshape(-1))


def test_value_format_round_trips_float32() -> None:
    for value in np.float32([0.1, 1 / 3, 1e-7, 12345.678, -0.0]):
        assert np.float32(format_value(value)) == value
    assert format_value(np.float32("nan")) == ""


def test_shape_mismatch_is_refused() -> None:
    with pytest.raises(ValueError, match="issue time, station, lead"):
        ForecastResult(np.array(["2014-01-01"], "datetime64[ns]"), ("a",), np.array([1, 2]), pd.Timedelta("1D"),
                       np.zeros((1, 1, 3), np.float32), "q", "mm/d")


def test_cf_attributes_history_and_interval_bounds(tmp_path: Path) -> None:
    result = dataclasses.replace(_result(), units="m3 s-1", standard_name="water_volume_transport_in_river_channel")
    with netCDF4.Dataset(write_forecast_netcdf(result, tmp_path / "f.nc")) as nc:
        assert nc.featureType == "timeSeries" and nc["streamflow"].standard_name == result.standard_name
        assert nc.history == (f"hydroseq {__version__} forecast: issue times 2014-10-01T08:00Z..2014-10-01T08:00Z; "
                              "model_run_id abc123")  # no clock time: reruns stay byte-identical
        assert nc["time"].dtype == np.float64 and nc["time"].bounds == "time_bnds"
        np.testing.assert_array_equal(nc["time_bnds"][:, 1] - nc["time_bnds"][:, 0], 86400.0)
        np.testing.assert_array_equal(nc["time_bnds"][:, 1], nc["time"][:])
        np.testing.assert_array_equal(nc["forecast_period_bnds"][:], [[0.0, 24.0], [24.0, 48.0], [48.0, 72.0]])
    with netCDF4.Dataset(write_forecast_netcdf(_result(n_issue=3), tmp_path / "h.nc")) as nc:
        assert nc.dimensions["forecast_reference_time"].isunlimited() and "featureType" not in nc.ncattrs()
        assert "time_bnds" not in nc.variables and nc["forecast_period"].bounds == "forecast_period_bnds"
        assert "streamflow" in nc.variables and "standard_name" not in nc["streamflow"].ncattrs()  # mm/d: none


@pytest.mark.parametrize(("units", "step", "per_mm_km2"), [("mm/d", "1D", 1000 / 86400), ("mm h-1", "1h", 1000 / 3600),
                                                          ("mm", "3h", 1000 / 10800)])
def test_depth_rates_come_with_m3s_through_the_area(tmp_path: Path, units: str, step: str, per_mm_km2: float) -> None:
    """Q[m3/s] = Q[mm/d] * area[km2] * 1000 / 86400, per the grid step for an amount per step; a station
    without an area has no m3/s."""
    levels = (0.05, 0.5, 0.95)
    base = _result(n_issue=2, step=step)
    spread = np.stack([base.values * 0.5, base.values, base.values * 2], axis=-1)
    area = np.array([587.68, 114.17, np.nan])
    result = dataclasses.replace(base, units=units, area_km2=area, quantiles=spread, quantile_levels=levels,
                                 members=spread[..., :2])
    with xr.open_dataset(write_forecast_netcdf(result, tmp_path / "h.nc")) as ds:
        np.testing.assert_array_equal(ds["area_km2"].values, area)
        assert ds["streamflow_m3s"].attrs["units"] == "m3 s-1"
        assert ds["streamflow_m3s"].attrs["standard_name"] == "water_volume_transport_in_river_channel"
        for name in ("streamflow", "streamflow_quantile", "streamflow_member"):
            expected = (ds[name] * ds["area_km2"] * per_mm_km2).transpose(*ds[f"{name}_m3s"].dims)
            np.testing.assert_allclose(ds[f"{name}_m3s"].values, expected.values, rtol=1e-6)
        assert np.isnan(ds["streamflow_m3s"].values[:, 2]).all()  # no area, no m3/s
    with open(write_forecast_csv(result, tmp_path / "h.csv"), newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0])[-8:] == ["value_m3s", "value_q05_m3s", "value_q50_m3s", "value_q95_m3s",
                                  "value_member0_m3s", "value_member1_m3s", "station_name", "area_km2"]
    for row in rows:
        for column in ("value", "value_q05", "value_q95", "value_member1"):
            expected = np.float32(float(row[column]) * float(row["area_km2"]) * per_mm_km2)
            np.testing.assert_allclose(np.float32(row[f"{column}_m3s"]), expected, rtol=1e-6)


def test_a_target_in_m3s_is_its_own_m3s_and_needs_no_area(tmp_path: Path) -> None:
    result = dataclasses.replace(_result(), units="m3 s-1")
    with xr.open_dataset(write_forecast_netcdf(result, tmp_path / "f.nc")) as ds:
        assert "area_km2" not in ds
        np.testing.assert_array_equal(ds["streamflow_m3s"].values, ds["streamflow"].values)


def test_text_coordinates_are_character_arrays_that_xarray_indexes(tmp_path: Path) -> None:
    """station(station, station_length) is no CF coordinate variable (CF-1.8 wants those numeric) and
    still the text index xarray selects by."""
    path = write_forecast_netcdf(_result(), tmp_path / "f.nc")
    with netCDF4.Dataset(path) as nc:
        assert nc["station"].dimensions == ("station", "station_length") and nc["station"].dtype == np.dtype("S1")
    with xr.open_dataset(path) as ds:
        assert float(ds.sel(station="01547700", lead=2)["streamflow"]) == float(ds["streamflow"].values[1, 1])


def test_the_default_file_names_the_issue_by_its_local_day_as_the_daily_job_does(exported, ingested, tmp_path,
                                                                                   monkeypatch):
    """One name per forecast file: ``hydroseq forecast`` without ``--out`` writes ``forecast_<local day>`` (the
    daily job's and the demo's name), a hindcast ``hindcast_<first local day>_<last local day>``."""
    monkeypatch.chdir(tmp_path)
    single = run_forecast(exported, ingested, "2014-09-30", show_progress=False)
    assert single.published is not None
    assert Path(single.published.forecast_files[0]) == Path("runs/forecast/forecast_2014-09-30.nc")
    assert (tmp_path / "runs" / "forecast" / "forecast_2014-09-30.csv").exists()
    ranged = run_forecast(exported, ingested, "2014-09-01..2014-09-10", show_progress=False)
    assert ranged.published is not None
    assert Path(ranged.published.forecast_files[0]) == Path("runs/forecast/hindcast_2014-09-01_2014-09-10.nc")


def test_netcdf_and_csv_are_always_written_and_other_formats_once_each_in_table_order() -> None:
    assert [writer.name for writer in output_writers()] == ["netcdf", "csv"]
    assert [writer.name for writer in output_writers(["pi-xml", "csv", "pi-xml"])] == ["netcdf", "csv", "pi-xml"]
    assert [writer.name for writer in output_writers("pi-xml")] == ["netcdf", "csv", "pi-xml"]  # one name
    assert [output_path(Path("out/f.nc"), writer) for writer in output_writers(["pi-xml"])] == [
        Path("out/f.nc"), Path("out/f.csv"), Path("out/f.xml")]
    with pytest.raises(ConfigError, match=r"^--format xlsx: not an output format; the formats are netcdf, csv, "):
        output_writers(["pi-xml", "xlsx"])
    refuse_for_hindcast(output_writers())
    with pytest.raises(ConfigError, match="--format pi-xml: .* one issue time, not a hindcast"):
        refuse_for_hindcast(output_writers(["pi-xml"]))


def _write_json(result: ForecastResult, path: Path) -> Path:
    """A format of the test suite's own: per station its forecast values."""
    forecast = {station: result.values[0, s].tolist() for s, station in enumerate(result.stations)
                if np.isfinite(result.values[0, s]).any()}
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps({"issue_time": str(result.issue_times[0]), "forecast": forecast}))
    return path


def test_a_format_added_to_the_table_from_outside_is_written_into_the_set(exported, ingested, tmp_path, monkeypatch):
    """One line in ``WRITERS`` (here from the test suite alone) makes ``hydroseq forecast --format`` write it."""
    monkeypatch.setitem(WRITERS, "json", ForecastWriter("json", ".json", _write_json))
    out = tmp_path / "f.nc"
    assert main(["forecast", "--model", str(exported), "--data", str(ingested), "--issue-time", "2014-06-30",
                 "--out", str(out), "--format", "json"]) == ExitCode.OK
    written = json.loads(out.with_suffix(".json").read_text())
    manifest = json.loads(out.with_name("f.manifest.json").read_text())
    assert sorted(entry["name"] for entry in manifest["files"]) == ["f.csv", "f.json", "f.nc"]
    assert not out.with_suffix(".xml").exists()
    assert written["issue_time"] == "2014-07-01T08:00:00.000000000"
    with xr.open_dataset(out) as ds:
        assert written["forecast"] == {str(station): [float(value) for value in values]
                                       for station, values in zip(ds["station"].values, ds["streamflow"].values,
                                                                  strict=True)}
