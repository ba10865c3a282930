"""Batch assembly speed, loader throughput with 0 and 2 workers, and padding per strategy.

Run from the project root::

    .venv/bin/python -m benchmarks.bench_batching [--data runs/demo/caravan_daily.nc] [--repeats 7]

Everything is measured in one run on the same data: warm-up first, then ``repeats`` timed
repetitions, medians reported, ratios taken between figures of this run only. The ingested file
is produced with ``configs/ingest_caravan_daily.yaml`` when it does not exist yet.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import torch
from rich.console import Console
from rich.table import Table

from benchmarks.files import write_text_atomic
from benchmarks.timing import median_seconds
from hydroseq.batching import make_loader, padding_by_strategy
from hydroseq.config import IngestConfig, TrainConfig, load_config
from hydroseq.dataset import (
    Scalers,
    SequenceDataset,
    StationData,
    build_features,
    build_sample_index,
    load_station_data,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
CONFIGS = {"sequence": "configs/train_caravan_sequence.yaml", "per_step": "configs/train_caravan_per_step.yaml"}


def ensure_data(path: Path) -> Path:
    """The ingested Caravan file, ingested first if missing."""
    if not path.exists():
        from hydroseq.ingest import ingest

        config = load_config(REPO_ROOT / "configs" / "ingest_caravan_daily.yaml", IngestConfig)
        ingest(config, path, show_progress=False)
    return path


def build_dataset(config: TrainConfig, data_path: Path,
                  cache_dir: Path) -> tuple[SequenceDataset, StationData, Scalers]:
    """The train split of ``config`` as a :class:`SequenceDataset`, with the data and scalers it was built from."""
    station_data = load_station_data(data_path, config.data)
    scalers = Scalers.fit(station_data, config.data)
    index = build_sample_index(station_data, config.data, "train", cache_dir=cache_dir)
    return SequenceDataset(station_data, scalers, index, config.data), station_data, scalers


def feature_rows(dataset: SequenceDataset, station_data: StationData, scalers: Scalers) -> np.ndarray:
    """The scaled features ``gather`` copies from, one row per ``station * n_times + step``."""
    features, _ = build_features(station_data, scalers, dataset.layout)
    return np.ascontiguousarray(features.reshape(-1, features.shape[-1]))


def naive_collate(dataset: SequenceDataset, indices: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """The obvious alternative: one tensor per sample, then ``pad_sequence`` (for the ratio)."""
    order = indices[np.argsort(-dataset.lengths[indices], kind="stable")]
    sequences = [dataset.gather([i]).x[0] for i in order]
    return torch.nn.utils.rnn.pad_sequence(sequences, batch_first=True), torch.from_numpy(dataset.lengths[order])


def take_collate(dataset: SequenceDataset, features: np.ndarray, indices: np.ndarray) -> torch.Tensor:
    """The vectorised alternative: one ``np.take`` of every (sample, step) row of ``features`` into a
    preallocated array."""
    order = indices[np.argsort(-dataset.lengths[indices], kind="stable")]
    lengths, index = dataset.lengths[order], dataset.index
    steps = np.arange(int(lengths[0]))
    first = index.station[order] * dataset.n_times + index.end[order] - lengths + 1
    rows = np.minimum(first[:, None] + steps, len(features) - 1)
    x = np.empty((len(order), len(steps), features.shape[1]), np.float32)
    np.take(features, rows, axis=0, out=x)
    x[steps >= lengths[:, None]] = 0.0
    return torch.from_numpy(x)


def collate_figures(dataset: SequenceDataset, features: np.ndarray, batch_size: int, repeats: int) -> dict[str, float]:
    """Microseconds per batch of ``gather`` and of two alternatives, on the same random batches."""
    rng = np.random.default_rng(0)
    batches = [rng.choice(len(dataset), batch_size, replace=False) for _ in range(50)]
    gather_s = median_seconds(lambda: [dataset.gather(b) for b in batches], repeats) / len(batches)
    take_s = median_seconds(lambda: [take_collate(dataset, features, b) for b in batches], repeats) / len(batches)
    naive_s = median_seconds(lambda: [naive_collate(dataset, b) for b in batches[:10]], repeats) / 10
    return {"gather_us": gather_s * 1e6, "take_us": take_s * 1e6, "naive_us": naive_s * 1e6,
            "take_over_gather": take_s / gather_s, "naive_over_gather": naive_s / gather_s}


def loader_figures(dataset: SequenceDataset, config: TrainConfig, workers: int, batches: int,
                   repeats: int) -> dict[str, float]:
    """Samples/s of ``make_loader`` over ``batches`` batches; the first (untimed) pass starts the workers."""
    batching = config.batching.model_copy(update={"num_workers": workers, "pin_memory": False})
    loader = make_loader(dataset, batching, shuffle=True, seed=0)
    epoch = iter(range(10**6))

    def one_pass() -> int:
        loader.sampler.set_epoch(next(epoch))
        samples = 0
        for number, batch in enumerate(loader):
            samples += len(batch)
            if number + 1 == batches:
                break
        return samples

    start = time.perf_counter()
    samples = one_pass()
    first_s = time.perf_counter() - start
    steady_s = median_seconds(one_pass, repeats, warmup=lambda: None)
    return {"workers": workers, "samples": samples, "first_pass_samples_per_s": samples / first_s,
            "samples_per_s": samples / steady_s}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO_ROOT / "runs" / "demo" / "caravan_daily.nc")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--loader-batches", type=int, default=100)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "runs" / "bench" / "bench_batching.json")
    parser.add_argument("--cache-dir", type=Path, default=REPO_ROOT / "runs" / "bench" / "cache",
                        help="the sample-index cache")
    args = parser.parse_args(argv)
    os.chdir(REPO_ROOT)
    data_path = ensure_data(args.data)
    console = Console()
    results: dict[str, object] = {"data": str(args.data), "torch_threads": torch.get_num_threads(),
                                  "cpus": os.cpu_count(), "repeats": args.repeats}
    for mode, config_path in CONFIGS.items():
        config = load_config(config_path, TrainConfig)
        cache_dir = args.cache_dir
        start = time.perf_counter()
        dataset, station_data, scalers = build_dataset(config, data_path, cache_dir)
        build_s = time.perf_counter() - start
        features = feature_rows(dataset, station_data, scalers)
        results[mode] = {
            "samples": len(dataset), "features": dataset.n_features, "batch_size": config.batching.batch_size,
            "build_s": build_s,
            "collate": collate_figures(dataset, features, config.batching.batch_size, args.repeats),
            "loader": [loader_figures(dataset, config, workers, args.loader_batches, args.repeats)
                       for workers in (0, 2)],
            "padding": {name: f.to_dict() for name, f in
                        padding_by_strategy(dataset.lengths, config.batching, seed=config.training.seed).items()},
        }
    write_text_atomic(args.out, json.dumps(results, indent=2))
    print_tables(results, console)
    console.print(f"results: {args.out}")


def print_tables(results: dict, console: Console) -> None:
    """The three summary tables."""
    speed = Table(title="Batch assembly (median us per batch; x = slower than gather) and loader samples/s")
    for column in ["mode", "batch", "features", "gather us", "np.take us", "per-sample us",
                   "0 workers", "2 workers", "2 workers 1st pass"]:
        speed.add_column(column, justify="right")
    padding = Table(title="Padding per strategy, train split, one shuffled epoch")
    for column in ["mode", "strategy", "batches", "padding", "valid steps/batch"]:
        padding.add_column(column, justify="right")
    for mode in CONFIGS:
        figures = results[mode]
        collate, (serial, parallel) = figures["collate"], figures["loader"]
        speed.add_row(mode, str(figures["batch_size"]), str(figures["features"]), f"{collate['gather_us']:,.0f}",
                      f"{collate['take_us']:,.0f} ({collate['take_over_gather']:.1f}x)",
                      f"{collate['naive_us']:,.0f} ({collate['naive_over_gather']:.1f}x)",
                      f"{serial['samples_per_s']:,.0f}", f"{parallel['samples_per_s']:,.0f}",
                      f"{parallel['first_pass_samples_per_s']:,.0f}")
        for name, pad in figures["padding"].items():
            padding.add_row(mode, name, f"{pad['batches']:,}", f"{pad['padding_ratio']:.2%}",
                            f"{pad['valid_steps_per_batch']:,.0f}")
    console.print(speed)
    console.print(padding)


if __name__ == "__main__":
    main()
