"""Training throughput and time to accuracy: the per-step forecast mode against sequence mode, one run.

Run from the project root::

    .venv/bin/python -m experiments.bench_forecast_training [--repeats 3] [--batches 8] [--cap-s 240]
    .venv/bin/python -m experiments.bench_forecast_training --quick     # a smoke run, seconds

The 31 bundled Caravan basins are ingested with the project's ingest config. The two modes are the
bundled recipes, trained on the same leads and hidden size:

* **per-step**: ``configs/train_caravan_forecast.yaml`` (leads 1-3 at every step of a 365-day
  chunk, observed discharge with its flag, target hiding);
* **sequence**: ``configs/train_caravan_protocol_sequence.yaml`` with ``leads: [1, 2, 3]`` (one
  prediction per 90-day sequence, at its last step).

Both get ``--hidden`` units (default: the per-step recipe's 64). Measured in the same process,
the modes alternating (A B, then B A, ...):

* **throughput**: ``--repeats`` timed passes of ``--batches`` training batches each (loader, target
  hiding, forward, loss, backward, clipping, Adam; :func:`hydroseq.training.loop.train_one_epoch`)
  after one untimed warm-up pass, on a throwaway model. The figure is *targets with a loss per
  second*: valid ``(step, lead)`` pairs for per-step, valid ``(sequence, lead)`` pairs for
  sequence; the median over repeats, and the per-step / sequence ratio.
* **time to accuracy**: fresh models trained epoch by epoch with their recipe's schedule and
  batches per epoch, alternating epochs, each validated after every epoch; the training seconds
  (validation excluded) until the validation median NSE at lead 1 first reaches ``--target-nse``,
  or "not reached" once a mode has trained ``--cap-s`` seconds or finished its epochs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import torch
from rich.console import Console
from rich.table import Table

from benchmarks.timing import default_threads
from experiments.compare import ingest_dataset
from hydroseq.batching import make_loader
from hydroseq.config import TrainConfig, load_config, validate_config
from hydroseq.model import get_model
from hydroseq.training.data import TrainingData, load_training_data
from hydroseq.training.loop import train_one_epoch, validate
from hydroseq.training.runtime import lr_factor, resolve_device, resolve_lstm_path

REPO_ROOT = Path(__file__).resolve().parents[1]
RECIPES = {"per-step": "train_caravan_forecast.yaml", "sequence": "train_caravan_protocol_sequence.yaml"}
LEADS = [1, 2, 3]
QUICK_STATIONS = ["01022500", "01547700", "02064000"]
QUICK_SPLITS = {"train": {"start": "2000-10-01", "end": "2001-09-30"},  # one water year each
                "validation": {"start": "2001-10-01", "end": "2002-09-30"},
                "test": {"start": "2002-10-01", "end": "2003-09-30"}}


def recipe(mode: str, data: Path, work: Path, hidden: int, quick: bool) -> TrainConfig:
    """The bundled recipe of ``mode`` on ``data``, with leads 1-3 and ``hidden`` units."""
    dump = load_config(REPO_ROOT / "configs" / RECIPES[mode], TrainConfig).model_dump(mode="json")
    dump["data"].update(path=str(data), leads=LEADS, cache_dir=str(work / "cache"))
    dump["model"]["hidden_size"] = hidden
    dump["training"].update(output_dir=str(work / mode))
    if quick:
        dump["data"].update(stations=QUICK_STATIONS, splits=QUICK_SPLITS)
        dump["training"].update(epochs=2, max_batches_per_epoch=2)
    return validate_config(dump, TrainConfig)


@dataclass
class Trainee:
    """One mode's data, loader, model and optimiser, and what it has measured."""

    mode: str
    config: TrainConfig
    data: TrainingData
    device: torch.device
    model: torch.nn.Module = field(init=False)
    optimizer: torch.optim.Optimizer = field(init=False)
    scheduler: torch.optim.lr_scheduler.LambdaLR = field(init=False)
    loader: torch.utils.data.DataLoader = field(init=False)
    epoch: int = 0

    def __post_init__(self) -> None:
        self.fresh()

    def fresh(self) -> None:
        """A new model and optimiser from the recipe's seed."""
        cfg = self.config.training
        torch.manual_seed(cfg.seed)
        self.model = get_model(self.config.model, len(self.data.feature_names), self.data.n_outputs,
                               self.config.data.mode, lstm_path=resolve_lstm_path(cfg, self.device),
                               data=self.config.data).to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=cfg.learning_rate)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lr_factor(cfg))
        self.loader = make_loader(self.data.train_set, self.config.batching, shuffle=True, seed=cfg.seed)
        self.epoch = 0

    def targets(self, epoch: int, batches: int | None) -> int:
        """Targets with a loss in the first ``batches`` batches of ``epoch`` (counted outside any timing)."""
        self.loader.sampler.set_epoch(epoch)
        total = 0
        for step, batch in enumerate(self.loader):
            if batches is not None and step >= batches:
                break
            total += int(batch.mask.sum())
        return total

    def run_epoch(self, batches: int | None) -> float:
        """Train one (possibly shortened) epoch; returns its training seconds."""
        config = self.config
        if batches is not None:
            config = config.model_copy(deep=True)
            config.training.max_batches_per_epoch = batches
        self.loader.sampler.set_epoch(self.epoch)
        metrics = train_one_epoch(self.model, self.optimizer, self.loader, self.data, config, self.device, self.epoch)
        self.scheduler.step()
        self.epoch += 1
        return metrics["epoch_seconds"]


def alternating(trainees: list[Trainee], round_number: int) -> list[Trainee]:
    """A B in even rounds, B A in odd ones, so that neither mode always runs on a warmer machine."""
    return trainees if round_number % 2 == 0 else trainees[::-1]


def throughput(trainees: list[Trainee], batches: int, repeats: int) -> dict[str, dict[str, float]]:
    """Median targets with a loss per second of each mode over ``repeats`` alternating passes."""
    for trainee in trainees:  # warm-up: one untimed pass each
        trainee.fresh()
        trainee.run_epoch(batches)
    rates: dict[str, list[float]] = {t.mode: [] for t in trainees}
    counts: dict[str, int] = {}
    for repeat in range(repeats):
        for trainee in alternating(trainees, repeat):
            epoch = trainee.epoch
            seconds = trainee.run_epoch(batches)
            counts[trainee.mode] = trainee.targets(epoch, batches)
            rates[trainee.mode].append(counts[trainee.mode] / seconds)
    return {mode: {"targets_per_s": statistics.median(values), "targets_per_pass": counts[mode],
                   "runs": values} for mode, values in rates.items()}


def time_to_accuracy(trainees: list[Trainee], target_nse: float, cap_s: float) -> dict[str, dict]:
    """Training seconds until each mode's validation median NSE at lead 1 reaches ``target_nse``."""
    state = {t.mode: {"seconds": 0.0, "reached_s": None, "epochs": 0, "val_median_nse": []} for t in trainees}
    for trainee in trainees:
        trainee.fresh()
    active = list(trainees)
    round_number = 0
    while active:
        for trainee in alternating(active, round_number):
            record = state[trainee.mode]
            record["seconds"] += trainee.run_epoch(None)
            record["epochs"] += 1
            score = validate(trainee.model, trainee.data, trainee.config, trainee.device)["val_median_nse"]
            record["val_median_nse"].append(round(score, 4))
            if score >= target_nse and record["reached_s"] is None:
                record["reached_s"] = record["seconds"]
        active = [t for t in active if state[t.mode]["reached_s"] is None and state[t.mode]["seconds"] < cap_s
                  and trainee_left(t)]
        round_number += 1
    return state


def trainee_left(trainee: Trainee) -> bool:
    """Whether the recipe has epochs left."""
    return trainee.epoch < trainee.config.training.epochs


def report(figures: dict, console: Console) -> None:
    """Print the two tables."""
    speed = Table(title=f"training throughput, {figures['batches']} batches per pass, median of "
                        f"{figures['repeats']} (torch threads {figures['threads']})")
    for column in ("mode", "targets with a loss / s", "targets per pass", "x sequence"):
        speed.add_column(column, justify="right")
    base = figures["throughput"]["sequence"]["targets_per_s"]
    for mode, values in figures["throughput"].items():
        speed.add_row(mode, f"{values['targets_per_s']:,.0f}", f"{values['targets_per_pass']:,}",
                      f"{values['targets_per_s'] / base:.2f}")
    console.print(speed)
    accuracy = Table(title=f"training seconds to a validation median NSE of {figures['target_nse']} at lead 1 "
                           f"(cap {figures['cap_s']:g} s)")
    for column in ("mode", "seconds", "epochs", "validation median NSE by epoch"):
        accuracy.add_column(column, justify="right")
    for mode, record in figures["time_to_accuracy"].items():
        reached = "not reached" if record["reached_s"] is None else f"{record['reached_s']:.0f}"
        accuracy.add_row(mode, reached, str(record["epochs"]), ", ".join(f"{v:.2f}" for v in record["val_median_nse"]))
    console.print(accuracy)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the figures and optionally save them as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batches", type=int, default=8, help="training batches per timed pass")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--target-nse", type=float, default=0.55)
    parser.add_argument("--cap-s", type=float, default=240.0, help="training seconds per mode at most")
    parser.add_argument("--quick", action="store_true", help="3 basins, 1 year, 2 batches: a smoke run")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats, args.batches, args.cap_s = 1, 2, 5.0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data, _ = ingest_dataset(work)
        configs = [recipe(mode, data, work, args.hidden, args.quick) for mode in RECIPES]
        threads = configs[0].training.threads or default_threads()
        torch.set_num_threads(threads)  # as train() sets them
        device = resolve_device(configs[0].training.device)
        trainees = [Trainee(mode, config, load_training_data(config), device)
                    for mode, config in zip(RECIPES, configs, strict=True)]
        figures = {"batches": args.batches, "repeats": args.repeats, "threads": threads, "hidden": args.hidden,
                   "target_nse": args.target_nse, "cap_s": args.cap_s, "quick": args.quick,
                   "throughput": throughput(trainees, args.batches, args.repeats),
                   "time_to_accuracy": time_to_accuracy(trainees, args.target_nse, args.cap_s)}
    figures["ratio_per_step_to_sequence"] = (figures["throughput"]["per-step"]["targets_per_s"]
                                             / figures["throughput"]["sequence"]["targets_per_s"])
    report(figures, Console())
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
