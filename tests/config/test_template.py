"""The ingest template (``hydroseq config --template ingest``) as a user runs it: its example source, the
bundled Caravan CSVs whose ``date`` column names the day each value covers, lands every value on its own
grid day, not the day before."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
import yaml

from hydroseq.cli import main
from hydroseq.config import IngestConfig
from hydroseq.config.template import config_template
from hydroseq.grid import GridSpec

STATION = "01022500"


def test_the_ingest_template_lands_each_dated_value_on_its_own_day(tmp_path: Path, repo_root: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    config = yaml.safe_load(config_template(IngestConfig, "ingest"))
    config["stations"]["ids"] = [STATION]
    config["grid"].update(start="1981-01-01", end="1981-03-31")
    path = tmp_path / "ingest.yaml"
    path.write_text(yaml.safe_dump(config))
    monkeypatch.chdir(repo_root)  # the template's paths are relative to the project root
    assert main(["ingest", "--config", str(path), "--out", str(tmp_path / "out.nc"), "-q"]) == 0
    raw = pd.read_csv(repo_root / "data" / "daily_caravan_camels_us" / f"{STATION}.csv", index_col="date",
                      parse_dates=True)
    with xr.open_dataset(tmp_path / "out.nc") as ds:
        days = GridSpec.from_attrs(ds.attrs).local_days(ds["time"].values)
        assert days[0] == pd.Timestamp("1981-01-01") and len(days) == 90
        for name in ("total_precipitation_sum", "streamflow", "temperature_2m_mean"):
            ingested = ds[name].sel(station=STATION).values
            expected = raw.loc[days, name].to_numpy(dtype=np.float32)
            np.testing.assert_allclose(ingested, expected, rtol=1e-6, err_msg=name)
    # the day this fix is about: 7.69 mm fell on 1981-01-02 (and 0 on the 1st)
    assert raw.loc["1981-01-02", "total_precipitation_sum"] == 7.69
