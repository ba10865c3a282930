"""Split predictions: every target step of the index is predicted, and stride 1 is exact."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

from hydroseq.dataset import Scalers, SequenceDataset, build_sample_index, load_station_data
from hydroseq.errors import InputDataError
from hydroseq.model import get_model
from hydroseq.training.predict import anchor_windows, predict_split


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory, small_nc: Path, make_config):
    config = make_config(tmp_path_factory.mktemp("predict"), small_nc)
    station_data = load_station_data(small_nc, config.data)
    scalers = Scalers.fit(station_data, config.data)
    torch.manual_seed(0)
    model = get_model(config.model, 5, 1, "per_step").eval()
    return config, station_data, scalers, model


def test_anchor_windows_cover_every_sample_within_stride() -> None:
    from hydroseq.dataset import SampleIndex

    end = np.array([5, 6, 7, 8, 9, 10, 20, 21, 3, 4])
    station = np.array([0, 0, 0, 0, 0, 0, 0, 0, 1, 1])
    index = SampleIndex(station=station, end=end, length=np.minimum(end, 6), mode="sequence", leads=(0,),
                        split="test", key="k")
    anchors = anchor_windows(index, 4)
    assert list(zip(anchors.station.tolist(), anchors.end.tolist(), strict=True)) == [(0, 6), (0, 10), (0, 21), (1, 4)]


def test_stride_one_equals_each_target_from_its_own_window(setup) -> None:
    config, station_data, scalers, model = setup
    exact = predict_split(model, station_data, scalers, config.data, "validation", torch.device("cpu"), stride=1)
    index = build_sample_index(station_data, config.data, "validation", mode="sequence", cache_dir=None)
    dataset = SequenceDataset(station_data, scalers, index, config.data)
    pick = np.arange(0, len(index), 97)
    batch = dataset.gather(pick)
    with torch.no_grad():
        out = model(batch.x, batch.lengths)[torch.arange(len(pick)), batch.lengths - 1, 0].numpy()
    first = int(np.flatnonzero(exact.in_split)[0])
    got = exact.sim_scaled[0][batch.station.numpy(), batch.end.numpy() - first]
    np.testing.assert_allclose(got, out, rtol=1e-5, atol=1e-6)


def test_default_stride_covers_the_same_steps_and_is_causal(setup) -> None:
    config, station_data, scalers, model = setup
    device = torch.device("cpu")
    fast = predict_split(model, station_data, scalers, config.data, "validation", device)
    exact = predict_split(model, station_data, scalers, config.data, "validation", device, stride=1)
    np.testing.assert_array_equal(np.isnan(fast.sim), np.isnan(exact.sim))
    assert np.isfinite(fast.sim).mean() > 0.9
    # the last step of the split is an anchor: read from a full window, exactly as with stride 1
    np.testing.assert_allclose(fast.sim_scaled[..., -1], exact.sim_scaled[..., -1], rtol=1e-5)
    # perturbing inputs and target from step `cut` on never changes a prediction before it
    cut = int(np.flatnonzero(fast.in_split)[0]) + 400
    dynamic, target = station_data.dynamic.copy(), station_data.target.copy()
    dynamic[:, cut:] *= 5.0
    target[:, cut:] += 3.0
    changed = dataclasses.replace(station_data, dynamic=dynamic, target=target)
    moved = predict_split(model, changed, scalers, config.data, "validation", device)
    np.testing.assert_array_equal(moved.sim_scaled[..., :400], fast.sim_scaled[..., :400])
    assert not np.allclose(moved.sim_scaled[..., 400:], fast.sim_scaled[..., 400:])


def test_a_split_without_samples_is_the_dataset_stages_one_error(setup) -> None:
    """Scoring a period the data do not reach raises :func:`hydroseq.dataset.require_samples`'s error, naming the
    split and its period (the same words training uses for an empty train or validation split)."""
    config, station_data, scalers, model = setup
    splits = {**config.data.splits.model_dump(), "test": {"start": "2020-01-01", "end": "2020-12-31"}}
    data_config = config.data.model_copy(update={"splits": type(config.data.splits).model_validate(splits)})
    with pytest.raises(InputDataError, match=r"\(test 2020-01-01..2020-12-31\): the test period holds no sample: no "
                                             r"window of at least min_len"):
        predict_split(model, station_data, scalers, data_config, "test", torch.device("cpu"))
