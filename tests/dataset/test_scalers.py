"""Scalers: fitted on the training period of the training stations only; JSON round trip."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from hydroseq.dataset import Scalers, load_station_data
from hydroseq.errors import ConfigError, InputDataError


def _perturbed(data, split_period, factor: float):
    """Copy of ``data`` with inputs and target of ``split_period`` scaled and shifted."""
    inside = data.grid.period_mask(data.times, split_period)
    dynamic, target = data.dynamic.copy(), data.target.copy()
    dynamic[:, inside] = dynamic[:, inside] * factor + 100.0
    target[:, inside] = target[:, inside] * factor + 100.0
    return dataclasses.replace(data, dynamic=dynamic, target=target)


@pytest.mark.parametrize("per_station", [False, True])
def test_changing_evaluation_periods_leaves_the_scalers_unchanged(small_nc: Path, data_config,
                                                                  per_station: bool) -> None:
    config = data_config(per_station_target_scaling=per_station)
    data = load_station_data(small_nc, config)
    reference = Scalers.fit(data, config).to_dict()
    for split in ("validation", "test"):
        changed = _perturbed(data, getattr(config.splits, split), factor=7.0)
        assert Scalers.fit(changed, config).to_dict() == reference
    changed_train = _perturbed(data, config.splits.train, factor=7.0)
    assert Scalers.fit(changed_train, config).to_dict() != reference


def test_moments_equal_numpy_on_the_training_days(small_nc: Path, data_config) -> None:
    config = data_config()
    data = load_station_data(small_nc, config)
    scalers = Scalers.fit(data, config)
    train = data.grid.period_mask(data.times, config.splits.train)
    assert train.sum() == 5478  # 1981-01-01 .. 1995-12-31
    precipitation = data.dynamic[:, train, 0].astype(np.float64)
    assert scalers.dynamic_mean[0] == pytest.approx(precipitation.mean())
    assert scalers.dynamic_std[0] == pytest.approx(precipitation.std())
    assert scalers.target_mean == pytest.approx(np.nanmean(data.target[:, train].astype(np.float64)))


def test_json_round_trip_and_inverse(tmp_path: Path, small_nc: Path, data_config) -> None:
    config = data_config(per_station_target_scaling=True)
    data = load_station_data(small_nc, config)
    scalers = Scalers.fit(data, config)
    scalers.to_json(tmp_path / "scalers.json")
    loaded = Scalers.from_json(tmp_path / "scalers.json")
    assert loaded.to_dict() == scalers.to_dict()
    scaled = loaded.transform_target(data.target, list(data.station_ids))
    np.testing.assert_allclose(loaded.inverse_target(scaled, list(data.station_ids)), data.target, rtol=1e-5,
                               atol=1e-5)
    first = scaled[0][np.isfinite(scaled[0])]
    assert abs(first.mean()) < 0.2  # per-station: each station is roughly centred
    np.testing.assert_allclose(loaded.transform_inputs(data.dynamic), scalers.transform_inputs(data.dynamic))


def test_per_station_scaling_requires_station_ids(small_nc: Path, data_config) -> None:
    config = data_config(per_station_target_scaling=True)
    scalers = Scalers.fit(load_station_data(small_nc, config), config)
    with pytest.raises(ValueError, match="station id"):
        scalers.transform_target(np.zeros((4, 3)))


def test_constant_feature_gets_unit_std(synthetic) -> None:
    make_data, make_config = synthetic
    dynamic = np.ones((2, 100, 1), np.float32)
    target = np.arange(200, dtype=np.float32).reshape(2, 100)
    scalers = Scalers.fit(make_data(dynamic, target), make_config(100))
    assert scalers.dynamic_std[0] == 1.0
    assert np.all(scalers.transform_inputs(dynamic) == 0.0)


def test_training_period_without_target_is_an_input_error(synthetic) -> None:
    make_data, make_config = synthetic
    target = np.full((1, 100), np.nan, np.float32)
    target[0, 80:] = 1.0
    with pytest.raises(InputDataError, match="no valid value in the training period"):
        Scalers.fit(make_data(np.ones((1, 100, 1), np.float32), target), make_config(100))


def test_unreadable_scalers_file(tmp_path: Path) -> None:
    path = tmp_path / "scalers.json"
    path.write_text('{"format_version": 1}')
    with pytest.raises(InputDataError, match="not a hydroseq scalers file"):
        Scalers.from_json(path)


@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_an_infinite_input_is_refused_naming_the_variable(synthetic, value) -> None:
    make_data, make_config = synthetic
    dynamic = np.random.default_rng(0).normal(size=(2, 100, 1)).astype(np.float32)
    dynamic[1, 10, 0] = value
    target = np.arange(200, dtype=np.float32).reshape(2, 100)
    with pytest.raises(InputDataError, match="'x0' has infinite values"):
        Scalers.fit(make_data(dynamic, target), make_config(100))


def test_an_infinite_target_is_refused_with_per_station_scaling(synthetic) -> None:
    make_data, make_config = synthetic
    target = np.arange(200, dtype=np.float32).reshape(2, 100)
    target[0, 5] = np.inf
    with pytest.raises(InputDataError, match="'q' has infinite values"):
        Scalers.fit(make_data(np.ones((2, 100, 1), np.float32), target),
                    make_config(100, per_station_target_scaling=True))


def test_statistics_that_overflow_are_refused_naming_the_variable() -> None:
    from hydroseq.dataset.scalers import _mean_std

    values = np.array([[1.0, 1e300], [2.0, -1e300]])
    with pytest.raises(InputDataError, match="'b': the training-period statistics are not finite"):
        _mean_std(values, ["a", "b"], Path("data.nc"))


@pytest.mark.parametrize("moments", [[0.0, float("inf")], [float("nan"), 1.0], [0.0, 0.0]])
def test_a_scalers_file_with_non_finite_moments_is_refused(tmp_path: Path, small_nc: Path, data_config,
                                                         moments) -> None:
    config = data_config()
    scalers = Scalers.fit(load_station_data(small_nc, config), config)
    document = scalers.to_dict()
    first = next(iter(document["dynamic"]))
    document["dynamic"][first] = moments
    path = tmp_path / "scalers.json"
    path.write_text(json.dumps(document))
    with pytest.raises(InputDataError, match=f"dynamic {first}: mean .* must be finite"):
        Scalers.from_json(path)


def test_a_station_without_its_own_scaling_is_refused_by_a_per_station_model(small_nc: Path, data_config) -> None:
    config = data_config(per_station_target_scaling=True)
    data = load_station_data(small_nc, config)
    scalers = Scalers.fit(data, config)
    with pytest.raises(ConfigError, match=r"has no scaling for 99999999 \(it was not trained on them\)"):
        scalers.inverse_target(np.zeros((2, 3)), [data.station_ids[0], "99999999"])
    one_scaling = Scalers.fit(data, data_config(per_station_target_scaling=False))
    np.testing.assert_allclose(one_scaling.inverse_target(np.zeros((1, 3)), ["99999999"]), one_scaling.target_mean)
