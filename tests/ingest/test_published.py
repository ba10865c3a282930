"""Stations read from Caravan and CAMELS-US as published (``hydroseq.ingest.published``).

The bundled data are the tests. ``data/camels_us_sample`` is CAMELS-US in its published layout and
is read where it lies. For Caravan, the fixtures below rearrange the real bundled files into the
published layout: ``data/daily_caravan_camels_us/<id>.csv`` becomes
``timeseries/csv/camels/camels_<id>.csv`` (copied byte for byte), and the columns of
``data/daily_caravan_camels_us/attributes.csv`` (Caravan's own values, see data/README.md) are
renamed and split into ``attributes/camels/attributes_other_camels.csv`` and
``attributes_caravan_camels.csv`` (the CAMELS-only columns huc_02, area_gages2_km2, elev_mean_m and
slope_mean_m_per_km, and Caravan's country column, are left out). The Caravan NetCDF samples
``data/caravan_format_samples/*.nc`` are placed as ``timeseries/netcdf/camels/camels_<id>.nc``.
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from hydroseq.config import IngestConfig, load_config
from hydroseq.config.ingest import StationsConfig
from hydroseq.errors import InputDataError
from hydroseq.ingest import ingest, load_stations
from tests.fixtures import CARAVAN_DIR, REPO_ROOT, caravan_ingest_config

CARAVAN_INDICES = ["p_mean", "pet_mean", "aridity", "frac_snow", "moisture_index", "seasonality",
                   "high_prec_freq", "high_prec_dur", "low_prec_freq", "low_prec_dur"]
BASINS = ["01022500", "09505800", "14325000"]  # Eastern, Arizona, Pacific
CAMELS_SAMPLE = REPO_ROOT / "data" / "camels_us_sample"
FORMAT_SAMPLES = REPO_ROOT / "data" / "caravan_format_samples"


def write_caravan_attributes(root: Path, attributes: pd.DataFrame) -> Path:
    """``attributes/camels/attributes_{other,caravan}_camels.csv`` from rows shaped like the bundled
    ``attributes.csv``; returns the folder."""
    folder = root / "attributes" / "camels"
    folder.mkdir(parents=True, exist_ok=True)
    gauge_id = "camels_" + attributes["gauge_id"]
    other = pd.DataFrame({"gauge_id": gauge_id, "gauge_name": attributes["gauge_name"],
                          "gauge_lat": attributes["gauge_lat"], "gauge_lon": attributes["gauge_lon"],
                          "area": attributes["area_km2"]})
    other.to_csv(folder / "attributes_other_camels.csv", index=False)
    pd.concat([gauge_id, attributes[CARAVAN_INDICES]], axis=1).to_csv(folder / "attributes_caravan_camels.csv",
                                                                      index=False)
    return folder


def bundled_attributes() -> pd.DataFrame:
    return pd.read_csv(CARAVAN_DIR / "attributes.csv", dtype={"gauge_id": str, "huc_02": str})


@pytest.fixture(scope="module")
def caravan_root(tmp_path_factory) -> Path:
    """A Caravan root rearranged from the bundled files (see the module docstring)."""
    root = tmp_path_factory.mktemp("caravan")
    write_caravan_attributes(root, bundled_attributes())
    csv_folder = root / "timeseries" / "csv" / "camels"
    csv_folder.mkdir(parents=True)
    for basin in (CARAVAN_DIR / "basins.txt").read_text().split():
        shutil.copyfile(CARAVAN_DIR / f"{basin}.csv", csv_folder / f"camels_{basin}.csv")
    netcdf_folder = root / "timeseries" / "netcdf" / "camels"
    netcdf_folder.mkdir(parents=True)
    shutil.copyfile(FORMAT_SAMPLES / "camels_01022500_minimal.nc", netcdf_folder / "camels_01022500.nc")
    return root


def published_caravan_config(root: Path, start: dt.date, end: dt.date, basins: list[str]) -> IngestConfig:
    """``configs/ingest_caravan_published.yaml`` pointed at ``root``, on ``start..end`` for ``basins``."""
    config = load_config(REPO_ROOT / "configs" / "ingest_caravan_published.yaml", IngestConfig)
    config.stations.root = root
    config.stations.ids = basins
    config.sources[0].path = str(root / "timeseries" / "csv" / "camels" / "camels_*.csv")
    config.grid.start, config.grid.end = start, end
    return config


def camels_config(name: str) -> IngestConfig:
    """A bundled CAMELS-US config with its paths made absolute."""
    config = load_config(REPO_ROOT / "configs" / name, IngestConfig)
    stations = config.stations
    if stations.path is not None:
        stations.path = REPO_ROOT / stations.path
    else:
        assert stations.root is not None and isinstance(stations.ids, Path)
        stations.root, stations.ids = REPO_ROOT / stations.root, REPO_ROOT / stations.ids
    for source in config.sources:
        source.path = str(REPO_ROOT / source.path)
    return config


def assert_same_arrays(published: xr.Dataset, table: xr.Dataset, names: list[str]) -> None:
    for name in names:
        np.testing.assert_array_equal(published[name].values, table[name].values, err_msg=name)


def test_a_caravan_root_ingests_as_the_hand_made_table_does(caravan_root, tmp_path):
    start, end = dt.date(2012, 1, 1), dt.date(2014, 12, 31)
    ingest(caravan_ingest_config(start, end, BASINS), tmp_path / "table.nc", show_progress=False)
    ingest(published_caravan_config(caravan_root, start, end, BASINS), tmp_path / "published.nc",
           show_progress=False)
    with xr.open_dataset(tmp_path / "table.nc") as table, xr.open_dataset(tmp_path / "published.nc") as published:
        dynamic = [name for name in table.data_vars if table[name].dims == ("station", "time")]
        assert len(dynamic) == 4
        assert_same_arrays(published, table, ["station", "time", "time_bnds", "station_name", "lat", "lon",
                                              "area_km2", *dynamic, *(f"coverage_{name}" for name in dynamic),
                                              *CARAVAN_INDICES])
        assert list(published["station"].values) == BASINS


def test_the_caravan_netcdf_copy_ingests_with_the_station_from_its_file_name(caravan_root, tmp_path):
    start, end = dt.date(2013, 1, 1), dt.date(2014, 9, 30)  # the NetCDF sample ends 2014-09-30
    config = published_caravan_config(caravan_root, start, end, ["01022500"])
    csv_source = config.sources[0]
    variables = {name: csv_source.variables[name] for name in ("total_precipitation_sum", "temperature_2m_mean",
                                                               "streamflow")}
    config.sources = [csv_source.model_copy(update={
        "name": "caravan NetCDF", "format": "caravan_netcdf", "station_from_filename": True, "variables": variables,
        "path": str(caravan_root / "timeseries" / "netcdf" / "camels" / "camels_*.nc")})]
    ingest(config, tmp_path / "netcdf.nc", show_progress=False)
    ingest(published_caravan_config(caravan_root, start, end, ["01022500"]), tmp_path / "csv.nc", show_progress=False)
    with xr.open_dataset(tmp_path / "netcdf.nc") as netcdf, xr.open_dataset(tmp_path / "csv.nc") as csv:
        for name in variables:  # data/README.md: the two copies agree to |d| < 4e-6 on the same days
            np.testing.assert_allclose(netcdf[name].values, csv[name].values, atol=1e-5, err_msg=name)
            assert np.isfinite(netcdf[name].values).all()


def test_zones_found_offline_are_those_of_the_hand_made_table(caravan_root):
    stations = load_stations(StationsConfig(dataset="caravan", root=caravan_root, source="camels"))
    table = pd.read_csv(REPO_ROOT / "data" / "stations" / "caravan_camels_us.csv", dtype={"station_id": str})
    assert len(stations) == len(table) == 31
    assert [s.id for s in stations] == list(table["station_id"])
    assert [s.timezone for s in stations] == list(table["timezone"])
    assert [s.name for s in stations] == list(table["name"])
    np.testing.assert_array_equal([(s.lat, s.lon, s.area_km2) for s in stations],
                                  table[["lat", "lon", "area_km2"]].to_numpy())


def test_zones_found_offline_are_caravans_own(tmp_path):
    """``test_caravan_file.nc`` carries Caravan's time zone of each basin beside its coordinates."""
    with xr.open_dataset(FORMAT_SAMPLES / "test_caravan_file.nc") as ds:
        text = {name: [item.decode() for item in ds[name].values] for name in ("basin_id", "name", "timezone")}
        other = pd.DataFrame({"gauge_id": text["basin_id"], "gauge_name": text["name"], "gauge_lat": ds["lat"].values,
                              "gauge_lon": ds["lon"].values, "area": ds["area"].values})
    (tmp_path / "attributes" / "camels").mkdir(parents=True)
    other.to_csv(tmp_path / "attributes" / "camels" / "attributes_other_camels.csv", index=False)
    stations = load_stations(StationsConfig(dataset="caravan", root=tmp_path, source="camels"))
    assert [s.id for s in stations] == ["01022500", "03439000"]
    assert [s.timezone for s in stations] == text["timezone"]


def test_the_camels_us_sample_ingests_as_the_hand_made_table_does(tmp_path):
    ingest(camels_config("ingest_camels_us.yaml"), tmp_path / "table.nc", show_progress=False)
    ingest(camels_config("ingest_camels_us_published.yaml"), tmp_path / "published.nc", show_progress=False)
    with xr.open_dataset(tmp_path / "table.nc") as table, xr.open_dataset(tmp_path / "published.nc") as published:
        dynamic = [name for name in table.data_vars if table[name].dims == ("station", "time")]
        assert len(dynamic) == 6
        assert_same_arrays(published, table, ["station", "time", "time_bnds", "station_name", "lat", "lon", "area_km2",
                                              *dynamic,
                                              *(f"coverage_{name}" for name in dynamic)])
        # the same CAMELS topography under CAMELS' names; p_mean etc. are CAMELS' own indices in the
        # published ingest and Caravan's in the hand-made table, so they differ
        np.testing.assert_array_equal(published["elev_mean"].values, table["elev_mean_m"].values)
        np.testing.assert_array_equal(published["slope_mean"].values, table["slope_mean_m_per_km"].values)


def test_camels_us_with_huc_folders_and_without_forcing(tmp_path):
    """The full download keeps the forcing in one folder per HUC-02 region; the sample has none."""
    config = camels_config("ingest_camels_us_published.yaml").stations
    huc = tmp_path / "huc"
    shutil.copytree(CAMELS_SAMPLE / "camels_attributes_v2.0", huc / "camels_attributes_v2.0")
    regions = pd.read_csv(huc / "camels_attributes_v2.0" / "camels_name.txt", sep=";", dtype=str)
    region_of = dict(zip(regions["gauge_id"], regions["huc_02"], strict=True))
    for path in (CAMELS_SAMPLE / "basin_mean_forcing" / "daymet").iterdir():
        region = huc / "basin_mean_forcing" / "daymet" / region_of[path.name[:8]]
        region.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, region / path.name)
    assert load_stations(config.model_copy(update={"root": huc})) == load_stations(config)
    shutil.rmtree(huc / "basin_mean_forcing")
    areas = [s.area_km2 for s in load_stations(config.model_copy(update={"root": huc}))]
    assert areas == [573.6, 113.54, 427.77, 784.85]  # area_gages2 of camels_topo.txt


def test_given_zones_come_before_attribute_columns_and_the_lookup(tmp_path):
    attributes = bundled_attributes().iloc[:3]
    folder = write_caravan_attributes(tmp_path, attributes)
    config = StationsConfig(dataset="caravan", root=tmp_path, source="camels",
                            timezones={"01022500": "Etc/GMT+5"}, ids=["camels_01022500", "01052500"])
    assert [s.timezone for s in load_stations(config)] == ["Etc/GMT+5", "America/New_York"]
    zones = pd.DataFrame({"gauge_id": "camels_" + attributes["gauge_id"], "timezone": ["UTC", "Etc/GMT+4", ""]})
    zones.to_csv(folder / "attributes_zones_camels.csv", index=False)
    assert [s.timezone for s in load_stations(config.model_copy(update={"ids": None}))] == \
        ["Etc/GMT+5", "Etc/GMT+4", "America/New_York"]  # an empty zone is found from lat/lon


def test_ids_may_be_listed_in_a_file_for_a_table_too(tmp_path):
    (tmp_path / "basins.txt").write_text("09505800\n\n01022500\n")
    config = StationsConfig(path=REPO_ROOT / "data" / "stations" / "caravan_camels_us.csv", ids=tmp_path / "basins.txt")
    assert [s.id for s in load_stations(config)] == ["09505800", "01022500"]
    (tmp_path / "basins.txt").write_text("\n")
    with pytest.raises(InputDataError, match="basins.txt: the file of station ids"):
        load_stations(config)


def _broken_root(root: Path, edit: str) -> StationsConfig:
    attributes = bundled_attributes().iloc[:2].copy()
    if edit == "lat":
        attributes.loc[1, "gauge_lat"] = np.nan
    if edit == "sea":
        attributes.loc[1, ["gauge_lat", "gauge_lon"]] = (30.0, -60.0)  # the Atlantic, east of Bermuda
    folder = write_caravan_attributes(root, attributes)
    if edit == "other":
        (folder / "attributes_other_camels.csv").unlink()
    return StationsConfig(dataset="caravan", root=root, source="camels", static_attributes=["p_mean"])


@pytest.mark.parametrize("edit, update, message", [
    ("root", {}, r"caravan root folder does not exist"),
    ("other", {}, r"attributes_other_camels\.csv: attribute file missing"),
    ("none", {"ids": ["01022500", "99999999"]}, r"attributes_other_camels\.csv: basin 99999999 .*not in the attr"),
    ("lat", {}, r"attributes_other_camels\.csv \(line 3, basin 01052500\): attribute gauge_lat is empty"),
    ("sea", {}, r"attributes_other_camels\.csv \(line 3, basin 01052500\): no time zone found at lat 30\.0"),
    ("none", {"static_attributes": ["ele_mt_sav"]}, r"attribute 'ele_mt_sav' is in none of the attribute files"),
])
def test_caravan_errors_name_the_file_and_the_basin(tmp_path, edit, update, message):
    root = tmp_path / "caravan"
    config = _broken_root(root, edit).model_copy(update=update)
    if edit == "root":
        shutil.rmtree(root)
    with pytest.raises(InputDataError, match=message) as caught:
        load_stations(config)
    assert "\n" not in str(caught.value)


def test_camels_us_errors_name_the_file_and_the_basin(tmp_path):
    (tmp_path / "camels_attributes_v2.0").mkdir()
    shutil.copyfile(CAMELS_SAMPLE / "camels_attributes_v2.0" / "camels_name.txt",
                    tmp_path / "camels_attributes_v2.0" / "camels_name.txt")
    with pytest.raises(InputDataError, match=r"camels_topo\.txt: attribute file missing"):
        load_stations(StationsConfig(dataset="camels_us", root=tmp_path))
    config = StationsConfig(dataset="camels_us", root=CAMELS_SAMPLE, ids=["01022500"],
                            static_attributes=["high_prec_timing"])
    with pytest.raises(InputDataError, match=r"camels_clim\.txt \(line 3, basin 01022500\): attribute "
                                             r"high_prec_timing: 'son' is not a number"):
        load_stations(config)


def test_excluded_ids_leave_out_listed_stations_and_need_not_all_be_present(tmp_path):
    (tmp_path / "held_out.txt").write_text("09505800\n99999999\n")
    table = REPO_ROOT / "data" / "stations" / "caravan_camels_us.csv"
    config = StationsConfig(path=table, exclude_ids=tmp_path / "held_out.txt")
    ids = [s.id for s in load_stations(config)]
    assert len(ids) == 30 and "09505800" not in ids
    config = StationsConfig(path=table, exclude_ids=tmp_path / "held_out.txt", ids=["09505800", "01022500"])
    assert [s.id for s in load_stations(config)] == ["01022500"]


SHARED_CARAVAN = REPO_ROOT.parent / "shared" / "data" / "caravan_camels_us"


@pytest.mark.skipif(not SHARED_CARAVAN.is_dir(), reason="the 464-basin Caravan set is not beside the repository")
def test_the_regional_ingest_holds_every_caravan_basin_but_the_bundled_ones(tmp_path, monkeypatch):
    monkeypatch.setenv("CARAVAN_ROOT", str(SHARED_CARAVAN))
    config = load_config(REPO_ROOT / "configs" / "ingest_caravan_regional.yaml", IngestConfig)
    assert config.stations.root == SHARED_CARAVAN
    config.stations.exclude_ids = REPO_ROOT / "data" / "daily_caravan_camels_us" / "basins.txt"
    config.grid.start, config.grid.end = dt.date(2001, 9, 1), dt.date(2001, 9, 30)
    ingest(config, tmp_path / "regional.nc", show_progress=False)
    with xr.open_dataset(tmp_path / "regional.nc") as regional:
        stations = set(regional["station"].values.astype(str))
    bundled = set((REPO_ROOT / "data" / "daily_caravan_camels_us" / "basins.txt").read_text().split())
    every = set((SHARED_CARAVAN / "basins.txt").read_text().split())
    assert len(bundled) == 31 and stations == every - bundled and len(stations) == 433
