"""Fuzz cases for NetCDF input: truncated files (real copies of a bundled file written by xarray and
netCDF4 in the classic, 64-bit-offset, 64-bit-data and netCDF4 formats, cut at several fractions),
declared and default fill values, and implausible values. Each ends in a clear one-line error naming
the file, a count in the report, or exactly the right missing values; none is silently accepted.
"""

from __future__ import annotations

from pathlib import Path

import netCDF4
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hydroseq.config import IngestConfig, validate_config
from hydroseq.errors import HydroseqError
from hydroseq.ingest import ingest
from hydroseq.ingest.readers.integrity import check_complete

STATION = "01022500"
FORMATS = ["NETCDF3_CLASSIC", "NETCDF3_64BIT_OFFSET", "NETCDF3_64BIT_DATA", "NETCDF4"]
FRACTIONS = [0.999, 0.9, 0.6, 0.3, 0.01]
GRID = {"frequency": "1D", "timezone": "Etc/GMT+8", "start": "1981-01-01", "end": "1981-12-31"}


def config(data_dir: Path, path: Path, variables: dict, **source: object) -> dict:
    base = {"path": str(path), "format": "caravan_netcdf", "frequency": "1D", "timestamp": "interval_start",
            "timezone": "station_standard", "station_id_prefix": "camels_", "variables": variables}
    return {"stations": {"path": str(data_dir / "stations" / "caravan_camels_us.csv"), "ids": [STATION]},
            "sources": [{**base, **source}], "grid": GRID}


CARAVAN_VARIABLES = {"t": {"source": "temperature_2m_mean", "units": "degC"},
                     "p": {"source": "total_precipitation_sum", "units": "mm/d", "aggregation": "sum"}}


def copy_as(data_dir: Path, path: Path, file_format: str) -> Path:
    """The bundled two-basin Caravan NetCDF rewritten in ``file_format`` by xarray / netCDF4."""
    with xr.open_dataset(data_dir / "caravan_format_samples" / "test_caravan_file.nc", decode_times=False) as ds:
        ds.to_netcdf(path, format=file_format.replace("_OFFSET", "") if file_format.endswith("OFFSET") else file_format,
                     engine="netcdf4")
    return path


def run(setup: dict, folder: Path):
    try:
        return "report", ingest(validate_config(setup, IngestConfig), folder / "out.nc", show_progress=False)
    except HydroseqError as error:
        assert not (folder / "out.nc").exists()
        return "error", str(error)


@pytest.mark.parametrize("file_format", FORMATS)
def test_an_uncut_copy_ingests_the_values_of_the_original(tmp_path, data_dir, file_format):
    original = data_dir / "caravan_format_samples" / "test_caravan_file.nc"
    kind, expected = run(config(data_dir, original, CARAVAN_VARIABLES), tmp_path / "a")
    kind_copy, copied = run(config(data_dir, copy_as(data_dir, tmp_path / "c.nc", file_format), CARAVAN_VARIABLES),
                            tmp_path / "b")
    assert kind == kind_copy == "report"
    with xr.open_dataset(expected.output) as a, xr.open_dataset(copied.output) as b:
        for name in ("t", "p"):
            np.testing.assert_array_equal(a[name].values, b[name].values)
            assert float(a[f"coverage_{name}"].values[0]) == 1.0


@pytest.mark.parametrize("fraction", FRACTIONS)
@pytest.mark.parametrize("file_format", FORMATS)
def test_a_truncated_file_is_named_as_truncated(tmp_path, data_dir, file_format, fraction):
    path = copy_as(data_dir, tmp_path / "c.nc", file_format)
    data = path.read_bytes()
    path.write_bytes(data[: int(fraction * len(data))])
    kind, message = run(config(data_dir, path, CARAVAN_VARIABLES), tmp_path)
    assert kind == "error" and "\n" not in message and str(path) in message
    assert f"truncated: header expects {len(data)} bytes, file has {int(fraction * len(data))}" in message \
        or "truncated: the header is incomplete" in message


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(file_format=st.sampled_from(FORMATS[:3]), cut=st.integers(1, 200_000))
def test_any_cut_of_a_classic_file_is_refused(tmp_path_factory, data_dir, file_format, cut):
    folder = tmp_path_factory.mktemp("cut")
    path = copy_as(data_dir, folder / "c.nc", file_format)
    data = path.read_bytes()
    path.write_bytes(data[: max(0, len(data) - cut)])
    with pytest.raises(HydroseqError, match="truncated|the file is empty"):
        check_complete(path)


def write_station_file(path: Path, file_format: str, days: int = 365) -> dict[str, np.ndarray]:
    """A one-station daily file: ``t`` with a declared ``_FillValue``, ``p`` with a declared
    ``missing_value``, ``q`` with neither (its unwritten tail holds netCDF's default fill value).
    Returns where each variable must come out missing."""
    rng = np.random.default_rng(0)
    t, p, q = rng.normal(5, 8, days), rng.gamma(0.6, 3.0, days).round(2), rng.gamma(2.0, 1.5, days)
    missing = {"t": np.zeros(days, bool), "p": np.zeros(days, bool), "q": np.zeros(days, bool)}
    missing["t"][[3, 4, 100]] = True
    missing["p"][[5, 200]] = True
    missing["q"][300:] = True
    with netCDF4.Dataset(path, "w", format=file_format) as ds:
        ds.createDimension("time", days)
        time = ds.createVariable("time", "f8", ("time",))
        time.units = "days since 1981-01-01 00:00:00"
        time[:] = np.arange(days)
        ds.createVariable("t", "f4", ("time",), fill_value=np.float32(-9999.0))[:] = np.where(missing["t"], -9999.0, t)
        precipitation = ds.createVariable("p", "f4", ("time",))
        precipitation.missing_value = np.float32(-999.0)
        precipitation[:] = np.where(missing["p"], -999.0, p)
        ds.createVariable("q", "f4", ("time",))[:300] = q[:300]
    return missing


STATION_VARIABLES = {"t": {"source": "t", "units": "degC"},
                     "p": {"source": "p", "units": "mm/d", "aggregation": "sum"},
                     "q": {"source": "q", "units": "m3/s"}}


@pytest.mark.parametrize("file_format", FORMATS)
def test_fill_values_are_missing_not_values(tmp_path, data_dir, file_format):
    path = tmp_path / "s.nc"
    missing = write_station_file(path, file_format)
    setup = config(data_dir, path, STATION_VARIABLES, format="netcdf_station", station=STATION, timezone="UTC",
                   station_id_prefix="")
    setup["grid"] = dict(GRID, timezone="UTC")
    kind, report = run(setup, tmp_path)
    assert kind == "report"
    assert report.stations["marked_missing"].tolist() == [0]
    with xr.open_dataset(report.output) as ds:
        for name, expected in missing.items():
            values = ds[name].sel(station=STATION).values
            np.testing.assert_array_equal(np.isnan(values), expected)
            assert float(ds[f"coverage_{name}"].values[0]) == pytest.approx(1 - expected.mean())
            assert np.nanmax(np.abs(values)) < 1e3


@pytest.mark.parametrize("policy", ["fail", "mark_missing"])
@pytest.mark.parametrize("name, value", [("p", -9999.0), ("p", np.inf), ("t", 1e30), ("q", -np.inf), ("t", -273.15),
                                         ("q", -5.0)])
def test_undeclared_codes_and_implausible_values_in_netcdf(tmp_path, data_dir, policy, name, value):
    path = tmp_path / "s.nc"
    write_station_file(path, "NETCDF4")
    with netCDF4.Dataset(path, "a") as ds:
        ds[name][42] = value
    setup = config(data_dir, path, STATION_VARIABLES, format="netcdf_station", station=STATION, timezone="UTC",
                   station_id_prefix="", on_implausible=policy)
    setup["grid"] = dict(GRID, timezone="UTC")
    kind, outcome = run(setup, tmp_path)
    if policy == "fail":
        assert kind == "error" and "\n" not in outcome and str(path) in outcome
        assert f"variable {name}" in outcome and str(pd.Timestamp("1981-02-12")) in outcome
        return
    assert kind == "report"
    assert outcome.stations[f"marked_missing_{name}"].tolist() == [1]
    with xr.open_dataset(outcome.output) as ds:
        assert np.isnan(ds[name].values[0, 42])
