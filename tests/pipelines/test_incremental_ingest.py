"""The daily job's incremental ingest: a first period, then the next days appended to the same file."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from hydroseq.cli import main
from hydroseq.config import IngestConfig, dump_config, load_config
from hydroseq.errors import InputDataError
from hydroseq.grid import GridSpec
from hydroseq.ingest import ingest

REPO_ROOT = Path(__file__).resolve().parents[2]


def _config(start: dt.date, end: dt.date, stations: list[str] | None = None) -> IngestConfig:
    config = load_config(REPO_ROOT / "configs" / "ingest_caravan_daily.yaml", IngestConfig)
    config.stations.path = REPO_ROOT / config.stations.path
    for source in config.sources:
        source.path = str(REPO_ROOT / source.path)
    config.grid.start, config.grid.end = start, end
    if stations is not None:
        config.stations.ids = stations
    return config


def _read(path: Path) -> xr.Dataset:
    with xr.open_dataset(path) as dataset:
        return dataset.load()


@pytest.fixture(scope="module")
def first_half(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("incremental") / "first.nc"
    ingest(_config(dt.date(2014, 6, 1), dt.date(2014, 6, 30)), out, show_progress=False)
    return out


def test_appending_the_next_days_equals_one_ingest(first_half: Path, tmp_path: Path) -> None:
    daily = tmp_path / "daily.nc"
    daily.write_bytes(first_half.read_bytes())
    # the daily window overlaps the last 3 days, as the daily job's does (late observations)
    ingest(_config(dt.date(2014, 6, 28), dt.date(2014, 7, 10)), daily, append=True, show_progress=False)
    ingest(_config(dt.date(2014, 6, 1), dt.date(2014, 7, 10)), tmp_path / "full.nc", show_progress=False)
    appended, full = _read(daily), _read(tmp_path / "full.nc")
    assert appended.sizes["time"] == 40
    assert appended.attrs["dataset_checksum"] == full.attrs["dataset_checksum"]
    xr.testing.assert_identical(appended.drop_attrs(), full.drop_attrs())
    assert GridSpec.from_attrs(appended.attrs) == GridSpec.from_attrs(full.attrs)


def test_overlap_replaces_the_tail_and_keeps_the_rest(first_half: Path, tmp_path: Path) -> None:
    daily = tmp_path / "daily.nc"
    before = _read(first_half)
    edited = before.copy(deep=True)
    edited["streamflow"].values[:, :] = -1.0  # stands for provisional values that will be revised
    edited.to_netcdf(daily)
    status = main(["ingest", "--config", str(_write_config(tmp_path, dt.date(2014, 6, 29), dt.date(2014, 7, 2))),
                   "--out", str(daily), "--append"])
    assert status == 0
    after = _read(daily)
    assert after.sizes["time"] == 32
    assert (after["streamflow"].values[:, :28] == -1.0).all()  # history untouched: not re-read
    np.testing.assert_array_equal(after["streamflow"].values[:, 28:30], before["streamflow"].values[:, 28:30])


def _write_config(tmp_path: Path, start: dt.date, end: dt.date) -> Path:
    path = tmp_path / "daily_ingest.yaml"
    path.write_text(dump_config(_config(start, end)))
    return path


def test_gap_is_refused(first_half: Path, tmp_path: Path) -> None:
    daily = tmp_path / "daily.nc"
    daily.write_bytes(first_half.read_bytes())
    with pytest.raises(InputDataError, match="gap: the file ends at 2014-07-01 08:00:00"):
        ingest(_config(dt.date(2014, 7, 5), dt.date(2014, 7, 10)), daily, append=True, show_progress=False)
    assert daily.read_bytes() == first_half.read_bytes()


def test_other_stations_or_no_file_are_refused(first_half: Path, tmp_path: Path) -> None:
    daily = tmp_path / "daily.nc"
    daily.write_bytes(first_half.read_bytes())
    with pytest.raises(InputDataError, match="stations differ"):
        ingest(_config(dt.date(2014, 6, 30), dt.date(2014, 7, 2), stations=["01022500"]), daily, append=True,
               show_progress=False)
    with pytest.raises(InputDataError, match="needs an existing dataset"):
        ingest(_config(dt.date(2014, 6, 30), dt.date(2014, 7, 2)), tmp_path / "none.nc", append=True,
               show_progress=False)
