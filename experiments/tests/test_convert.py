"""The Caravan -> NeuralHydrology GenericDataset converter, on the bundled real CSVs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from experiments.nh.convert import convert_caravan, read_attributes, read_caravan_csv
from experiments.protocol import CARAVAN_DIR, DYNAMIC_INPUTS, STATIC_INPUTS
from hydroseq.errors import InputDataError

BASINS = ("01022500", "14325000")  # the second ends its streamflow with NA days


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("nh_data")
    convert_caravan(CARAVAN_DIR, out, BASINS, DYNAMIC_INPUTS, STATIC_INPUTS)
    return out


@pytest.mark.parametrize("basin", BASINS)
def test_time_series_values_equal_the_csv(converted: Path, basin: str) -> None:
    raw = pd.read_csv(CARAVAN_DIR / f"{basin}.csv", parse_dates=["date"], na_values=["NA"])
    with xr.open_dataset(converted / "time_series" / f"{basin}.nc") as ds:
        assert list(ds.dims) == ["date"]
        assert ds["date"].values[0] == np.datetime64("1981-01-01")
        assert len(ds["date"]) == len(raw)
        for name in (*DYNAMIC_INPUTS, "streamflow"):
            np.testing.assert_allclose(ds[name].values, raw[name].to_numpy(), rtol=1e-6, equal_nan=True)


def test_missing_streamflow_stays_nan(converted: Path) -> None:
    raw = pd.read_csv(CARAVAN_DIR / "14325000.csv", keep_default_na=False)
    n_missing = int((raw["streamflow"] == "NA").sum())
    with xr.open_dataset(converted / "time_series" / "14325000.nc") as ds:
        assert int(np.isnan(ds["streamflow"].values).sum()) == n_missing
        assert not np.isnan(ds["total_precipitation_sum"].values).any()


def test_attributes_keep_leading_zeros_and_only_the_requested_columns(converted: Path) -> None:
    table = pd.read_csv(converted / "attributes" / "attributes.csv", dtype={"gauge_id": str}).set_index("gauge_id")
    assert list(table.index) == list(BASINS)
    assert list(table.columns) == list(STATIC_INPUTS)
    source = pd.read_csv(CARAVAN_DIR / "attributes.csv", dtype={"gauge_id": str}).set_index("gauge_id")
    np.testing.assert_allclose(table.to_numpy(), source.loc[list(BASINS), list(STATIC_INPUTS)].to_numpy())
    assert (converted / "basins.txt").read_text().split() == list(BASINS)


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


HEADER = "date,total_precipitation_sum,temperature_2m_mean,potential_evaporation_sum,streamflow"


@pytest.mark.parametrize(("rows", "message", "line"), [
    (["1981-01-01,1,2,3,4", "1981-13-02,1,2,3,4"], "'1981-13-02' is not YYYY-MM-DD", "line 3"),
    (["1981-01-01,1,2,3,4", "1981-01-02,1,2,3,4", "1981-01-04,1,2,3,4"], "does not follow", "line 4"),
    (["1981-01-01,1,2,3,4", "1981-01-02,1,two,3,4"], "temperature_2m_mean value 'two'", "line 3"),
], ids=["bad date", "gap in the dates", "bad number"])
def test_bad_row_names_its_line(tmp_path: Path, rows: list[str], message: str, line: str) -> None:
    csv = _write(tmp_path / "x.csv", [HEADER, *rows])
    with pytest.raises(InputDataError, match=message) as error:
        read_caravan_csv(csv, [*DYNAMIC_INPUTS, "streamflow"])
    assert error.value.where == line


def test_missing_column_is_reported(tmp_path: Path) -> None:
    csv = _write(tmp_path / "x.csv", ["date,streamflow", "1981-01-01,4"])
    with pytest.raises(InputDataError, match="missing column"):
        read_caravan_csv(csv, [*DYNAMIC_INPUTS, "streamflow"])


def test_unknown_basin_or_attribute_is_reported() -> None:
    with pytest.raises(InputDataError, match="no row for basin"):
        read_attributes(CARAVAN_DIR / "attributes.csv", ["99999999"], ["p_mean"])
    with pytest.raises(InputDataError, match="no attribute column"):
        read_attributes(CARAVAN_DIR / "attributes.csv", ["01022500"], ["not_an_attribute"])
