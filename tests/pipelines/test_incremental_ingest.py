"""The daily job's incremental ingest: a first period, then the next days appended to the same file."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pandas as pd
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


def _raw_files_until(folder: Path, last: dt.date, without: tuple[dt.date, ...] = ()) -> str:
    """Copies of the bundled raw files for June 2014 up to ``last`` (the rest has not arrived), less ``without``."""
    folder.mkdir()
    skip = {day.isoformat() for day in without}
    for path in sorted((REPO_ROOT / "data" / "daily_caravan_camels_us").glob("[0-9]*.csv")):
        table = pd.read_csv(path, dtype={"date": str})
        rows = table[(table["date"] >= "2014-06-01") & (table["date"] <= last.isoformat()) & ~table["date"].isin(skip)]
        rows.to_csv(folder / path.name, index=False)
    return str(folder / "[0-9]*.csv")


def _window(tmp_path: Path, sources: str, start: dt.date, end: dt.date) -> Path:
    path = tmp_path / f"window_{start}_{end}.yaml"
    path.write_text(dump_config(_config_from(sources, start, end)))
    return path


def test_days_without_raw_data_are_not_appended(first_half: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The raw files of the new days have not arrived: nothing appended, the file left as it was, and said so."""
    daily = tmp_path / "daily.nc"
    daily.write_bytes(first_half.read_bytes())
    before = daily.stat().st_mtime_ns, daily.read_bytes()
    arrived = _raw_files_until(tmp_path / "raw", dt.date(2014, 6, 30))
    window = _window(tmp_path, arrived, dt.date(2014, 6, 28), dt.date(2014, 7, 2))
    assert main(["--json", "ingest", "--config", str(window), "--out", str(daily), "--append"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["append"] == {
        "new_steps": 0, "no_new_data": True, "written": False, "last_time": "2014-07-01T08:00:00Z",
        "without_data": {"first": "2014-07-02T08:00:00Z", "last": "2014-07-03T08:00:00Z", "count": 2}}
    assert ("hydroseq ingest: no new raw data: no value at any station for grid step(s) 2014-07-02T08:00:00Z .. "
            "2014-07-03T08:00:00Z (raw files not arrived?); nothing appended, the dataset still ends at "
            "2014-07-01T08:00:00Z") in captured.err
    assert (daily.stat().st_mtime_ns, daily.read_bytes()) == before


def test_only_the_empty_tail_is_left_out(first_half: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """07-01 has arrived, 07-02 not: 07-01 is appended; a day missing before one that arrived is kept (a gap)."""
    daily = tmp_path / "daily.nc"
    daily.write_bytes(first_half.read_bytes())
    arrived = _raw_files_until(tmp_path / "raw", dt.date(2014, 7, 1))
    assert main(["--json", "-q", "ingest", "--config", str(_window(tmp_path, arrived, dt.date(2014, 6, 29),
                                                                  dt.date(2014, 7, 2))),
                 "--out", str(daily), "--append"]) == 0
    append = json.loads(capsys.readouterr().out)["append"]
    assert (append["new_steps"], append["no_new_data"], append["without_data"]["count"]) == (1, False, 1)
    assert _read(daily)["time"].values[-1] == np.datetime64("2014-07-02T08:00", "ns")

    gap = _raw_files_until(tmp_path / "raw_gap", dt.date(2014, 7, 3), without=(dt.date(2014, 7, 2),))
    ingest(_config_from(gap, dt.date(2014, 6, 30), dt.date(2014, 7, 3)), daily, append=True, show_progress=False)
    after = _read(daily)
    assert after["time"].values[-1] == np.datetime64("2014-07-04T08:00", "ns")
    assert np.isnan(after["streamflow"].sel(time="2014-07-03T08:00").values).all()


def _config_from(sources: str, start: dt.date, end: dt.date) -> IngestConfig:
    config = _config(start, end)
    config.sources[0].path = sources
    return config


def test_a_backfill_keeps_every_later_step(first_half: Path, tmp_path: Path) -> None:
    """A rerun of a past day (its window ends before the file's end) replaces only the window: every later step
    stays, with the same values, and the file's values outside the window are those it held."""
    daily = tmp_path / "daily.nc"
    before = _read(first_half)
    edited = before.copy(deep=True)
    edited["streamflow"].values[:, :] = -1.0  # the file's values, told apart from the raw files' ones
    edited.to_netcdf(daily)
    ingest(_config(dt.date(2014, 6, 10), dt.date(2014, 6, 13)), daily, append=True, show_progress=False)
    after = _read(daily)
    assert after.sizes["time"] == before.sizes["time"] == 30
    np.testing.assert_array_equal(after["time"].values, before["time"].values)
    window = (after["time"].values >= np.datetime64("2014-06-11T08:00")) & \
        (after["time"].values <= np.datetime64("2014-06-14T08:00"))  # local days 06-10 .. 06-13
    assert window.sum() == 4
    for name in [n for n in after.data_vars if "time" in after[n].dims]:
        np.testing.assert_array_equal(after[name].isel(time=~window).values, edited[name].isel(time=~window).values,
                                      err_msg=name)
    np.testing.assert_array_equal(after["streamflow"].values[:, window], before["streamflow"].values[:, window])
    rerun = tmp_path / "rerun.nc"
    rerun.write_bytes(first_half.read_bytes())
    ingest(_config(dt.date(2014, 6, 10), dt.date(2014, 6, 13)), rerun, append=True, show_progress=False)
    assert _read(rerun).attrs["dataset_checksum"] == before.attrs["dataset_checksum"]  # the same raw files


def test_a_backfill_without_its_raw_files_keeps_the_file_values(first_half: Path, tmp_path: Path) -> None:
    """The raw folder no longer holds two days of a backfill's window: those steps keep the file's values
    (they are not erased to missing); the days it holds are re-ingested."""
    daily = tmp_path / "daily.nc"
    daily.write_bytes(first_half.read_bytes())
    before = _read(first_half)
    raw = _raw_files_until(tmp_path / "raw", dt.date(2014, 6, 30), without=(dt.date(2014, 6, 11), dt.date(2014, 6, 12)))
    ingest(_config_from(raw, dt.date(2014, 6, 10), dt.date(2014, 6, 13)), daily, append=True, show_progress=False)
    after = _read(daily)
    assert after.attrs["dataset_checksum"] == before.attrs["dataset_checksum"]
    xr.testing.assert_identical(after.drop_attrs(), before.drop_attrs())
