"""Source units through the units library and the station area, through ``hydroseq ingest``.

Real Caravan series (01022500 and 08189500, water year 2014) are written again in the units an agency
sends (streamflow in cfs or m3/s, precipitation in inch/d, temperature in degF) and must ingest to the
grid values of the same series in mm/d and degC.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
import yaml

from hydroseq.cli import main
from hydroseq.errors import ExitCode

STATIONS = ["01022500", "08189500"]
FT3 = 0.028316846592  # m3 per cubic foot
INCH = 25.4  # mm per inch
VARIABLES = {"total_precipitation_sum": {"source": "total_precipitation_sum", "units": "mm/d", "aggregation": "sum"},
             "temperature_2m_mean": {"source": "temperature_2m_mean", "units": "degC"},
             "streamflow": {"source": "streamflow", "units": "mm/d"}}


def _config(folder: Path, data_dir: Path, sources: Path, variables: dict) -> Path:
    table = pd.read_csv(data_dir / "stations" / "caravan_camels_us.csv", dtype={"station_id": str})
    if not (folder / "stations.csv").exists():
        table[table["station_id"].isin(STATIONS)].to_csv(folder / "stations.csv", index=False)
    config = {
        "stations": {"path": str(folder / "stations.csv")},
        "sources": [{"path": str(sources / "*.csv"), "format": "caravan_csv", "frequency": "1D",
                     "timestamp": "interval_start", "timezone": "station_standard", "time_format": "%Y-%m-%d",
                     "variables": variables}],
        "grid": {"frequency": "1D", "timezone": "Etc/GMT+8", "start": "2013-10-01", "end": "2014-09-30"},
    }
    path = folder / f"{sources.name}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _sources(folder: Path, data_dir: Path, name: str, streamflow_units: str) -> Path:
    """The Caravan files of :data:`STATIONS` with streamflow in ``streamflow_units`` (mm/d, cfs or m3/s),
    and, unless in mm/d, precipitation in inch/d and temperature in degF."""
    out = folder / name
    out.mkdir()
    area = pd.read_csv(data_dir / "stations" / "caravan_camels_us.csv", dtype={"station_id": str},
                       index_col="station_id")["area_km2"]
    for station in STATIONS:
        frame = pd.read_csv(data_dir / "daily_caravan_camels_us" / f"{station}.csv")
        frame = frame[(frame["date"] >= "2013-09-25") & (frame["date"] <= "2014-10-05")]
        m3s = frame["streamflow"] * area[station] * 1e6 / 1000 / 86400
        if streamflow_units != "mm/d":
            frame["streamflow"] = m3s / FT3 if streamflow_units == "cfs" else m3s
            frame["total_precipitation_sum"] = frame["total_precipitation_sum"] / INCH
            frame["temperature_2m_mean"] = frame["temperature_2m_mean"] * 9 / 5 + 32
        frame.to_csv(out / f"{station}.csv", index=False, na_rep="NA")
    return out


def _ingest(config: Path, out: Path) -> int:
    return main(["-q", "ingest", "--config", str(config), "--out", str(out)])


@pytest.mark.parametrize("streamflow_units", ["cfs", "m3/s"])
def test_a_series_in_cfs_ingests_to_the_grid_values_of_the_same_series_in_mm_per_day(
        tmp_path: Path, data_dir: Path, streamflow_units: str) -> None:
    in_mm = _config(tmp_path, data_dir, _sources(tmp_path, data_dir, "mm", "mm/d"), VARIABLES)
    agency = {"total_precipitation_sum": {**VARIABLES["total_precipitation_sum"], "units": "inch/d"},
              "temperature_2m_mean": {**VARIABLES["temperature_2m_mean"], "units": "degF"},
              "streamflow": {"source": "streamflow", "units": streamflow_units, "output_units": "mm/d"}}
    in_cfs = _config(tmp_path, data_dir, _sources(tmp_path, data_dir, "agency", streamflow_units), agency)
    assert _ingest(in_mm, tmp_path / "mm.nc") == 0
    assert _ingest(in_cfs, tmp_path / "agency.nc") == 0
    with xr.open_dataset(tmp_path / "mm.nc") as reference, xr.open_dataset(tmp_path / "agency.nc") as converted:
        assert converted["streamflow"].attrs["units"] == reference["streamflow"].attrs["units"] == "mm d-1"
        assert converted["temperature_2m_mean"].attrs["units"] == "degC"
        assert np.isfinite(reference["streamflow"].values).sum() == 2 * 365
        for name in VARIABLES:
            np.testing.assert_allclose(converted[name].values, reference[name].values, rtol=2e-6, atol=1e-5,
                                       err_msg=name)
        assert float(reference["streamflow"].sel(station="01022500").max()) > 10  # a real flood, not zeros


def test_a_volume_rate_needs_the_area_one_line_naming_the_station(tmp_path: Path, data_dir: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    variables = {"streamflow": {"source": "streamflow", "units": "cfs", "output_units": "mm/d"}}
    config = _config(tmp_path, data_dir, _sources(tmp_path, data_dir, "agency", "cfs"), variables)
    table = pd.read_csv(tmp_path / "stations.csv", dtype={"station_id": str})
    table.loc[table["station_id"] == "08189500", "area_km2"] = np.nan
    table.to_csv(tmp_path / "stations.csv", index=False)
    assert _ingest(config, tmp_path / "out.nc") == ExitCode.INPUT_DATA
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "Traceback" not in error
    assert "station 08189500" in error and "area_km2" in error and "cfs" in error
    assert not (tmp_path / "out.nc").exists()


@pytest.mark.parametrize("units", ["bananas", "cfs per day please"])
def test_a_bad_unit_string_is_one_line_naming_the_file_and_the_unit(tmp_path: Path, data_dir: Path, units: str,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    variables = {"streamflow": {"source": "streamflow", "units": units}}
    config = _config(tmp_path, data_dir, _sources(tmp_path, data_dir, "agency", "cfs"), variables)
    assert _ingest(config, tmp_path / "out.nc") == ExitCode.CONFIG
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and str(config) in error and repr(units) in error
    assert not (tmp_path / "out.nc").exists()
