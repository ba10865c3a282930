"""Ingestion into a Zarr store on a real dask cluster (2 worker processes): the workers write their
station chunks into the store, and the store equals the serial ingest's Zarr store (values,
attributes, checksum, report), also when a bad station is skipped or fails the run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from hypothesis import given
from hypothesis import strategies as st

from hydroseq.config import IngestConfig
from hydroseq.errors import InputDataError
from hydroseq.ingest import build_grid, dataset_checksum, ingest, plan_sources
from hydroseq.ingest.distributed import grid_stations_into_store, station_chunks
from hydroseq.ingest.station_list import load_stations
from hydroseq.ingest.zarr_on_dask import _template
from hydroseq.ingest.zarr_output import write_template
from hydroseq.ingested import open_ingested
from tests.fixtures import assert_same_content, caravan_copies_with_a_duplicated_date

REPO_ROOT = Path(__file__).resolve().parents[2]
CARAVAN_DIR = REPO_ROOT / "data" / "daily_caravan_camels_us"
STATIONS = ["01022500", "01547700", "02064000", "03015500", "02011460", "02221525", "01052500"]
PER_CHUNK = 2


def _config(ingest_config, **changes: object) -> IngestConfig:
    config = ingest_config("ingest_caravan_daily.yaml", **changes)
    return config.model_copy(update={
        "stations": config.stations.model_copy(update={"ids": STATIONS}),
        "output": config.output.model_copy(update={"zarr_stations_per_chunk": PER_CHUNK})})


def assert_same_store(serial: Path, distributed: Path) -> None:
    (left, _), (right, _) = open_ingested(serial), open_ingested(distributed)
    with left, right:
        assert_same_content(left, right)
        assert right.attrs["dataset_checksum"] == dataset_checksum(right)
    for array in ("streamflow", "coverage_streamflow", "station"):  # same chunks, same bytes in each
        chunk_files = sorted(path.name for path in (serial / array).iterdir())
        assert chunk_files == sorted(path.name for path in (distributed / array).iterdir())
        for name in chunk_files:
            assert (serial / array / name).read_bytes() == (distributed / array / name).read_bytes(), (array, name)


def test_dask_zarr_ingest_equals_the_serial_zarr_ingest(tmp_path: Path, dask_cluster: str, ingest_config) -> None:
    config = _config(ingest_config)
    serial = ingest(config, tmp_path / "serial.zarr", show_progress=False)
    distributed = ingest(config, tmp_path / "dask.zarr", scheduler=dask_cluster, show_progress=False)
    assert_same_store(serial.output, distributed.output)
    assert (tmp_path / "serial.report.csv").read_text() == (tmp_path / "dask.report.csv").read_text()
    assert distributed.records == serial.records
    assert not [path for path in tmp_path.iterdir() if path.name.startswith(".")]


def test_the_workers_write_the_rows_and_return_no_arrays(tmp_path: Path, dask_cluster: str, ingest_config) -> None:
    from distributed import Client, get_task_stream

    config = _config(ingest_config)
    stations = load_stations(config.stations)
    plans, _, _ = plan_sources(config, stations)
    grid = build_grid(config.grid)
    store = tmp_path / "store.zarr"
    store.mkdir()
    write_template(_template(config, grid, stations, PER_CHUNK), store, PER_CHUNK)
    with Client(dask_cluster) as observer, get_task_stream(observer) as stream:
        chunks = grid_stations_into_store(stations, plans, grid, config, store, PER_CHUNK, scheduler=dask_cluster,
                                          show_progress=False)
    assert [chunk.start for chunk in chunks] == sorted(chunk.start for chunk in chunks)
    assert all(chunk.start % PER_CHUNK == 0 and not chunk.failures for chunk in chunks)
    assert [row["station"] for chunk in chunks for row in chunk.rows] == STATIONS
    assert {task["worker"] for task in stream.data if task["key"].startswith("grid_chunk_into_store")}
    with xr.open_zarr(store, consolidated=False) as written:
        assert np.isfinite(written["streamflow"].values).any(axis=1).all()  # every station's row was written





@pytest.mark.parametrize("policy", ["skip", "fail"])
def test_a_bad_station_is_handled_as_in_the_serial_zarr_ingest(tmp_path: Path, dask_cluster: str, policy: str,
                                                               ingest_config) -> None:
    sources = caravan_copies_with_a_duplicated_date(tmp_path, STATIONS, STATIONS[3])
    config = _config(ingest_config, on_bad_station=policy)
    config = config.model_copy(update={
        "sources": [config.sources[0].model_copy(update={"path": str(sources / "[0-9]*.csv")})]})
    if policy == "fail":
        with pytest.raises(InputDataError) as serial_error:
            ingest(config, tmp_path / "serial.zarr", show_progress=False)
        with pytest.raises(InputDataError) as dask_error:
            ingest(config, tmp_path / "dask.zarr", scheduler=dask_cluster, show_progress=False)
        assert str(dask_error.value) == str(serial_error.value)
        assert not (tmp_path / "dask.zarr").exists()
        assert not [path for path in tmp_path.iterdir() if path.name.startswith(".")]
        return
    serial = ingest(config, tmp_path / "serial.zarr", show_progress=False)
    distributed = ingest(config, tmp_path / "dask.zarr", scheduler=dask_cluster, show_progress=False)
    assert list(distributed.dropped) == [STATIONS[3]] and distributed.dropped == serial.dropped
    assert_same_store(serial.output, distributed.output)  # the rows after the dropped one moved up a chunk
    assert (tmp_path / "serial.report.csv").read_text() == (tmp_path / "dask.report.csv").read_text()


@given(n_items=st.integers(0, 300), n_slots=st.integers(1, 32), per_chunk=st.integers(1, 50))
def test_task_chunks_are_whole_zarr_chunks(n_items: int, n_slots: int, per_chunk: int) -> None:
    items = list(range(n_items))
    chunks = station_chunks(items, n_slots, 1000, multiple_of=per_chunk)
    assert [item for chunk in chunks for item in chunk] == items
    assert all(len(chunk) % per_chunk == 0 for chunk in chunks[:-1])
