"""CSV files without a time column (row i = time_start + i x frequency) and without a header: the Ebnit data."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

from hydroseq.config import ConfigError, IngestConfig, load_config, validate_config
from hydroseq.config.ingest import SourceConfig
from hydroseq.errors import InputDataError
from hydroseq.grid import GridSpec
from hydroseq.ingest import ingest

from .conftest import grid_values

HOURLY_UTC = {"frequency": "1h", "timezone": "UTC", "start": "2001-01-01", "end": "2001-01-01"}


def _source(path: Path, **extra) -> dict:
    return {"path": str(path), "format": "csv", "header": False, "station": "0001", "frequency": "1h",
            "time_start": "2001-01-01T00:00:00", "timestamp": "interval_start", "timezone": "UTC",
            "variables": {"streamflow": {"source": "1", "units": "m3/s"}}, **extra}


def test_rows_are_consecutive_steps_and_a_blank_line_is_a_missing_value(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text("1.5\n2.5\n\n4.5\n")  # the empty third line is hour 3, not skipped
    labels, values = grid_values(_source(path), HOURLY_UTC, [path])
    series = pd.Series(values["streamflow"], index=labels)
    assert series["2001-01-01T01:00"] == 1.5 and series["2001-01-01T02:00"] == 2.5
    assert np.isnan(series["2001-01-01T03:00"]) and series["2001-01-01T04:00"] == 4.5
    assert np.isnan(series["2001-01-01T05:00"])  # after the last row: no data


def test_a_bad_value_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text("1.5\n2.5\nabc\n")
    with pytest.raises(InputDataError, match="line 3.*'abc' is not a number"):
        grid_values(_source(path), HOURLY_UTC, [path])


@pytest.mark.parametrize("change, expected", [
    ({"format": "caravan_csv"}, "time_start needs format csv"),
    ({"frequency": "irregular", "timestamp": "instantaneous"}, "time_start needs format csv and a regular"),
    ({"time_start": "2001-01-01T00:00:00+01:00"}, "without offset"),
])
def test_row_stamps_need_a_regular_csv(tmp_path: Path, change: dict, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected):
        validate_config(_source(tmp_path / "q.csv", **change), SourceConfig)


def test_ebnit_hourly_config_ingests_the_bundled_files_row_by_row(repo_root: Path, tmp_path: Path,
                                                                 monkeypatch) -> None:
    monkeypatch.chdir(repo_root)
    config = load_config("configs/ingest_ebnit_hourly.yaml", IngestConfig)
    ingest(config, tmp_path / "ebnit.nc", show_progress=False)
    rain = np.loadtxt(repo_root / "data/subdaily_ebnit_at/p_ebni.csv")
    discharge = np.loadtxt(repo_root / "data/subdaily_ebnit_at/q_host.csv")
    with xr.open_dataset(tmp_path / "ebnit.nc") as ds:
        times = pd.DatetimeIndex(ds["time"].values)
        q = ds["streamflow"].sel(station="host").values
        p = ds["total_precipitation_sum"].sel(station="host").values
        assert GridSpec.from_attrs(ds.attrs).timezone == "Etc/GMT-1"
        assert ds["total_precipitation_sum"].attrs["units"] == "mm"
    # row 0 is the hour starting 1996-01-01 00:00 CET: known at 01:00 CET = 00:00 UTC
    assert times[0] == pd.Timestamp("1996-01-01T00:00") and len(times) == 3652 * 24
    assert times[-1] == pd.Timestamp("2005-12-30T23:00")  # the last complete local day, 2005-12-30 CET
    np.testing.assert_allclose(q, discharge[: len(times)], rtol=1e-6)
    np.testing.assert_allclose(p, rain[: len(times)], rtol=1e-6)  # mm/h over one hour = mm


@settings(max_examples=15, deadline=None)
@given(frequency=st.sampled_from(["15min", "1h", "3h"]), convention=st.sampled_from(["interval_start", "interval_end"]),
       zone=st.sampled_from(["UTC", "+01:00", "-05:00"]), grid_frequency=st.sampled_from(["1h", "1D"]),
       cut_minutes=st.integers(60, 3 * 24 * 60), seed=st.integers(0, 2**31 - 1))
def test_perturbing_rows_known_after_t_leaves_the_grid_up_to_t(frequency, convention, zone, grid_frequency,
                                                              cut_minutes, seed) -> None:
    """Row-stamped files are causal: rows whose interval ends after t* never move a grid value at or before t*."""
    step = pd.Timedelta(frequency)
    count = int(pd.Timedelta("4D") / step)
    values = np.random.default_rng(seed).gamma(0.5, 2.0, count).round(3)
    local_start = pd.Timestamp("2001-01-01T00:00")
    offset = pd.Timedelta(0) if zone == "UTC" else (1 if zone[0] == "+" else -1) * pd.Timedelta(hours=int(zone[1:3]))
    known = (local_start - offset + step * np.arange(count)
             + (step if convention == "interval_start" else pd.Timedelta(0)))
    cutoff = local_start - offset + pd.Timedelta(minutes=cut_minutes)
    perturbed = np.where(np.asarray(known > cutoff), values * 7.0 + 1.0, values)
    grid = {"frequency": grid_frequency, "timezone": "UTC", "start": "2001-01-01", "end": "2001-01-03"}
    with tempfile.TemporaryDirectory() as folder:
        results = []
        for name, series in (("base", values), ("perturbed", perturbed)):
            path = Path(folder) / f"{name}.csv"
            path.write_text("".join(f"{v!r}\n" for v in series.tolist()))
            source = _source(path, frequency=frequency, timestamp=convention, timezone=zone,
                             time_start=str(local_start.isoformat()),
                             variables={"streamflow": {"source": "1", "units": "m3/s", "aggregation": "mean"}})
            results.append(grid_values(source, grid, [path]))
    labels = results[0][0]
    up_to_cut = np.asarray(labels <= cutoff)
    base, moved = results[0][1]["streamflow"], results[1][1]["streamflow"]
    np.testing.assert_array_equal(base[up_to_cut], moved[up_to_cut])
    if (~up_to_cut).any() and np.isfinite(base[~up_to_cut]).any():
        assert not np.array_equal(base[~up_to_cut], moved[~up_to_cut], equal_nan=True)  # control: later values move
