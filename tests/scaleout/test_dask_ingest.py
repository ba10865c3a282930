"""Ingestion on a real dask cluster (2 worker processes) gives the serial ingest's file, bit for bit,
applies ``on_bad_station`` exactly like it, and really spreads the stations over both workers."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from hypothesis import given
from hypothesis import strategies as st

from hydroseq.cli import main
from hydroseq.config import dump_config
from hydroseq.errors import ConfigError, HydroseqError, InputDataError
from hydroseq.fileio import sha256_file
from hydroseq.ingest import build_grid, ingest, plan_sources
from hydroseq.ingest.distributed import CHUNK_BYTES, dask_client, grid_stations_on_dask, station_chunks
from hydroseq.ingest.station_list import load_stations
from tests.fixtures import caravan_copies_with_a_duplicated_date

REPO_ROOT = Path(__file__).resolve().parents[2]
CARAVAN_DIR = REPO_ROOT / "data" / "daily_caravan_camels_us"
FEW_STATIONS = ["01022500", "01547700", "02064000", "03015500"]


def assert_same_dataset(serial: Path, distributed: Path) -> None:
    """Every variable (dtype, shape, bytes incl. NaN positions) and every attribute are equal."""
    with xr.open_dataset(serial, decode_times=False) as a, xr.open_dataset(distributed, decode_times=False) as b:
        assert a.attrs == b.attrs
        assert sorted(a.variables) == sorted(b.variables)
        for name in a.variables:
            left, right = a[name], b[name]
            assert left.dims == right.dims and left.attrs == right.attrs, name
            assert left.dtype == right.dtype, name
            if left.dtype.kind == "f":
                assert np.array_equal(left.values, right.values, equal_nan=True), name
                assert (left.values.view(np.uint8) == right.values.view(np.uint8)).all(), name
            else:
                assert (left.values == right.values).all(), name


def test_cli_workers_2_writes_the_serial_file_bit_for_bit(tmp_path: Path, ingest_config) -> None:
    """All 31 bundled Caravan basins, 1981-2014: ``--workers 2`` starts its own LocalCluster."""
    config_path = tmp_path / "ingest.yaml"
    config_path.write_text(dump_config(ingest_config("ingest_caravan_daily.yaml")))
    serial, distributed = tmp_path / "serial.nc", tmp_path / "dask.nc"
    assert main(["ingest", "--config", str(config_path), "--out", str(serial)]) == 0
    assert main(["ingest", "--config", str(config_path), "--out", str(distributed), "--workers", "2"]) == 0
    assert_same_dataset(serial, distributed)
    assert sha256_file(serial) == sha256_file(distributed)
    assert (tmp_path / "serial.report.csv").read_text() == (tmp_path / "dask.report.csv").read_text()
    assert not list(tmp_path.glob(".*.tmp"))  # the atomic write left nothing behind


def test_multi_source_config_on_an_existing_scheduler_matches_serial(tmp_path: Path, dask_cluster: str,
                                                                     ingest_config) -> None:
    """CAMELS-US text layout: two sources per station, unit conversion through the area."""
    config = ingest_config("ingest_camels_us.yaml")
    serial = ingest(config, tmp_path / "serial.nc", show_progress=False)
    distributed = ingest(config, tmp_path / "dask.nc", scheduler=dask_cluster, show_progress=False)
    assert_same_dataset(serial.output, distributed.output)
    assert len(distributed.stations) == 4





@pytest.mark.parametrize("policy", ["skip", "fail"])
def test_bad_station_is_handled_as_in_the_serial_run(tmp_path: Path, dask_cluster: str, policy: str,
                                                     ingest_config) -> None:
    sources = caravan_copies_with_a_duplicated_date(tmp_path, FEW_STATIONS, FEW_STATIONS[2])
    config = ingest_config("ingest_caravan_daily.yaml", on_bad_station=policy)
    config = config.model_copy(update={
        "stations": config.stations.model_copy(update={"ids": FEW_STATIONS}),
        "sources": [config.sources[0].model_copy(update={"path": str(sources / "[0-9]*.csv")})]})
    if policy == "fail":
        with pytest.raises(InputDataError) as serial_error:
            ingest(config, tmp_path / "serial.nc", show_progress=False)
        with pytest.raises(InputDataError) as dask_error:
            ingest(config, tmp_path / "dask.nc", scheduler=dask_cluster, show_progress=False)
        assert str(dask_error.value) == str(serial_error.value)
        assert "duplicated timestamp" in str(dask_error.value) and "line 102" in str(dask_error.value)
        assert not (tmp_path / "dask.nc").exists()
        return
    serial = ingest(config, tmp_path / "serial.nc", show_progress=False)
    distributed = ingest(config, tmp_path / "dask.nc", scheduler=dask_cluster, show_progress=False)
    assert list(distributed.dropped) == [FEW_STATIONS[2]]
    assert distributed.dropped == serial.dropped
    assert_same_dataset(serial.output, distributed.output)


def test_stations_are_spread_over_both_worker_processes(dask_cluster: str, ingest_config) -> None:
    from distributed import Client, get_task_stream

    config = ingest_config("ingest_caravan_daily.yaml")
    stations = load_stations(config.stations)
    plans, _, _ = plan_sources(config, stations)
    with Client(dask_cluster) as observer, get_task_stream(observer) as stream:
        outcomes = grid_stations_on_dask(stations, plans, build_grid(config.grid), scheduler=dask_cluster,
                                         show_progress=False)
    assert [outcome.station.id for outcome in outcomes] == [station.id for station in stations]
    workers = {task["worker"] for task in stream.data if task["key"].startswith("grid_chunk")}
    assert len(workers) == 2
    chunks = [task for task in stream.data if task["key"].startswith("grid_chunk")]
    assert len(chunks) == 8  # 31 stations, 4 chunks per worker slot: chunks of 4 stations


@given(n_items=st.integers(0, 500), n_slots=st.integers(1, 64), bytes_per_station=st.integers(1, 3 * CHUNK_BYTES))
def test_chunks_keep_the_order_and_bound_the_gridded_bytes(n_items: int, n_slots: int, bytes_per_station: int) -> None:
    items = list(range(n_items))
    chunks = station_chunks(items, n_slots, bytes_per_station)
    assert [item for chunk in chunks for item in chunk] == items
    for chunk in chunks:
        assert len(chunk) == 1 or len(chunk) * bytes_per_station <= CHUNK_BYTES
    if n_items and bytes_per_station * n_items <= CHUNK_BYTES:
        assert len(chunks) >= min(n_items, 4 * n_slots) // 2  # enough tasks to keep every worker busy


def test_workers_and_scheduler_are_checked() -> None:
    with pytest.raises(ConfigError, match="not both"):
        with dask_client(workers=2, scheduler="tcp://127.0.0.1:8786"):
            pass
    with pytest.raises(ConfigError, match="at least 1"):
        with dask_client(workers=0):
            pass


def test_unreachable_scheduler_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("hydroseq.ingest.distributed.CONNECT_TIMEOUT_S", 1)
    with pytest.raises(HydroseqError, match="cannot connect to the dask scheduler"):
        with dask_client(scheduler="tcp://127.0.0.1:9"):
            pass


def test_marked_missing_counts_are_the_serial_ones(tmp_path: Path, dask_cluster: str, ingest_config) -> None:
    """``on_implausible: mark_missing`` with bad values in two stations: the same file and the same
    report counts on the cluster as in the serial run."""
    for station in FEW_STATIONS:
        shutil.copy(CARAVAN_DIR / f"{station}.csv", tmp_path / f"{station}.csv")
    for station, line, column, text in ((FEW_STATIONS[0], 50, 1, "inf"), (FEW_STATIONS[0], 60, 4, "-3"),
                                        (FEW_STATIONS[3], 70, 2, "99")):
        path = tmp_path / f"{station}.csv"
        lines = path.read_text().splitlines(keepends=True)
        fields = lines[line - 1].rstrip("\n").split(",")
        fields[column] = text
        lines[line - 1] = ",".join(fields) + "\n"
        path.write_text("".join(lines))
    config = ingest_config("ingest_caravan_daily.yaml")
    config = config.model_copy(update={
        "stations": config.stations.model_copy(update={"ids": FEW_STATIONS}),
        "sources": [config.sources[0].model_copy(update={"path": str(tmp_path / "[0-9]*.csv"),
                                                         "on_implausible": "mark_missing"})]})
    serial = ingest(config, tmp_path / "serial.nc", show_progress=False)
    distributed = ingest(config, tmp_path / "dask.nc", scheduler=dask_cluster, show_progress=False)
    assert_same_dataset(serial.output, distributed.output)
    assert (tmp_path / "serial.report.csv").read_text() == (tmp_path / "dask.report.csv").read_text()
    counts = distributed.stations.set_index("station")["marked_missing"].to_dict()
    assert counts == {FEW_STATIONS[0]: 2, FEW_STATIONS[1]: 0, FEW_STATIONS[2]: 0, FEW_STATIONS[3]: 1}
