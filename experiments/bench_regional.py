"""Training throughput of the regional recipe through hydroseq's training loop, against a bare torch loop.

Run from the project root (on a GPU: ``--device cuda [--lstm-path packed|padded]``)::

    .venv/bin/python -m experiments.bench_regional --data runs/regional/caravan_regional.nc \
        [--config configs/train_caravan_regional.yaml] [--batches 40] [--repeats 3] [--threads 1]

* **hydroseq**: the data, loader and model as ``hydroseq train`` builds them (padded LSTM path on the
  CPU), Adam, then :func:`hydroseq.training.loop.train_one_epoch` cut to ``--batches`` batches of epoch 0
  (loader, target hiding, forward, NSE* loss, backward, clipping, Adam). Its figure is the loop's
  own ``valid_timesteps_per_s``: unpadded steps only.
* **bare torch**: ``nn.LSTM`` + ``nn.Linear`` of the recipe's sizes, Adam at its learning rate, one
  ``[batch_size, seq_len, n_features]`` batch made beforehand, MSE over every step, the recipe's
  gradient clipping, the same number of batches. Every step counts: batch_size x seq_len per batch.

After one untimed warm-up batch each, the two alternate ``--repeats`` times in this process (A B,
then B A). Printed: the min and median pass of each, hydroseq / bare throughput (median; target:
bare / hydroseq <= 1.3), the time to the first batch (data load, loader and its first batch, after
the imports), the process's peak RSS, an epoch-time estimate (``len(loader)`` x median seconds per
batch), then one JSON line with every figure.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
from collections.abc import Callable
from pathlib import Path

import torch
from rich.console import Console
from rich.table import Table
from torch import nn

from benchmarks.first_batch import FirstBatch, load_to_first_batch
from benchmarks.timing import repeat_seconds
from hydroseq.config import TrainConfig, load_config
from hydroseq.model import get_model
from hydroseq.training.loop import train_one_epoch
from hydroseq.training.runtime import resolve_lstm_path

TARGET_SLOWDOWN = 1.3  # bare / hydroseq throughput, at most


def hydroseq_pass(config: TrainConfig, first: FirstBatch, device: torch.device) -> Callable[[int], dict[str, float]]:
    """A function that trains ``n`` batches of epoch 0 with hydroseq's loop and returns the loop's metrics."""
    torch.manual_seed(config.training.seed)
    model = get_model(config.model, len(first.data.feature_names), first.data.n_outputs, config.data.mode,
                      lstm_path=resolve_lstm_path(config.training, device), data=config.data).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.training.learning_rate)

    def run(n: int) -> dict[str, float]:
        shortened = config.model_copy(deep=True)
        shortened.training.max_batches_per_epoch = n
        first.loader.sampler.set_epoch(0)
        return train_one_epoch(model, optimizer, first.loader, first.data, shortened, device, 0, show_progress=False)
    return run


def bare_pass(config: TrainConfig, shape: tuple[int, int, int], n_leads: int,
              device: torch.device) -> Callable[[int], None]:
    """A function that trains ``n`` steps of a bare LSTM on one fixed batch of ``shape`` [batch, steps, features]."""
    torch.manual_seed(config.training.seed)
    lstm = nn.LSTM(shape[2], config.model.hidden_size, batch_first=True).to(device)
    head = nn.Linear(config.model.hidden_size, n_leads).to(device)
    parameters = [*lstm.parameters(), *head.parameters()]
    optimizer = torch.optim.Adam(parameters, lr=config.training.learning_rate)
    x, y = torch.randn(*shape, device=device), torch.randn(*shape[:2], n_leads, device=device)

    def run(n: int) -> None:
        for _ in range(n):
            loss = nn.functional.mse_loss(head(lstm(x)[0]), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if config.training.grad_clip:
                nn.utils.clip_grad_norm_(parameters, config.training.grad_clip)
            optimizer.step()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    return run


def measure(config: TrainConfig, data_path: Path, batches: int, repeats: int, device: torch.device) -> dict:
    """Load, warm up, then time the two loops alternately; every figure in one dict."""
    first = load_to_first_batch(config, data_path)
    shape = (config.batching.batch_size, config.data.seq_len, len(first.data.feature_names))
    hydroseq = hydroseq_pass(config, first, device)
    bare = bare_pass(config, shape, first.data.n_outputs, device)
    batches = min(batches, len(first.loader))
    hydroseq(1), bare(1)  # warm-up: first-call allocations, thread pool
    hydroseq_runs: list[dict[str, float]] = []
    bare_s: list[float] = []

    timed = [lambda: hydroseq_runs.append(hydroseq(batches)),
             lambda: bare_s.extend(repeat_seconds(lambda: bare(batches), 1, warmup=lambda: None))]
    for repeat in range(repeats):  # A B, then B A: neither loop always runs on the warmer machine
        for run in timed if repeat % 2 == 0 else timed[::-1]:
            run()
    hydroseq_rates = [run["valid_timesteps_per_s"] for run in hydroseq_runs]
    bare_rates = [shape[0] * shape[1] * batches / seconds for seconds in bare_s]
    hydroseq_s = [run["epoch_seconds"] for run in hydroseq_runs]
    figures = {"data": str(data_path), "device": str(device), "lstm_path": resolve_lstm_path(config.training, device),
               "threads": torch.get_num_threads(), "batches": batches, "repeats": repeats,
               "batch_size": shape[0], "seq_len": shape[1], "n_features": shape[2], "n_leads": first.data.n_outputs,
               "hidden_size": config.model.hidden_size, "hydroseq_padding": hydroseq_runs[0]["padding_ratio"],
               "hydroseq_s": hydroseq_s, "bare_s": bare_s,
               "hydroseq_steps_per_s_best": max(hydroseq_rates),
               "hydroseq_steps_per_s_median": statistics.median(hydroseq_rates),
               "bare_steps_per_s_best": max(bare_rates), "bare_steps_per_s_median": statistics.median(bare_rates),
               "load_s": first.load_s, "first_batch_s": first.first_batch_s,
               "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
               "batches_per_epoch": len(first.loader),
               "epoch_s_estimate": len(first.loader) * statistics.median(hydroseq_s) / batches}
    ratio = statistics.median(hydroseq_rates) / statistics.median(bare_rates)
    return {**figures, "ratio_hydroseq_to_bare": ratio, "target_met": 1 / ratio <= TARGET_SLOWDOWN}


def report(figures: dict, console: Console) -> None:
    """The table and the summary lines."""
    table = Table(title=f"regional recipe: {figures['batches']} batches of {figures['batch_size']} x "
                        f"{figures['seq_len']} x {figures['n_features']}, hidden {figures['hidden_size']}, "
                        f"{figures['repeats']} repeats, {figures['threads']} thread(s)",
                  caption="steps/s: hydroseq valid (unpadded) steps, bare torch every step")
    for column in ("loop", "s/batch min", "s/batch median", "steps/s best", "steps/s median", "x bare"):
        table.add_column(column, justify="right")
    for loop in ("hydroseq", "bare"):
        seconds = [s / figures["batches"] for s in figures[f"{loop}_s"]]
        median_rate = figures[f"{loop}_steps_per_s_median"]
        table.add_row(loop, f"{min(seconds):.3f}", f"{statistics.median(seconds):.3f}",
                      f"{figures[f'{loop}_steps_per_s_best']:,.0f}", f"{median_rate:,.0f}",
                      f"{median_rate / figures['bare_steps_per_s_median']:.2f}")
    console.print(table)
    verdict = "met" if figures["target_met"] else "NOT met"
    console.print(f"bare / hydroseq {1 / figures['ratio_hydroseq_to_bare']:.2f} (target <= {TARGET_SLOWDOWN}: "
                  f"{verdict}), hydroseq padding {figures['hydroseq_padding']:.1%}")
    console.print(f"first batch {figures['first_batch_s']:.1f} s (data load {figures['load_s']:.1f} s), "
                  f"peak RSS {figures['peak_rss_mb']:,.0f} MB, epoch estimate {figures['epoch_s_estimate']:,.0f} s "
                  f"({figures['batches_per_epoch']} batches)")


def main(argv: list[str] | None = None) -> int:
    """Measure both loops, print the table and the JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, type=Path, help="the ingested regional dataset")
    parser.add_argument("--config", type=Path, default=Path("configs/train_caravan_regional.yaml"))
    parser.add_argument("--batches", type=int, default=40, help="training batches per timed pass")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--lstm-path", choices=("auto", "packed", "padded"), default="auto",
                        help="hydroseq's LSTM path (auto: packed on CUDA, padded on the CPU)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    config = load_config(args.config, TrainConfig)
    config.training.lstm_path = args.lstm_path
    figures = measure(config, args.data, args.batches, args.repeats, torch.device(args.device))
    report(figures, Console())
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
