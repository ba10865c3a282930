"""Basin outlines of the stations (``stations.outlines``, ``hydroseq/ingest/outlines.py``): read from GeoJSON,
GeoPackage or Shapefile, reprojected to longitude/latitude, matched to the stations by id; every problem one line
naming the outlines file."""

from __future__ import annotations

from pathlib import Path

import geopandas
import pytest
import shapely

from hydroseq.config import ConfigError, IngestConfig, validate_config
from hydroseq.config.ingest import StationsConfig
from hydroseq.errors import InputDataError
from hydroseq.ingest import load_stations


@pytest.fixture(scope="module")
def bundled(data_dir) -> Path:
    return data_dir / "stations" / "caravan_camels_us_outlines.geojson"


def _stations(data_dir: Path, outlines: dict) -> StationsConfig:
    return StationsConfig(path=data_dir / "stations" / "caravan_camels_us.csv", outlines=outlines)


def test_every_station_gets_its_outline_around_its_gauge(data_dir, bundled) -> None:
    stations = load_stations(_stations(data_dir, {"path": bundled}))
    assert len(stations) == 31
    for station in stations:
        outline = shapely.from_wkb(station.outline)
        assert outline.geom_type == "Polygon" and outline.contains(shapely.Point(station.lon, station.lat))
    assert "outline" not in repr(stations[0])  # the WKB stays out of messages


def test_outlines_in_a_projected_crs_are_reprojected_to_longitude_latitude(data_dir, bundled, tmp_path) -> None:
    frame = geopandas.read_file(bundled)
    package = tmp_path / "outlines.gpkg"
    frame.iloc[:3].to_file(package, layer="other", driver="GPKG")
    frame.to_crs("EPSG:5070").rename(columns={"station_id": "gauge"}).to_file(package, layer="basins", driver="GPKG")
    projected = load_stations(_stations(data_dir, {"path": package, "layer": "basins", "id_field": "gauge"}))
    for station, original in zip(projected, load_stations(_stations(data_dir, {"path": bundled})), strict=True):
        distance = shapely.hausdorff_distance(shapely.from_wkb(station.outline), shapely.from_wkb(original.outline))
        assert distance < 1e-7  # degrees: the round trip through CONUS Albers


def test_published_dataset_stations_get_outlines(data_dir, bundled) -> None:
    config = StationsConfig(dataset="camels_us", root=data_dir / "camels_us_sample",
                            ids=data_dir / "camels_us_sample" / "basins.txt", outlines={"path": bundled})
    stations = load_stations(config)
    assert [station.id for station in stations] == ["01022500", "01547700", "02064000", "03015500"]
    assert all(shapely.from_wkb(station.outline).contains(shapely.Point(station.lon, station.lat))
               for station in stations)


def _broken(bundled: Path, tmp_path: Path, how: str) -> Path:
    frame = geopandas.read_file(bundled)
    if how == "missing station":
        frame = frame[frame["station_id"] != "08189500"]
    elif how == "twice":
        frame = geopandas.pd.concat([frame, frame.iloc[[4]]])
    elif how == "a point":
        frame.loc[2, "geometry"] = shapely.Point(-70.0, 44.0)
    path = tmp_path / "outlines.geojson"
    frame.to_file(path)
    if how == "no crs":
        path = tmp_path / "outlines.shp"
        with pytest.warns(UserWarning, match="'crs' was not provided"):
            frame.set_crs(None, allow_override=True).to_file(path)
    return path


@pytest.mark.parametrize(("how", "message"), [
    ("missing station", r"outlines.geojson: no outline for station 08189500: every station needs one "
                        r"\(matched by the field 'station_id'\)$"),
    ("twice", r"outlines.geojson \(feature 32\): station 02064000 has more than one outline$"),
    ("a point", r"outlines.geojson \(feature 3\): the outline of station 01547700 is a Point, not a polygon$"),
    ("no crs", r"outlines.shp: the outlines declare no coordinate reference system \(a Shapefile needs its .prj "
               r"file\)"),
], ids=["missing station", "twice", "a point", "no crs"])
def test_a_bad_outlines_file_is_one_line_naming_it(data_dir, bundled, tmp_path, how, message) -> None:
    path = _broken(bundled, tmp_path, how)
    with pytest.raises(InputDataError, match=message) as error:
        load_stations(_stations(data_dir, {"path": path}))
    assert "\n" not in str(error.value)


def test_ids_stored_as_numbers_are_matched_where_they_can_be_and_named_where_not(data_dir, bundled,
                                                                                tmp_path) -> None:
    frame = geopandas.read_file(bundled)
    frame["station_id"] = frame["station_id"].astype(float)  # as a spreadsheet or a Shapefile writer may leave them
    frame.to_file(tmp_path / "numbers.gpkg")
    config = _stations(data_dir, {"path": tmp_path / "numbers.gpkg"})
    config.ids = ["10249300", "14325000"]  # no leading zero: 10249300.0 is read as 10249300
    assert all(station.outline is not None for station in load_stations(config))
    with pytest.raises(InputDataError, match=r"no outline for station 01022500 \(and 25 more station\(s\)\): every "
                                             r"station needs one \(matched by the field 'station_id'\); the file has "
                                             r"1022500: write the ids as text to keep their leading zeros$"):
        load_stations(_stations(data_dir, {"path": tmp_path / "numbers.gpkg"}))


def test_an_unknown_id_field_or_an_unreadable_file_is_an_error(data_dir, bundled, tmp_path) -> None:
    with pytest.raises(InputDataError, match=r"no field 'gauge_id' \(set stations.outlines.id_field\); the outlines "
                                             r"have station_id, name, area_km2$"):
        load_stations(_stations(data_dir, {"path": bundled, "id_field": "gauge_id"}))
    (tmp_path / "outlines.geojson").write_text('{"type": "FeatureCollection", "features": [')
    with pytest.raises(InputDataError, match="outlines.geojson: cannot read the basin outlines: "):
        load_stations(_stations(data_dir, {"path": tmp_path / "outlines.geojson"}))


def test_polygons_without_outlines_is_a_config_error(data_dir) -> None:
    config = {"stations": {"path": str(data_dir / "stations" / "caravan_camels_us.csv")},
              "sources": [{"path": "grid.nc", "format": "netcdf_grid", "frequency": "1h", "extraction": "polygons",
                           "variables": {"p": {"source": "rain", "units": "mm", "aggregation": "sum"}}}],
              "grid": {"start": "2015-01-01", "end": "2015-01-02"}}
    with pytest.raises(ConfigError, match=r"^my.yaml: invalid configuration: extraction: polygons \(source 'grid.nc'\) "
                                          r"needs the stations' basin outlines: set stations.outlines$"):
        validate_config(config, IngestConfig, "my.yaml")
    config["stations"]["outlines"] = {"path": "outlines.geojson"}
    assert validate_config(config, IngestConfig).stations.outlines.id_field == "station_id"
