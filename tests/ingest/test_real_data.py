"""End-to-end ingests of the bundled real data, checked against the raw files by independent means."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from hydroseq.config import IngestConfig, load_config, validate_config
from hydroseq.config.ingest import GridConfig, SourceConfig
from hydroseq.grid import GridSpec
from hydroseq.ingest import SourcePlan, build_grid, dataset_checksum, ingest, ingest_station
from hydroseq.ingest.stations import Station

FT3 = 0.028316846592


@pytest.fixture(scope="module")
def ingested(repo_root, tmp_path_factory):
    """Run the four bundled configs once; returns {name: (dataset, report)}."""
    out = tmp_path_factory.mktemp("real")
    results = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(repo_root)
        for name in ("caravan_daily", "camels_us", "charlotte_hourly", "charlotte_daily"):
            config = load_config(f"configs/ingest_{name}.yaml", IngestConfig)
            report = ingest(config, out / f"{name}.nc", show_progress=False)
            results[name] = (xr.open_dataset(out / f"{name}.nc"), report)
    yield results
    for ds, _ in results.values():
        ds.close()


def test_caravan_daily_follows_the_dataset_contract(ingested):
    ds, report = ingested["caravan_daily"]
    assert ds.sizes == {"station": 31, "time": 12418, "nv": 2}  # nv: the two ends of time_bnds
    assert ds["station"].values[0] == "01022500"  # text, leading zero kept
    times = pd.DatetimeIndex(ds["time"].values)
    assert times[0] == pd.Timestamp("1981-01-02 08:00") and (np.diff(times) == pd.Timedelta("1D")).all()
    assert ds.attrs["Conventions"] == "CF-1.8" and ds.attrs["featureType"] == "timeSeries"
    grid = GridSpec.from_attrs(ds.attrs)
    assert grid == GridSpec("1D", "Etc/GMT+8") and grid.to_attrs().items() <= ds.attrs.items()  # every one written
    assert len(json.loads(ds.attrs["source_files"])) == 31 and "stations:" in ds.attrs["ingest_config"]
    assert ds.attrs["dataset_checksum"] == dataset_checksum(ds)
    assert ds["streamflow"].dtype == np.float32 and ds["streamflow"].attrs["units"] == "mm d-1"
    assert ds["total_precipitation_sum"].attrs["standard_name"] == "lwe_thickness_of_precipitation_amount"  # mm
    for name in ("area_km2",):
        assert name in ds.coords
    for name in ("elev_mean_m", "slope_mean_m_per_km", "p_mean", "pet_mean", "aridity", "frac_snow",
                 "moisture_index", "seasonality", "high_prec_freq", "high_prec_dur", "low_prec_freq", "low_prec_dur"):
        assert ds[name].attrs["hydroseq_role"] == "static" and ds[name].dims == ("station",)
    assert all(path.exists() and path.stat().st_size > 0 for path in report.paths.values())


def test_caravan_values_are_the_csv_values_on_their_local_days(ingested, data_dir):
    ds, report = ingested["caravan_daily"]
    for station in ("01022500", "09505800", "14325000"):  # Eastern, Arizona, Pacific
        raw = pd.read_csv(data_dir / "daily_caravan_camels_us" / f"{station}.csv")
        for name in ("total_precipitation_sum", "temperature_2m_mean", "potential_evaporation_sum", "streamflow"):
            np.testing.assert_array_equal(ds[name].sel(station=station).values, raw[name].to_numpy(np.float32))
        expected_coverage = raw["streamflow"].notna().mean()
        assert ds["coverage_streamflow"].sel(station=station).item() == pytest.approx(expected_coverage, abs=1e-6)
    row = report.stations.set_index("station").loc["01022500"]
    assert row["last_valid"] == pd.Timestamp("2014-10-01 08:00")  # streamflow ends 2014-09-30 here
    assert row["longest_record"] == 12326


def test_camels_text_streamflow_equals_caravan_within_its_rounding(ingested):
    camels, _ = ingested["camels_us"]
    caravan, _ = ingested["caravan_daily"]
    assert camels["streamflow"].attrs["units"] == "mm d-1"
    for station in camels["station"].values:
        ours = camels["streamflow"].sel(station=station).values
        theirs = caravan["streamflow"].sel(station=station, time=camels["time"]).values
        assert np.nanmax(np.abs(ours - theirs)) <= 0.005 + 1e-6  # Caravan's 2-decimal rounding


def test_charlotte_hourly_discharge_is_the_mean_of_the_right_utc_hour(ingested, data_dir):
    ds, _ = ingested["charlotte_hourly"]
    raw = pd.read_csv(data_dir / "subdaily_charlotte_nc" / "obs_q_02146562.csv")
    wall = pd.to_datetime(raw["datetime"], format="%m/%d/%Y %H:%M")
    q = ds["streamflow"].sel(station="02146562").to_series()
    for month, utc_offset in ((2, 5), (7, 4)):  # EST in winter, EDT in summer
        label = q[q.index.month == month].idxmax()
        local_end = label - pd.Timedelta(hours=utc_offset)
        inside = (wall > local_end - pd.Timedelta("1h")) & (wall <= local_end)
        assert inside.sum() == 12
        assert q[label] == pytest.approx(raw.loc[inside, "90100_00060"].mean() * FT3, rel=1e-6)


def test_charlotte_fall_back_hours_are_complete_and_the_missing_day_is_nan(ingested):
    ds, _ = ingested["charlotte_hourly"]
    q = ds["streamflow"].sel(station="02146562").to_series()
    assert q["2015-11-01 04:00":"2015-11-01 08:00"].notna().all()  # duplicated wall-clock hour resolved
    assert q["2015-03-08 05:00":"2015-03-08 09:00"].notna().all()  # spring-forward gap is not a data gap
    assert q["2015-11-16 06:00":"2015-11-17 05:00"].isna().all()   # the day missing from the file


def test_charlotte_daily_rain_days_end_at_0900_est(ingested, data_dir):
    ds, _ = ingested["charlotte_daily"]
    assert pd.Timestamp(ds["time"].values[0]) == pd.Timestamp("2015-01-07 14:00")
    nldas = xr.open_dataset(data_dir / "subdaily_charlotte_nc" / "35.313-80.813.nc")
    rain = nldas["pptrate"].isel(hru=0).to_series() * 3600.0  # mm per hour, stamped at the hour's start
    day = pd.Timestamp("2015-07-14 14:00")  # rain day 07-13 09:00 .. 07-14 09:00 EST
    hours = rain[(rain.index > day - pd.Timedelta("25h")) & (rain.index <= day - pd.Timedelta("1h"))]
    assert len(hours) == 24
    expected = hours.sum()
    got = ds["total_precipitation_sum"].sel(station="02146562", time=day).item()
    assert got == pytest.approx(expected, rel=1e-5)
    nldas.close()


def _station(station_id: str) -> Station:
    return Station(station_id, "x", 44.6, -67.9, 619.1, "America/New_York")


def _one(source: dict, grid: dict, station: Station, files: list) -> dict:
    config = validate_config(source, SourceConfig)
    result = ingest_station(station, [SourcePlan(config, tuple(files))], build_grid(validate_config(grid, GridConfig)))
    return result.values


def test_caravan_netcdf_layouts_match_the_caravan_csv(data_dir):
    grid = {"frequency": "1D", "timezone": "Etc/GMT+8", "start": "1981-01-01", "end": "1981-12-31"}
    csv = pd.read_csv(data_dir / "daily_caravan_camels_us" / "01022500.csv", nrows=365)
    multi = {"path": "x", "format": "caravan_netcdf", "frequency": "1D", "timestamp": "interval_start",
             "timezone": "station_standard", "station_id_prefix": "camels_",
             "variables": {"p": {"source": "total_precipitation_sum", "units": "mm/d", "aggregation": "sum"},
                           "pet": {"source": "potential_evaporation_sum", "units": "mm/d", "aggregation": "sum",
                                   "valid_min": -20}}}
    values = _one(multi, grid, _station("01022500"), [data_dir / "caravan_format_samples" / "test_caravan_file.nc"])
    np.testing.assert_allclose(values["p"], csv["total_precipitation_sum"], atol=5e-3)
    np.testing.assert_allclose(values["pet"], csv["potential_evaporation_sum"], atol=5e-3)
    single = dict(multi, station="01022500", variables={"q": {"source": "streamflow", "units": "mm/d"}})
    values = _one(single, grid, _station("01022500"),
                  [data_dir / "caravan_format_samples" / "camels_01022500_minimal.nc"])
    np.testing.assert_allclose(values["q"], csv["streamflow"], atol=5e-3)


def test_nextgen_netcdf_with_per_station_time_equals_its_csv_twin(data_dir):
    """cats-*.nc stores Time(catchment-id, time) in ns and ids in a variable; cat-67 also ships as CSV."""
    folder = data_dir / "subdaily_charlotte_nc"
    grid = {"frequency": "1D", "timezone": "Etc/GMT+5", "day_boundary": "09:00",
            "start": "2015-12-01", "end": "2015-12-29"}
    common = {"path": "x", "frequency": "1h", "timestamp": "interval_end", "timezone": "UTC",
              "variables": {"p": {"source": "APCP_surface", "units": "mm", "aggregation": "sum"},
                            "t": {"source": "TMP_2maboveground", "units": "K", "aggregation": "mean"}}}
    from_nc = _one(dict(common, format="netcdf_station", station_dim="catchment-id", station_id_variable="ids",
                        time_variable="Time", station_map={"cat-67": "02146562"}),
                   grid, _station("02146562"), [folder / "cats-27_52_67-2015_12_01-2015_12_30.nc"])
    from_csv = _one(dict(common, format="csv", station="02146562", time_column="time"),
                    grid, _station("02146562"), [folder / "cat-67_2015-12-01.csv"])
    assert np.isfinite(from_nc["p"]).sum() >= 28 and np.nanmax(from_nc["p"]) > 1.0
    np.testing.assert_allclose(from_nc["p"], from_csv["p"], rtol=1e-5)
    np.testing.assert_allclose(from_nc["t"], from_csv["t"], rtol=1e-5)
    assert np.nanmean(from_nc["t"]) < 30  # converted from K to degC
