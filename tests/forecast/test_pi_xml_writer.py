"""The forecast as Delft-FEWS PI-XML: valid against the published PI schema (point, quantiles, ensemble members,
missing values), read back value for value, and the whole General Adapter run on the bundled basins: their
PI export and run file ingested, forecast at ``time0`` with the exported tiny model, PI-XML written."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from lxml import etree

from hydroseq.cli import main
from hydroseq.config import IngestConfig, validate_config
from hydroseq.config.units import to_m3s
from hydroseq.errors import ConfigError, ExitCode
from hydroseq.forecast import run_forecast
from hydroseq.forecast.result import ForecastResult
from hydroseq.forecast.writers.pi_xml import PI_MISSING, PI_PARAMETER, write_forecast_pi_xml
from hydroseq.ingest import ingest
from hydroseq.ingest.readers.pi_xml import read_pi_series
from tests.ingest.pi_builders import caravan_series, run_file_text, write_pi

SCHEMAS = Path(__file__).resolve().parents[1] / "data" / "fews_pi"
PI = "{http://www.wldelft.nl/fews/PI}"
STATIONS = ("01022500", "01547700", "09999999")


def _result(kind: str) -> ForecastResult:
    """Three stations (the third not forecast), leads 1-3 of a daily grid, in mm/d with catchment areas."""
    values = np.array([[[1.0, 2.0, 3.0], [0.5, 0.25, 0.125], [np.nan] * 3]], dtype=np.float32)
    result = ForecastResult(
        issue_times=np.array(["2014-10-01T08:00"], dtype="datetime64[ns]"), stations=STATIONS,
        leads=np.array([1, 2, 3]), step=pd.Timedelta("1D"), values=values, variable="streamflow", units="mm/d",
        station_names=("A", "B", "C"), lats=np.array([44.6, 41.1, 37.0]), lons=np.array([-67.9, -77.6, -80.0]),
        area_km2=np.array([619.1, 115.0, 9.0]))
    if kind == "quantiles":
        levels = (0.05, 0.5, 0.95)
        return dataclasses.replace(result, quantile_levels=levels,
                                   quantiles=np.stack([values * 0.5, values, values * 2], axis=-1))
    if kind == "ensemble":
        members = np.stack([values * 0.8, values * 1.2], axis=-1)
        return dataclasses.replace(result, members=members)
    if kind == "missing":  # a lead without a value, and a station without a catchment area (no m3/s)
        values = values.copy()
        values[0, 0, 1] = np.nan
        return dataclasses.replace(result, values=values, area_km2=np.array([619.1, np.nan, 9.0]))
    return result


@pytest.fixture(scope="module")
def schema() -> etree.XMLSchema:
    """The published ``pi_timeseries.xsd`` (with the ``pi_sharedtypes.xsd`` it includes)."""
    return etree.XMLSchema(etree.parse(str(SCHEMAS / "pi_timeseries.xsd")))


def _headers(path: Path) -> list[dict[str, str]]:
    return [{child.tag.removeprefix(PI): child.text or "" for child in header}
            for header in etree.parse(str(path)).iter(f"{PI}header")]


@pytest.mark.parametrize("kind", ["deterministic", "quantiles", "ensemble", "missing"])
def test_the_document_is_valid_against_the_published_pi_schema(kind, schema, tmp_path):
    path = write_forecast_pi_xml(_result(kind), tmp_path / "forecast.xml")
    schema.assertValid(etree.parse(str(path)))
    headers = _headers(path)
    per_station = {"deterministic": 1, "quantiles": 4, "ensemble": 3, "missing": 1}[kind]
    assert len(headers) == 2 * per_station  # the station not forecast has no series
    assert {header["locationId"] for header in headers} == set(STATIONS[:2])
    assert {header["parameterId"] for header in headers} == {PI_PARAMETER}
    assert {header["units"] for header in headers} == {"m3/s"} and {h["type"] for h in headers} == {"mean"}
    assert (headers[0]["stationName"], headers[0]["lat"], headers[0]["lon"]) == ("A", "44.6", "-67.9")
    if kind == "quantiles":
        assert [header.get("qualifierId") for header in headers[:4]] == [None, "q05", "q50", "q95"]
    if kind == "ensemble":
        assert [(header.get("ensembleId"), header.get("ensembleMemberIndex")) for header in headers[:3]] == [
            (None, None), ("hydroseq", "0"), ("hydroseq", "1")]
    text = path.read_text()
    assert "<timeZone>0.0</timeZone>" in text and f"<missVal>{PI_MISSING}</missVal>" in text
    assert '<forecastDate date="2014-10-01" time="08:00:00"/>' in text
    assert ('value="-999.0"' in text) == (kind == "missing")


@pytest.mark.parametrize("kind", ["deterministic", "quantiles", "ensemble", "missing"])
def test_every_series_reads_back_as_the_forecast_in_m3s(kind, tmp_path):
    result = _result(kind)
    document = read_pi_series(write_forecast_pi_xml(result, tmp_path / "forecast.xml"))
    assert document.offset == pd.Timedelta(0)
    flows = {name: to_m3s(array[0], "mm/d", result.step, result.area_km2) for name, array in
             (("value", result.values), ("quantiles", result.quantiles), ("members", result.members))
             if array is not None}
    for series in document.series:
        s = STATIONS.index(series.location)
        if series.qualifiers:
            expected = flows["quantiles"][s, :, ["q05", "q50", "q95"].index(series.qualifiers[0])]
        elif series.member is not None:
            expected = flows["members"][s, :, int(series.member)]
        else:
            expected = flows["value"][s]
        np.testing.assert_array_equal(series.values.astype(np.float32), expected)
        assert list(series.stamps) == list(pd.DatetimeIndex(result.valid_times[0]))
        assert series.forecast_date == pd.Timestamp("2014-10-01T08:00") and series.step == pd.Timedelta("1D")
    if kind == "missing":
        point = {series.location: series.values for series in document.series}
        assert np.isnan(point["01022500"][1]) and np.isnan(point["01547700"]).all()


def test_the_point_forecast_ingests_back_onto_its_grid(tmp_path):
    """Round trip through the ingest: the forecast file read as a ``pi_xml`` source gives its own values."""
    result = _result("deterministic")
    path = write_forecast_pi_xml(result, tmp_path / "forecast.xml")
    (tmp_path / "stations.csv").write_text("station_id,name,lat,lon,area_km2\n01022500,A,44.6,-67.9,619.1\n"
                                           "01547700,B,41.1,-77.6,115.0\n")
    config = validate_config({
        "stations": {"path": str(tmp_path / "stations.csv")},
        "sources": [{"path": str(path), "format": "pi_xml", "frequency": "1D", "timestamp": "interval_end",
                     "variables": {"flow": {"source": PI_PARAMETER, "units": "m3/s"}}}],
        "grid": {"frequency": "1D", "timezone": "Etc/GMT+8", "start": "2014-10-01", "end": "2014-10-03"}}, IngestConfig)
    ingest(config, tmp_path / "back.nc", show_progress=False)
    with xr.open_dataset(tmp_path / "back.nc") as back:
        np.testing.assert_array_equal(back["flow"].values, to_m3s(result.values[0, :2], "mm/d", result.step,
                                                                   result.area_km2[:2]))


def test_a_hindcast_or_a_flow_without_m3s_is_refused_and_a_rerun_gives_the_same_bytes(tmp_path):
    result = _result("quantiles")
    two = dataclasses.replace(result, issue_times=np.repeat(result.issue_times, 2),
                              values=np.repeat(result.values, 2, 0), quantiles=np.repeat(result.quantiles, 2, 0))
    with pytest.raises(ConfigError, match="one issue time, not a hindcast of 2"):
        write_forecast_pi_xml(two, tmp_path / "hindcast.xml")
    with pytest.raises(ConfigError, match="streamflow in mm/d cannot be converted"):
        write_forecast_pi_xml(dataclasses.replace(result, area_km2=None), tmp_path / "no_area.xml")
    assert not list(tmp_path.iterdir())
    first = write_forecast_pi_xml(result, tmp_path / "a.xml").read_bytes()
    assert write_forecast_pi_xml(result, tmp_path / "b.xml").read_bytes() == first


TRAIN = ["01022500", "01547700", "02064000"]  # the exported tiny model's training basins (tests/conftest.py)
DYNAMIC = ["total_precipitation_sum", "temperature_2m_mean", "potential_evaporation_sum"]


def _fews_ingest_config(folder: Path, repo_root: Path, export: Path) -> Path:
    """The ingest config of a FEWS run: the exported PI file, the grid of the model's data (its days ignored)."""
    variables = {name: {"source": name, "units": "degC" if name.startswith("temp") else "mm/d",
                        "aggregation": "mean" if name.startswith("temp") else "sum"} for name in DYNAMIC}
    variables["streamflow"] = {"source": "streamflow", "units": "mm/d"}
    config = {"stations": {"path": str(repo_root / "data" / "stations" / "caravan_camels_us.csv"), "ids": TRAIN,
                           "static_attributes": ["p_mean", "aridity", "frac_snow"],
                           "static_units": {"p_mean": "mm d-1", "aridity": "1", "frac_snow": "1"}},
              "sources": [{"path": str(export), "format": "pi_xml", "frequency": "1D", "timestamp": "interval_end",
                           "variables": variables}],
              "grid": {"frequency": "1D", "timezone": "Etc/GMT+8", "start": "2000-01-01", "end": "2000-01-01"}}
    (folder / "fews_ingest.yaml").write_text(json.dumps(config))
    return folder / "fews_ingest.yaml"


def test_a_general_adapter_run_forecasts_at_time0_as_from_the_full_record(exported, ingested, repo_root, data_dir,
                                                                          schema, tmp_path):
    """The FEWS chain on real data: PI export (in UTC+1) and run file -> ``hydroseq ingest --pi-run-file`` ->
    ``hydroseq forecast --pi-run-file --format pi-xml``: the PI-XML forecast equals the one from the full ingest."""
    export = write_pi(tmp_path / "input.xml", caravan_series(data_dir, TRAIN, [*DYNAMIC, "streamflow"],
                                                               "2014-03-01", "2014-06-30"), time_zone=1.0)
    run = tmp_path / "run_info.xml"  # time0: the end of the local day 2014-06-30 of the grid (UTC-8), in UTC+1
    run.write_text(run_file_text("2014-03-02 06:00", "2014-07-01 09:00", "2014-07-01 09:00", time_zone=1.0))
    etree.XMLSchema(etree.parse(str(SCHEMAS / "pi_run.xsd"))).assertValid(etree.parse(str(run)))
    data = tmp_path / "work" / "ingested.nc"
    assert main(["ingest", "--config", str(_fews_ingest_config(tmp_path, repo_root, export)), "--out", str(data),
                 "--pi-run-file", str(run)]) == ExitCode.OK
    out = tmp_path / "output" / "forecast.nc"
    assert main(["forecast", "--model", str(exported), "--data", str(data), "--pi-run-file", str(run),
                 "--out", str(out), "--format", "pi-xml"]) == ExitCode.OK
    schema.assertValid(etree.parse(str(out.with_suffix(".xml"))))
    manifest = json.loads((tmp_path / "output" / "forecast.manifest.json").read_text())
    assert {entry["name"] for entry in manifest["files"]} == {"forecast.nc", "forecast.csv", "forecast.xml"}
    full = run_forecast(exported, ingested, "2014-06-30", out=tmp_path / "full" / "f.nc").result
    series = {one.location: one for one in read_pi_series(out.with_suffix(".xml")).series}
    assert sorted(series) == TRAIN
    for station, one in series.items():
        s = full.stations.index(station)
        expected = to_m3s(full.values[0, s], full.units, full.step, full.area_km2[s])
        np.testing.assert_array_equal(one.values.astype(np.float32), expected)
        assert one.forecast_date == pd.Timestamp("2014-07-01T08:00")
    assert main(["forecast", "--model", str(exported), "--data", str(data), "--issue-time", "2014-06-01..2014-06-30",
                 "--out", str(tmp_path / "hindcast.nc"), "--format", "pi-xml"]) == ExitCode.CONFIG
    assert not (tmp_path / "hindcast.xml").exists()
    assert hashlib.sha256(out.with_suffix(".xml").read_bytes()).hexdigest() == manifest["files"][2]["sha256"]
