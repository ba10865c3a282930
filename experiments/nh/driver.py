"""Train, validate and test NeuralHydrology with timing hooks; run by the NeuralHydrology venv's python.

``python experiments/nh/driver.py --config RUN.yml --threads N --out DIR [--patience P] [--max-minutes M] [--resume]``

This script runs in NeuralHydrology's own virtual environment, so it imports neither hydroseq nor
the ``experiments`` package. NeuralHydrology's code is used unmodified: the script wraps a few
methods of its trainer to read the clock (dataset construction, each training epoch, each
validation) and to count the training samples, then evaluates the test period at the epoch with
the best validation median NSE (the test period never picks the epoch).

``--patience P`` stops training once P validations in a row have not raised the best validation
median NSE: the criterion hydroseq's ``training.patience`` uses. NeuralHydrology 1.13's own
``early_stopping`` watches the mean validation loss instead, so it is not used here. ``--max-minutes M``
stops it before a check that would end past M minutes of training and validation (judged by the
last check's duration). The run's ``epochs`` stay the cap.

``--resume`` continues the run that ``DIR/timings.json`` describes from its last saved check, with
NeuralHydrology's own ``continue_training`` (its model and optimizer state; NeuralHydrology writes the
new checks into a ``continue_training_from_epochNNN`` folder of that run and draws its batches anew
from the config's seed). The earlier checks count towards the patience and the choice of the test
check as if the run had not stopped; ``--max-minutes`` counts from the resumption. It writes to ``DIR``:

- ``timings.json``: the measurements, the run folder of every check, the versions (a resumed run's
  earlier checks and timings included; ``resumed_after`` lists the checks after which it stopped);
- ``test_predictions.nc``: observed and simulated target per basin and day of the test period.

NeuralHydrology itself writes ``validation/model_epochNNN/validation_metrics.csv`` and
``test/model_epochNNN/test_metrics.csv`` in its run folder; the caller parses those.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import statistics
import time
from importlib import metadata
from pathlib import Path
from typing import Any

STARTED = time.perf_counter()


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, type=Path)
    parser.add_argument("--threads", required=True, type=int)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--patience", type=int, default=None,
                        help="stop after this many validations without a higher median NSE (default: never)")
    parser.add_argument("--max-minutes", type=float, default=None,
                        help="stop before a check that would end past this many minutes of training and validation")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run of DIR/timings.json from its last check (the config's epochs: the cap)")
    return parser.parse_args(argv)


class EarlyStop(Exception):
    """Raised at the start of the epoch after the one that exhausted the patience."""


class MedianNSEStopper:
    """Early stopping on validation median NSE, hydroseq's rule: stop after ``patience`` checks without a new
    best (a NaN check is never one)."""

    def __init__(self, patience: int | None) -> None:
        self.patience = patience
        self.best = -math.inf
        self.checks_without_improvement = 0

    def update(self, value: float) -> bool:
        """Record one validation; whether training should stop now."""
        if math.isfinite(value) and value > self.best:
            self.best, self.checks_without_improvement = value, 0
        else:
            self.checks_without_improvement += 1
        return self.exhausted

    @property
    def exhausted(self) -> bool:
        """Whether the checks so far have used up the patience."""
        return self.patience is not None and self.checks_without_improvement >= self.patience


class Recorder:
    """Collects the clock readings and counts of one run."""

    def __init__(self, stopper: MedianNSEStopper | None = None, max_seconds: float | None = None) -> None:
        self.values: dict[str, Any] = {"epochs": [], "stopped_early_after": None, "stopped_by": None}
        self.samples = 0
        self.validation_medians: dict[int, float] = {}
        self.stopper = stopper or MedianNSEStopper(None)
        self.max_seconds = max_seconds
        self.started: float | None = None
        self.check_started = 0.0
        self.run_dir = ""

    def restore(self, previous: dict[str, Any]) -> None:
        """Take over the checks of an earlier part of this run, replaying them through the stopper."""
        for key in ("import_s", "dataset_s", "setup_s", "train_samples_available"):
            self.values[key] = previous[key]
        self.values["epochs"] = [{"run_dir": previous["run_dir"], **epoch} for epoch in previous["epochs"]]
        self.values["resumed_after"] = [*previous.get("resumed_after", []), previous["epochs"][-1]["epoch"]]
        for total, part in (("earlier_train_and_validate_s", "train_and_validate_s"), ("earlier_total_s", "total_s")):
            self.values[total] = previous.get(total, 0.0) + previous[part]
        self.values["earlier_maxrss_kib"] = max(previous.get("earlier_maxrss_kib", 0), previous["maxrss_kib"])
        for epoch, value in sorted((int(epoch), value) for epoch, value in previous["validation_median_nse"].items()):
            self.validation_medians[epoch] = value
            self.stopper.update(value)

    def instrument_trainer(self, trainer: Any) -> None:
        """Wrap the trainer's dataset construction and epoch loop."""
        build_dataset = trainer._get_dataset
        train_epoch = trainer._train_epoch

        def timed_dataset() -> Any:
            start = time.perf_counter()
            dataset = build_dataset()
            if "dataset_s" not in self.values:
                self.values["dataset_s"] = time.perf_counter() - start
                self.values["train_samples_available"] = len(dataset)
            return dataset

        def timed_epoch(epoch: int) -> None:
            if self.values["stopped_early_after"] is not None:
                raise EarlyStop
            self.samples = 0
            start = self.check_started = time.perf_counter()
            self.started = self.started or start
            train_epoch(epoch=epoch)
            self.values["epochs"].append({"run_dir": self.run_dir, "epoch": epoch,
                                          "train_s": time.perf_counter() - start, "samples": self.samples,
                                          "validation_s": math.nan})

        trainer._get_dataset = timed_dataset
        trainer._train_epoch = timed_epoch

    def instrument_model(self, model: Any) -> None:
        """Count the samples of every training batch (the hook runs once per batch)."""
        hook = model.pre_model_hook

        def counting_hook(data: dict, is_train: bool) -> dict:
            if is_train:
                self.samples += int(data["y"].shape[0])
            return hook(data, is_train=is_train)

        model.pre_model_hook = counting_hook

    def instrument_validator(self, validator: Any) -> None:
        """Time each validation and keep its median NSE (to choose the test epoch)."""
        evaluate = validator.evaluate

        def timed_evaluate(*args: Any, **kwargs: Any) -> dict:
            start = time.perf_counter()
            results = evaluate(*args, **kwargs)
            self.values["epochs"][-1]["validation_s"] = time.perf_counter() - start
            epoch = kwargs["epoch"]
            self.validation_medians[epoch] = median_nse(results)
            if self.stopper.update(self.validation_medians[epoch]):
                self.values.update(stopped_early_after=epoch, stopped_by="patience")
            elif self.out_of_time():
                self.values.update(stopped_early_after=epoch, stopped_by="time budget")
            return results

        validator.evaluate = timed_evaluate

    def out_of_time(self) -> bool:
        """Whether one more check as long as the last one would end past ``max_seconds``."""
        if self.max_seconds is None or self.started is None:
            return False
        now = time.perf_counter()
        return now - self.started + (now - self.check_started) > self.max_seconds


def median_nse(results: dict) -> float:
    """Median over basins of NeuralHydrology's NSE (NaN basins ignored; NaN if none is left)."""
    values = [freq["NSE"] for basin in results.values() for freq in basin.values() if "NSE" in freq]
    finite = [value for value in values if not math.isnan(value)]
    return statistics.median(finite) if finite else math.nan


def best_epoch(medians: dict[int, float]) -> int:
    """The epoch with the highest validation median NSE (the last epoch if none is finite)."""
    finite = {epoch: value for epoch, value in medians.items() if not math.isnan(value)}
    if not finite:
        return max(medians)
    return max(finite, key=lambda epoch: (finite[epoch], -epoch))


def resumed_config(config_class: Any, previous: dict[str, Any], max_epochs: int) -> Any:
    """NeuralHydrology's config to continue the run ``previous`` describes, as its ``continue_run`` builds it,
    allowed the checks left up to ``max_epochs`` in all."""
    run_dir = Path(previous["run_dir"])
    cfg = config_class(run_dir / "config.yml")
    last = previous["epochs"][-1]["epoch"]
    if last >= max_epochs:
        raise SystemExit(f"{run_dir}: the run already has {last} checks, the cap is {max_epochs}; raise the cap")
    cfg.update_config({"epochs": max_epochs - last})
    cfg.run_dir = run_dir
    cfg.is_continue_training = True
    return cfg


def write_test_predictions(results: dict, target_variable: str, path: Path) -> None:
    """Observed and simulated target of every basin on the test days, as NetCDF (basin, date)."""
    import xarray

    per_basin = []
    for basin, by_freq in results.items():
        frame = next(iter(by_freq.values()))["xr"].isel(time_step=-1, drop=True)
        pair = frame[[f"{target_variable}_obs", f"{target_variable}_sim"]]
        pair = pair.rename({f"{target_variable}_obs": "obs", f"{target_variable}_sim": "sim"})
        per_basin.append(pair.expand_dims(basin=[basin]))
    xarray.concat(per_basin, dim="basin").astype("float64").to_netcdf(path)


def main(argv: list[str] | None = None) -> int:
    """Run one instrumented NeuralHydrology experiment; see the module docstring."""
    args = _parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    from neuralhydrology.evaluation import get_tester
    from neuralhydrology.training.basetrainer import BaseTrainer
    from neuralhydrology.utils.config import Config

    recorder = Recorder(MedianNSEStopper(args.patience), None if args.max_minutes is None else args.max_minutes * 60)
    cfg = Config(args.config)
    if args.resume:
        previous = json.loads((args.out / "timings.json").read_text())
        cfg = resumed_config(Config, previous, cfg.epochs)
        recorder.restore(previous)
        if recorder.stopper.exhausted:
            raise SystemExit(f"{args.out / 'timings.json'}: the run had already stopped on patience; nothing to resume")
    else:
        recorder.values["import_s"] = time.perf_counter() - STARTED
    trainer = BaseTrainer(cfg=cfg)
    recorder.instrument_trainer(trainer)
    start = time.perf_counter()
    trainer.initialize_training()
    recorder.values.setdefault("setup_s", time.perf_counter() - start)
    recorder.run_dir = str(cfg.run_dir)
    recorder.instrument_model(trainer.model)
    recorder.instrument_validator(trainer.validator)
    start = time.perf_counter()
    try:
        trainer.train_and_validate()
    except EarlyStop:
        pass
    recorder.values["train_and_validate_s"] = time.perf_counter() - start

    epoch = best_epoch(recorder.validation_medians)
    test_run_dir = Path(next(e["run_dir"] for e in recorder.values["epochs"] if e["epoch"] == epoch))
    start = time.perf_counter()
    tester = get_tester(cfg=cfg, run_dir=test_run_dir, period="test", init_model=True)
    results = tester.evaluate(epoch=epoch, save_results=True, metrics=cfg.metrics)
    recorder.values["test_s"] = time.perf_counter() - start
    args.out.mkdir(parents=True, exist_ok=True)
    write_test_predictions(results, cfg.target_variables[0], args.out / "test_predictions.nc")

    recorder.values.update({
        "run_dir": str(cfg.run_dir),
        "test_run_dir": str(test_run_dir),
        "test_epoch": epoch,
        "validation_median_nse": {str(k): v for k, v in recorder.validation_medians.items()},
        "batches_per_epoch": len(trainer.loader),
        "updates_per_epoch": min(len(trainer.loader), cfg.max_updates_per_epoch or len(trainer.loader)),
        "patience": args.patience,
        "max_minutes": args.max_minutes,
        "threads": torch.get_num_threads(),
        "torch_version": torch.__version__,
        "neuralhydrology_version": metadata.version("neuralhydrology"),
        "total_s": time.perf_counter() - STARTED,
        "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    })
    (args.out / "timings.json").write_text(json.dumps(recorder.values, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
