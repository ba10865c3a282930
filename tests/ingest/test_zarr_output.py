"""Zarr output of ``hydroseq ingest``: the NetCDF's values, attributes and checksum in a store chunked
by station; the same training arrays and batches from either; atomic like the NetCDF; clear errors."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import xarray as xr

from hydroseq.config import DataConfig, IngestConfig
from hydroseq.errors import ConfigError, InputDataError, OutputPathError
from hydroseq.fileio import sha256_path, verify_set
from hydroseq.ingest import dataset_checksum, ingest
from hydroseq.ingested import open_ingested
from tests.fixtures import (
    DYNAMIC,
    assert_same_content,
    caravan_copies_with_a_duplicated_date,
    caravan_ingest_config,
)

STATIONS = ["01022500", "01547700", "02064000", "03015500", "02011460"]
PER_CHUNK = 2


def _config(stations: list[str] = STATIONS) -> IngestConfig:
    config = caravan_ingest_config(dt.date(2000, 1, 1), dt.date(2004, 12, 31), stations)
    config.output.zarr_stations_per_chunk = PER_CHUNK
    return config


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same ingest written as NetCDF and as Zarr (different stems: each has its own report set)."""
    folder = tmp_path_factory.mktemp("zarr_output")
    netcdf = ingest(_config(), folder / "caravan_nc.nc", show_progress=False).output
    store = ingest(_config(), folder / "caravan_zarr.zarr", show_progress=False).output
    return netcdf, store




def test_zarr_and_netcdf_hold_the_same_values_attributes_and_checksum(both: tuple[Path, Path]) -> None:
    netcdf, store = both
    (left, _), (right, _) = open_ingested(netcdf), open_ingested(store)
    with left, right:
        assert_same_content(left, right)
        assert right.attrs["dataset_checksum"] == dataset_checksum(left) == dataset_checksum(right, PER_CHUNK)
        assert right["station"].values.tolist() == STATIONS  # text, leading zeros kept
    with xr.open_dataset(netcdf) as raw_netcdf, xr.open_zarr(store, consolidated=True) as raw_zarr:
        assert "time_bnds" in raw_netcdf and "time_bnds" in raw_zarr


def test_the_store_is_zarr_v2_consolidated_and_chunked_by_station(both: tuple[Path, Path]) -> None:
    _, store = both
    metadata = json.loads((store / ".zmetadata").read_text())["metadata"]
    arrays = {key.removesuffix("/.zarray"): entry for key, entry in metadata.items() if key.endswith("/.zarray")}
    n_times = arrays["time"]["shape"][0]
    assert {entry["zarr_format"] for entry in arrays.values()} == {2}
    assert arrays["streamflow"]["chunks"] == [PER_CHUNK, n_times] and arrays["streamflow"]["dtype"] == "<f4"
    assert arrays["coverage_streamflow"]["chunks"] == arrays["station"]["chunks"] == [PER_CHUNK]
    assert arrays["time"]["chunks"] == [n_times]
    assert sorted(path.name for path in (store / "streamflow").iterdir() if not path.name.startswith(".")) == \
        ["0.0", "1.0", "2.0"]  # 5 stations in chunks of 2
    manifest = json.loads(store.with_name("caravan_zarr.manifest.json").read_text())
    assert {entry["name"] for entry in manifest["files"]} >= {store.name, "caravan_zarr.report.csv"}
    assert verify_set(store.with_name("caravan_zarr.manifest.json"))[store.name] == sha256_path(store)


def _data_config(tmp: Path) -> DataConfig:
    return DataConfig.model_validate({
        "dynamic_inputs": DYNAMIC, "static_inputs": ["p_mean", "aridity"], "seq_len": 60, "min_len": 10,
        "cache_dir": str(tmp / "cache"),
        "splits": {"train": {"start": "2000-01-01", "end": "2002-12-31"},
                   "validation": {"start": "2003-01-01", "end": "2003-12-31"},
                   "test": {"start": "2004-01-01", "end": "2004-12-31"}}})


def test_zarr_and_netcdf_give_bit_identical_training_arrays_and_batches(both: tuple[Path, Path],
                                                                          tmp_path: Path) -> None:
    from hydroseq.dataset import Scalers, SequenceDataset, build_sample_index, load_station_data

    config = _data_config(tmp_path)
    batches = []
    for path in both:
        data = load_station_data(path, config)
        index = build_sample_index(data, config, "train", cache_dir=None)
        batches.append((data, SequenceDataset(data, Scalers.fit(data, config), index, config).gather(range(64))))
    (netcdf_data, netcdf_batch), (zarr_data, zarr_batch) = batches
    assert netcdf_data.station_ids == zarr_data.station_ids and netcdf_data.checksum == zarr_data.checksum
    for array in ("dynamic", "target", "static"):
        left, right = getattr(netcdf_data, array), getattr(zarr_data, array)
        assert left.dtype == right.dtype and left.tobytes() == right.tobytes(), array
    for field in dataclasses.fields(netcdf_batch):
        left, right = getattr(netcdf_batch, field.name), getattr(zarr_batch, field.name)
        if isinstance(left, torch.Tensor):
            assert left.dtype == right.dtype and left.numpy().tobytes() == right.numpy().tobytes(), field.name
        else:
            assert np.array_equal(np.asarray(left), np.asarray(right)), field.name





def test_a_failed_zarr_ingest_leaves_no_store_and_keeps_the_prior_one(tmp_path: Path) -> None:
    sources = caravan_copies_with_a_duplicated_date(tmp_path / "sources", STATIONS, STATIONS[2])
    config = _config()
    for source in config.sources:
        source.path = str(sources / Path(source.path).name)
    out = tmp_path / "out" / "data.zarr"
    with pytest.raises(InputDataError, match="duplicated timestamp"):
        ingest(config, out, show_progress=False)
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
    ingest(_config(), out, show_progress=False)
    before = sha256_path(out)
    with pytest.raises(InputDataError, match="duplicated timestamp"):
        ingest(config, out, show_progress=False)
    assert sha256_path(out) == before
    assert sorted(path.name for path in out.parent.iterdir() if path.name.startswith(".")) == []


def test_open_ingested_names_a_folder_that_is_no_store(tmp_path: Path) -> None:
    folder = tmp_path / "not_a_store.zarr"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello")
    with pytest.raises(InputDataError, match="not a Zarr store with consolidated metadata") as caught:
        open_ingested(folder)
    assert str(folder) in str(caught.value)
    xr.Dataset({"x": ("station", np.zeros(2))}).to_zarr(tmp_path / "plain.zarr", zarr_format=2, consolidated=True)
    with pytest.raises(InputDataError, match="no 'station' coordinate"):
        open_ingested(tmp_path / "plain.zarr")


def test_a_folder_that_is_not_a_store_is_not_replaced(tmp_path: Path) -> None:
    folder = tmp_path / "precious.zarr"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    with pytest.raises(OutputPathError, match="not a Zarr store: refusing to replace it"):
        ingest(_config(STATIONS[:1]), folder, show_progress=False)
    assert (folder / "notes.txt").read_text() == "keep me"


def test_append_to_a_zarr_store_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--append writes NetCDF only"):
        ingest(_config(STATIONS[:1]), tmp_path / "data.zarr", append=True, show_progress=False)


def test_a_failed_write_returns_only_once_its_other_chunk_writes_have_ended(
        both: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """zarr does not cancel a write's other chunk writes when one fails; were the error to return first,
    the store removed after it would get files back (a full disk once left a ``.tmp`` store)."""
    import asyncio
    import errno

    from zarr.storage import LocalStore

    from hydroseq.ingest.zarr_output import write_zarr

    real_set = LocalStore.set
    first_chunk = []

    async def set_slowly_or_fail(self, key, value):
        if key.rsplit("/", 1)[-1][:1].isdigit():  # a chunk, not metadata
            if not first_chunk:
                first_chunk.append(key)
                raise OSError(errno.ENOSPC, "No space left on device")
            await asyncio.sleep(0.2)
        return await real_set(self, key, value)

    monkeypatch.setattr(LocalStore, "set", set_slowly_or_fail)
    store = tmp_path / "failed.zarr"
    with xr.open_dataset(both[0]) as ds, pytest.raises(OSError, match="No space"):
        write_zarr(ds.load(), store, per_chunk=1)
    on_return = sorted(path.relative_to(store) for path in store.rglob("*"))
    time.sleep(1.0)
    assert sorted(path.relative_to(store) for path in store.rglob("*")) == on_return
