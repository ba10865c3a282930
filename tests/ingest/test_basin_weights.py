"""``extraction: polygons``: cell weights of basin outlines (``hydroseq/ingest/readers/basin_weights.py``).

The outlines are real country borders: ``tests/ingest/data/naturalearth_countries.geojson`` holds seven countries of
Natural Earth's 1:110m Admin 0 map (public domain), coordinates as in the ``naturalearth_lowres`` test fixture that
pyogrio ships: South Africa (with Lesotho as a hole), Denmark (several islands), Luxembourg, Switzerland, Slovenia,
Rwanda and Uruguay (west of Greenwich, for grids in 0..360). The reference means are computed without the module:
each cell clipped to the outline with shapely, its edges densified, projected to a Lambert azimuthal equal-area
projection of the same sphere and measured there.
"""

from __future__ import annotations

from pathlib import Path

import netCDF4
import numpy as np
import pandas as pd
import pytest
import shapely
import xarray as xr
import yaml
from pyproj import Transformer

from hydroseq.cli import main
from hydroseq.config.ingest import StationsConfig
from hydroseq.config.outlines import OutlinesConfig
from hydroseq.errors import ExitCode, InputDataError
from hydroseq.forecast.forcing_file import read_forcing_forecast
from hydroseq.grid import GridSpec
from hydroseq.ingest import load_stations
from hydroseq.ingest.outlines import read_outlines
from hydroseq.ingest.readers.basin_weights import EARTH_RADIUS_KM, basin_weights, station_cells, write_weights_csv
from hydroseq.ingest.readers.gridded import extract_at_station
from hydroseq.ingest.stations import Station

from .forecast_builders import write_cfgrib_grid

COUNTRIES = Path(__file__).parent / "data" / "naturalearth_countries.geojson"
GRIDS = {  # (cell-centre latitudes, longitudes)
    "1 degree, latitudes south to north, longitudes 0..360": (np.arange(-60.0, 75.5, 1.0), np.arange(0.0, 360.0)),
    "0.25 degree, latitudes north to south as in ERA5": (np.arange(75.0, -60.1, -0.25), np.arange(-180.0, 180.0, 0.25)),
}
CASES = [(country, grid) for grid in GRIDS for country in ("Luxembourg", "Switzerland", "Slovenia", "Denmark",
                                                            "Rwanda", "Uruguay", "South Africa")]


@pytest.fixture(scope="module")
def countries() -> dict[str, bytes]:
    return read_outlines(OutlinesConfig(path=COUNTRIES, id_field="name"))


def _station(name: str, outline: bytes | None) -> Station:
    return Station(id=name, name=name, lat=0.0, lon=0.0, area_km2=1.0, outline=outline)


def _field(lats: np.ndarray, lons: np.ndarray) -> np.ndarray:
    """An analytic field at the cell centres, for two time steps: (2, lat, lon)."""
    lat, lon = np.meshgrid(lats, lons, indexing="ij")
    value = 280.0 + 0.5 * lat - 0.1 * lon + 3.0 * np.sin(np.radians(7 * lon)) * np.cos(np.radians(5 * lat))
    return np.stack([value, -2.0 * value + 1000.0])


def _equal_area_km2(pieces: np.ndarray, centre: shapely.Point) -> np.ndarray:
    """Areas on the sphere, measured in an equal-area projection of it after densifying the edges (which are
    straight in longitude and latitude) to 0.002 degrees."""
    sphere = f"+R={EARTH_RADIUS_KM * 1000}"
    project = Transformer.from_crs(f"+proj=longlat {sphere}", f"+proj=laea +lat_0={centre.y} +lon_0={centre.x} "
                                   f"{sphere} +units=m", always_xy=True)
    dense = shapely.segmentize(pieces, 0.002)
    projected = shapely.transform(dense, lambda xy: np.column_stack(project.transform(xy[:, 0], xy[:, 1])))
    return np.asarray(shapely.area(projected)) / 1e6


def _reference_mean(outline: bytes, lats: np.ndarray, lons: np.ndarray, field: np.ndarray) -> tuple[np.ndarray, float]:
    """The area-weighted mean of ``field`` (constant in each cell) over the outline, and the outline's area."""
    basin = shapely.from_wkb(outline)
    if lons.max() > 180 and basin.bounds[0] < 0:
        basin = shapely.transform(basin, lambda xy: xy + [360.0, 0.0])
    half_lat, half_lon = abs(lats[1] - lats[0]) / 2, abs(lons[1] - lons[0]) / 2
    west, south, east, north = basin.bounds
    rows = np.flatnonzero((lats + half_lat > south) & (lats - half_lat < north))
    cols = np.flatnonzero((lons + half_lon > west) & (lons - half_lon < east))
    row, col = (grid.ravel() for grid in np.meshgrid(rows, cols, indexing="ij"))
    cells = shapely.box(lons[col] - half_lon, lats[row] - half_lat, lons[col] + half_lon, lats[row] + half_lat)
    area = _equal_area_km2(shapely.intersection(basin, cells), basin.centroid)
    return (field[:, row, col] * area).sum(axis=1) / area.sum(), float(area.sum())


@pytest.mark.parametrize(("country", "grid"), CASES)
def test_polygons_give_the_exact_area_weighted_mean_over_real_outlines(countries, country, grid) -> None:
    lats, lons = GRIDS[grid]
    field = _field(lats, lons)
    got = extract_at_station(Path("grid.nc"), lats, lons, {"f": field}, _station(country, countries[country]),
                             "polygons", None)["f"]
    expected, area = _reference_mean(countries[country], lats, lons, field)
    np.testing.assert_allclose(got, expected, rtol=1e-8)  # measured: 1e-10 and below
    cells = station_cells("grid.nc", lats, lons, _station(country, countries[country]))
    assert cells.area_km2.sum() == pytest.approx(area, rel=1e-8) and cells.inside_share == pytest.approx(1.0)


def test_weights_are_cached_per_outline_and_grid(countries) -> None:
    lats, lons = GRIDS["0.25 degree, latitudes north to south as in ERA5"]
    station = _station("Switzerland", countries["Switzerland"])
    first = station_cells("a.nc", lats, lons, station)
    assert station_cells("b.nc", lats.copy(), lons.copy(), station) is first  # another file of the same grid
    assert station_cells("c.nc", lats[:-1], lons, station) is not first
    with pytest.raises(ValueError, match="read-only"):
        first.area_km2[0] = 0.0


def test_a_basin_outside_the_grid_is_one_line_naming_station_file_and_grid(countries) -> None:
    lats, lons = np.arange(35.0, 60.1, 0.25), np.arange(-10.0, 30.1, 0.25)  # Europe
    with pytest.raises(InputDataError) as outside:
        extract_at_station(Path("europe.nc"), lats, lons, {"f": np.zeros((1, len(lats), len(lons)))},
                           _station("Rwanda", countries["Rwanda"]), "polygons", None)
    message = str(outside.value)
    assert "\n" not in message and message.startswith("europe.nc: ")
    assert "station Rwanda lies outside the grid: lon -10.125..30.125, lat 34.875..60.125 (cell edges)" in message
    cut = np.arange(-10.0, 10.01, 0.25)  # the grid's east edge at 10.125 E cuts Denmark in two
    with pytest.raises(InputDataError, match=r"station Denmark has only \d\d\.\d% of its area inside the grid "
                                             r"\(at least 99% needed\): lon -10.125..10.125"):
        station_cells("europe.nc", lats, cut, _station("Denmark", countries["Denmark"]))


def test_a_station_without_outline_or_an_irregular_grid_is_an_error(countries) -> None:
    lats, lons = np.arange(45.0, 48.1, 0.25), np.arange(5.0, 11.1, 0.25)
    with pytest.raises(InputDataError, match="station s has no basin outline; extraction polygons needs "
                                             "stations.outlines"):
        station_cells("grid.nc", lats, lons, _station("s", None))
    uneven = np.concatenate([lons[:5], lons[5:] + 0.01])
    with pytest.raises(InputDataError, match="needs a regular grid, but the longitude centres are not evenly spaced"):
        station_cells("grid.nc", lats, uneven, _station("Switzerland", countries["Switzerland"]))


def test_the_weights_table_gives_what_the_polygons_give(countries, tmp_path) -> None:
    lats, lons = GRIDS["0.25 degree, latitudes north to south as in ERA5"]
    stations = [_station(name, countries[name]) for name in ("Luxembourg", "Switzerland", "Slovenia", "Denmark")]
    field = np.random.default_rng(4).gamma(0.5, 2.0, (6, len(lats), len(lons)))
    field[np.random.default_rng(5).random(field.shape) < 0.2] = np.nan  # missing cells: renormalised
    table = write_weights_csv(stations, lats, lons, tmp_path / "weights.csv")
    written = pd.read_csv(table, dtype={"station_id": str})
    pd.testing.assert_frame_equal(written, basin_weights(stations, lats, lons))
    for station in stations:
        by_table = extract_at_station(Path("g.nc"), lats, lons, {"f": field}, station, "weights", table)["f"]
        by_polygon = extract_at_station(Path("g.nc"), lats, lons, {"f": field}, station, "polygons", None)["f"]
        np.testing.assert_array_equal(by_table, by_polygon)
        assert np.isfinite(by_polygon).all()
        _, area = _reference_mean(station.outline, lats, lons, field[:1])
        assert written.loc[written["station_id"] == station.id, "weight"].sum() == pytest.approx(area, rel=1e-8)


def _write_grid(path: Path, lats: np.ndarray, lons: np.ndarray, hours: int) -> Path:
    """Hourly ``rain(time, lat, lon)`` in mm, with a gap: one cell missing for a day."""
    rain = np.random.default_rng(7).gamma(0.4, 1.5, (hours, len(lats), len(lons)))
    rain[:24, 3, 5] = np.nan
    with netCDF4.Dataset(path, "w") as ds:
        for name, size in (("time", hours), ("latitude", len(lats)), ("longitude", len(lons))):
            ds.createDimension(name, size)
        time = ds.createVariable("time", "f8", ("time",))
        time.units = "hours since 2015-06-01 00:00:00"
        time[:] = np.arange(1, hours + 1)
        ds.createVariable("latitude", "f4", ("latitude",))[:] = lats
        ds.createVariable("longitude", "f4", ("longitude",))[:] = lons
        ds.createVariable("rain", "f4", ("time", "latitude", "longitude"), fill_value=np.float32(np.nan))[:] = rain
    return path


def _ingest_config(tmp_path: Path, data_dir: Path, grid_file: Path, product: Path | None = None,
                   **extraction: str) -> Path:
    table = (data_dir / "stations" / "caravan_camels_us.csv").read_text().splitlines()
    (tmp_path / "stations.csv").write_text("\n".join([table[0], *(line for line in table[1:]
                                                                   if line.startswith(("01022500", "01052500")))]))
    config = {
        "stations": {"path": str(tmp_path / "stations.csv"),
                     "outlines": {"path": str(data_dir / "stations" / "caravan_camels_us_outlines.geojson")}},
        "sources": [{"path": str(grid_file), "format": "netcdf_grid", "frequency": "1h", "timestamp": "interval_end",
                     "variables": {"precipitation": {"source": "rain", "units": "mm", "aggregation": "sum"}},
                     **extraction}],
        "grid": {"frequency": "1D", "start": "2015-06-01", "end": "2015-06-04"},
    }
    if product is not None:
        config["forecast_sources"] = [{
            "name": "run", "path": str(product), "layout": "grid", "latency": "0h", "issue_frequency": "1D",
            "horizon": 2, "variables": {"precipitation_forecast": {"source": "tp", "units": "m", "aggregation": "sum",
                                                                   "accumulation": "since_reference"}},
            **extraction}]
    path = tmp_path / f"ingest_{extraction.get('extraction')}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_the_ingest_with_polygons_writes_what_the_ingest_with_their_weights_writes(tmp_path, data_dir) -> None:
    """Two bundled basins (drawn outlines) in Maine and New Hampshire on an ERA5-Land-like 0.1 degree grid."""
    lats, lons = np.round(np.arange(45.5, 43.99, -0.1), 1), np.round(np.arange(-72.0, -66.95, 0.1), 1)
    grid_file = _write_grid(tmp_path / "rain.nc", lats, lons, hours=4 * 24)
    polygons = _ingest_config(tmp_path, data_dir, grid_file, extraction="polygons")
    assert main(["ingest", "--config", str(polygons), "--out", str(tmp_path / "polygons.nc")]) == ExitCode.OK
    stations = load_stations(StationsConfig.model_validate(yaml.safe_load(polygons.read_text())["stations"]))
    with xr.open_dataset(grid_file) as grid:
        table = write_weights_csv(stations, grid["latitude"].values, grid["longitude"].values, tmp_path / "w.csv")
    weights = _ingest_config(tmp_path, data_dir, grid_file, extraction="weights", weights_path=str(table))
    assert main(["ingest", "--config", str(weights), "--out", str(tmp_path / "weights.nc")]) == ExitCode.OK
    with xr.open_dataset(tmp_path / "polygons.nc") as by_polygon, xr.open_dataset(tmp_path / "weights.nc") as by_table:
        assert np.isfinite(by_polygon["precipitation"].values).sum() >= 6
        np.testing.assert_array_equal(by_polygon["precipitation"].values, by_table["precipitation"].values)


def test_forecast_products_are_averaged_over_the_outlines_too(tmp_path, data_dir) -> None:
    """A cfgrib-converted ECMWF run on the same grid: ingested with polygons and with their weights, and read again
    by ``hydroseq forecast --forcing-forecast``, which takes the outlines from the ingest config the file records."""
    lats, lons = np.round(np.arange(45.5, 43.99, -0.1), 1), np.round(np.arange(-72.0, -66.95, 0.1), 1)
    grid_file = _write_grid(tmp_path / "rain.nc", lats, lons, hours=4 * 24)
    hours = np.arange(6.0, 78.0, 6.0)
    tp = np.cumsum(np.random.default_rng(3).gamma(0.3, 0.002, (len(hours), len(lats), len(lons))), axis=0)
    product = write_cfgrib_grid(tmp_path / "run.nc", pd.Timestamp("2015-06-02 00:00"), hours, lats, lons, tp,
                                np.full(tp.shape, 280.0))
    polygons = _ingest_config(tmp_path, data_dir, grid_file, product, extraction="polygons")
    assert main(["ingest", "--config", str(polygons), "--out", str(tmp_path / "polygons.nc")]) == ExitCode.OK
    stations = load_stations(StationsConfig.model_validate(yaml.safe_load(polygons.read_text())["stations"]))
    table = write_weights_csv(stations, lats, lons, tmp_path / "w.csv")
    weights = _ingest_config(tmp_path, data_dir, grid_file, product, extraction="weights", weights_path=str(table))
    assert main(["ingest", "--config", str(weights), "--out", str(tmp_path / "weights.nc")]) == ExitCode.OK
    with xr.open_dataset(tmp_path / "polygons.nc") as by_polygon, xr.open_dataset(tmp_path / "weights.nc") as by_table:
        dims = ("station", "time", "lead")
        forecast = by_polygon["precipitation_forecast"].transpose(*dims).values
        assert np.isfinite(forecast).sum() >= 4
        np.testing.assert_array_equal(forecast, by_table["precipitation_forecast"].transpose(*dims).values)
        spec, steps = GridSpec.from_attrs(by_polygon.attrs), by_polygon.sizes["time"]
        again = read_forcing_forecast(product, by_polygon, tmp_path / "polygons.nc", spec, 0, steps)
    np.testing.assert_allclose(again.values["precipitation_forecast"], forecast, rtol=1e-6)
