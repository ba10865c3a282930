"""A forecast in m³/s beside mm/d, with each station's name and catchment area, through ``hydroseq forecast``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from hydroseq.cli import main
from hydroseq.forecast.discharge import add_m3s_columns

STATIONS = Path(__file__).resolve().parents[2] / "data" / "stations" / "caravan_camels_us.csv"


def test_forecast_file_gives_m3s_and_mm_per_day_that_agree_through_its_own_area(exported: Path, ingested: Path,
                                                                               tmp_path: Path) -> None:
    out = tmp_path / "forecast.nc"
    assert main(["-q", "forecast", "--model", str(exported), "--data", str(ingested), "--issue-time", "2014-06-30",
                 "--out", str(out)]) == 0
    table = pd.read_csv(STATIONS, dtype={"station_id": str}).set_index("station_id")
    with xr.open_dataset(out) as forecast:
        assert forecast["streamflow"].attrs["units"] == "mm d-1"
        assert forecast["streamflow_m3s"].attrs["units"] == "m3 s-1"
        assert forecast["streamflow_m3s"].attrs["standard_name"] == "water_volume_transport_in_river_channel"
        assert forecast["area_km2"].attrs["units"] == "km2"
        by_hand = forecast["streamflow"] * forecast["area_km2"] * 1000.0 / 86400.0
        np.testing.assert_allclose(forecast["streamflow_m3s"].values, by_hand.values, rtol=1e-6)
        assert np.isfinite(forecast["streamflow_m3s"].values).all(axis=1).sum() >= 25
        stations = [str(station) for station in forecast["station"].values]
        np.testing.assert_array_equal(forecast["area_km2"].values, table.loc[stations, "area_km2"].to_numpy())
        assert [str(name) for name in forecast["station_name"].values] == table.loc[stations, "name"].tolist()
        one = forecast.sel(station="01022500").isel(lead=0)
        assert str(one["station_name"].values) == "Narraguagus River at Cherryfield, Maine"
        np.testing.assert_allclose(float(one["streamflow_m3s"]), float(one["streamflow"]) * 619.1 * 1000.0 / 86400.0,
                                   rtol=1e-6)
    rows = pd.read_csv(out.with_suffix(".csv"), dtype={"station": str})
    assert "value_m3s" in rows.columns and list(rows.columns[-2:]) == ["station_name", "area_km2"]
    np.testing.assert_allclose(rows["value_m3s"], rows["value"] * rows["area_km2"] * 1000.0 / 86400.0, rtol=1e-6)
    assert set(rows.loc[rows["station"] == "01022500", "station_name"]) == {"Narraguagus River at Cherryfield, Maine"}
    # what the served model calls for the same columns: from the mm/d ones and the areas alone
    area = dict(zip(rows["station"], rows["area_km2"], strict=True))
    served = add_m3s_columns(rows.drop(columns=["value_m3s"]), "mm d-1", pd.Timedelta("1D"), area)
    assert list(served.columns) == list(rows.columns)
    np.testing.assert_allclose(served["value_m3s"], rows["value_m3s"], rtol=1e-6)

