"""Helpers of the NeuralHydrology driver (importable without NeuralHydrology)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from experiments.nh.driver import EarlyStop, MedianNSEStopper, Recorder, best_epoch, median_nse, resumed_config


def test_best_epoch_is_the_highest_validation_nse_and_the_earliest_on_ties() -> None:
    assert best_epoch({1: 0.2, 2: 0.5, 3: 0.4}) == 2
    assert best_epoch({1: 0.5, 2: 0.5}) == 1
    assert best_epoch({1: math.nan, 2: 0.1}) == 2
    assert best_epoch({1: math.nan, 2: math.nan}) == 2


def test_median_nse_skips_nan_basins() -> None:
    results = {"a": {"1D": {"NSE": 0.1}}, "b": {"1D": {"NSE": math.nan}}, "c": {"1D": {"NSE": 0.5}},
               "d": {"1D": {"NSE": 0.7}}}
    assert median_nse(results) == 0.5
    assert math.isnan(median_nse({"a": {"1D": {"NSE": math.nan}}}))


class _FakeTrainer:
    """NeuralHydrology's epoch loop as ``BaseTrainer.train_and_validate`` runs it: train, then validate."""

    def __init__(self, validator: _FakeValidator, epochs: int, first: int = 1) -> None:
        self.validator, self.epochs, self.first = validator, epochs, first
        self.trained: list[int] = []

    def _get_dataset(self) -> list[int]:
        return [0]

    def _train_epoch(self, epoch: int) -> None:
        self.trained.append(epoch)

    def train_and_validate(self) -> None:
        for epoch in range(self.first, self.first + self.epochs):
            self._train_epoch(epoch=epoch)
            self.validator.evaluate(epoch=epoch)


class _FakeValidator:
    def __init__(self, medians: list[float]) -> None:
        self.medians = medians

    def evaluate(self, epoch: int) -> dict:
        return {"basin": {"1D": {"NSE": self.medians[epoch - 1]}}}


def _train(medians: list[float], patience: int | None, max_seconds: float | None = None,
           previous: dict[str, Any] | None = None) -> tuple[_FakeTrainer, Recorder]:
    recorder = Recorder(MedianNSEStopper(patience), max_seconds)
    first = 1
    if previous is not None:
        recorder.restore(previous)
        first = previous["epochs"][-1]["epoch"] + 1
        medians = [math.nan] * (first - 1) + medians
    trainer = _FakeTrainer(_FakeValidator(medians), epochs=len(medians) - first + 1, first=first)
    recorder.instrument_trainer(trainer)
    recorder.instrument_validator(trainer.validator)
    try:
        trainer.train_and_validate()
    except EarlyStop:
        pass
    return trainer, recorder


def test_the_driver_stops_after_patience_checks_without_a_higher_median_nse() -> None:
    trainer, recorder = _train([0.1, 0.3, 0.2, 0.3, math.nan, 0.5, 0.6], patience=3)
    assert trainer.trained == [1, 2, 3, 4, 5]  # epochs 3, 4 (a tie) and 5 (NaN) do not improve on epoch 2
    assert recorder.values["stopped_early_after"] == 5
    assert best_epoch(recorder.validation_medians) == 2
    assert recorder.values["stopped_by"] == "patience"


def test_without_patience_the_driver_trains_every_epoch() -> None:
    trainer, recorder = _train([0.3, 0.2, 0.1], patience=None)
    assert trainer.trained == [1, 2, 3] and recorder.values["stopped_early_after"] is None


def test_the_stopper_counts_checks_since_the_best() -> None:
    stopper = MedianNSEStopper(2)
    assert [stopper.update(value) for value in (0.2, 0.1, 0.3, 0.3, 0.25)] == [False, False, False, False, True]
    assert stopper.best == 0.3


def test_the_driver_stops_before_a_check_that_would_end_past_the_time_budget() -> None:
    trainer, recorder = _train([0.1, 0.2, 0.3], patience=3, max_seconds=0.0)
    assert trainer.trained == [1] and recorder.values["stopped_by"] == "time budget"
    trainer, recorder = _train([0.1, 0.2, 0.3], patience=3, max_seconds=3600.0)
    assert trainer.trained == [1, 2, 3] and recorder.values["stopped_by"] is None


def _previous(medians: list[float], run_dir: str = "/runs/base") -> dict[str, Any]:
    """What the driver writes to ``timings.json`` for a run stopped by the time budget after these checks."""
    return {"run_dir": run_dir, "import_s": 4.0, "dataset_s": 6.0, "setup_s": 8.0, "train_samples_available": 100,
            "train_and_validate_s": 50.0, "total_s": 70.0, "maxrss_kib": 2048, "stopped_by": "time budget",
            "epochs": [{"epoch": n, "train_s": 9.0, "samples": 256, "validation_s": 1.0}
                       for n in range(1, len(medians) + 1)],
            "validation_median_nse": {str(n): value for n, value in enumerate(medians, start=1)}}


def test_a_resumed_run_counts_its_earlier_checks_towards_the_patience() -> None:
    trainer, recorder = _train([0.45, 0.48, 0.7], patience=2, previous=_previous([0.1, 0.5, 0.4]))
    assert trainer.trained == [4]  # checks 3 and 4 do not improve on check 2, from the earlier part
    assert recorder.values["stopped_by"] == "patience" and recorder.values["stopped_early_after"] == 4
    assert best_epoch(recorder.validation_medians) == 2
    assert [e["epoch"] for e in recorder.values["epochs"]] == [1, 2, 3, 4]
    assert recorder.values["epochs"][0]["run_dir"] == "/runs/base" and recorder.values["resumed_after"] == [3]
    assert recorder.values["earlier_total_s"] == 70.0 and recorder.values["dataset_s"] == 6.0


def test_a_resumed_run_trains_on_while_it_improves_and_records_every_part() -> None:
    trainer, recorder = _train([0.55, 0.6, 0.58, 0.59], patience=2, previous=_previous([0.1, 0.5]))
    assert trainer.trained == [3, 4, 5, 6] and recorder.values["stopped_by"] == "patience"
    assert best_epoch(recorder.validation_medians) == 4
    second = {**_previous([0.1, 0.5]), **recorder.values, "train_and_validate_s": 30.0, "total_s": 40.0,
              "maxrss_kib": 1024, "run_dir": "/runs/base/continue_training_from_epoch002",
              "validation_median_nse": {str(k): v for k, v in recorder.validation_medians.items()}}
    resumed = Recorder(MedianNSEStopper(9))
    resumed.restore(second)
    assert resumed.values["resumed_after"] == [2, 6] and resumed.values["earlier_total_s"] == 110.0
    assert resumed.values["earlier_maxrss_kib"] == 2048


class _FakeConfig:
    """The part of NeuralHydrology's ``Config`` that resuming touches."""

    def __init__(self, path: Path) -> None:
        self.path, self.epochs, self.run_dir, self.is_continue_training = path, 15, None, False

    def update_config(self, values: dict[str, Any]) -> None:
        self.epochs = values["epochs"]


def test_the_resumed_config_continues_the_earlier_run_up_to_the_cap() -> None:
    cfg = resumed_config(_FakeConfig, _previous([0.1, 0.2, 0.3]), max_epochs=40)
    assert cfg.path == Path("/runs/base/config.yml") and cfg.run_dir == Path("/runs/base")
    assert cfg.epochs == 37 and cfg.is_continue_training
    with pytest.raises(SystemExit, match="already has 3 checks, the cap is 3"):
        resumed_config(_FakeConfig, _previous([0.1, 0.2, 0.3]), max_epochs=3)
