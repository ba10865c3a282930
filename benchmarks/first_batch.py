"""Time to the first training batch, in a process of its own (``benchmarks.bench_scale`` starts it).

Run as ``python -m benchmarks.first_batch --config TRAIN.yaml --data INGESTED.nc``; prints one JSON
object: ``load_s`` (:func:`hydroseq.training.data.load_training_data`: read the dataset, fit the
scalers, build the sample index), ``first_batch_s`` (load plus :func:`hydroseq.batching.make_loader`
and its first batch, built as the training loop builds it), both from after the imports, and the
shape of what the model reads: stations, grid steps, per-step features.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path

from hydroseq.batching import Batch, BatchLoader, make_loader
from hydroseq.config import TrainConfig, load_config
from hydroseq.training.data import TrainingData, load_training_data


@dataclass
class FirstBatch:
    """The training data, the loader the training loop would build, its first batch, and the clock."""

    data: TrainingData
    loader: BatchLoader
    batch: Batch
    load_s: float
    first_batch_s: float


def load_to_first_batch(config: TrainConfig, data_path: Path | None) -> FirstBatch:
    """Load the training data and draw the first batch of epoch 0, timing both from the call."""
    start = time.perf_counter()
    data = load_training_data(config, data_path)
    loaded = time.perf_counter() - start
    loader = make_loader(data.train_set, config.batching, shuffle=True, seed=config.training.seed)
    loader.sampler.set_epoch(0)
    batch = next(iter(loader))
    return FirstBatch(data, loader, batch, loaded, time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    """Load the training data, draw the first batch, print the figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, type=Path)
    parser.add_argument("--data", required=True, type=Path)
    args = parser.parse_args(argv)
    first = load_to_first_batch(load_config(args.config, TrainConfig), args.data)
    data = first.data
    print(json.dumps({"load_s": first.load_s, "first_batch_s": first.first_batch_s, "batch_samples": len(first.batch),
                      "stations": len(data.station_data.station_ids), "steps": len(data.station_data.times),
                      "features": len(data.feature_names), "feature_names": data.feature_names}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
