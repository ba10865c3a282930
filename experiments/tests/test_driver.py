"""Helpers of the NeuralHydrology driver (importable without NeuralHydrology)."""

from __future__ import annotations

import math

from experiments.nh.driver import EarlyStop, MedianNSEStopper, Recorder, best_epoch, median_nse


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

    def __init__(self, validator: _FakeValidator, epochs: int) -> None:
        self.validator, self.epochs, self.trained = validator, epochs, []

    def _get_dataset(self) -> list[int]:
        return [0]

    def _train_epoch(self, epoch: int) -> None:
        self.trained.append(epoch)

    def train_and_validate(self) -> None:
        for epoch in range(1, self.epochs + 1):
            self._train_epoch(epoch=epoch)
            self.validator.evaluate(epoch=epoch)


class _FakeValidator:
    def __init__(self, medians: list[float]) -> None:
        self.medians = medians

    def evaluate(self, epoch: int) -> dict:
        return {"basin": {"1D": {"NSE": self.medians[epoch - 1]}}}


def _train(medians: list[float], patience: int | None,
           max_seconds: float | None = None) -> tuple[_FakeTrainer, Recorder]:
    recorder = Recorder(MedianNSEStopper(patience), max_seconds)
    trainer = _FakeTrainer(_FakeValidator(medians), epochs=len(medians))
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
