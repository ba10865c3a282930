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
from pathlib import Path

from hydroseq.batching import make_loader
from hydroseq.config import TrainConfig, load_config
from hydroseq.training.data import load_training_data


def main(argv: list[str] | None = None) -> int:
    """Load the training data, draw the first batch, print the figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, type=Path)
    parser.add_argument("--data", required=True, type=Path)
    args = parser.parse_args(argv)
    config = load_config(args.config, TrainConfig)
    start = time.perf_counter()
    data = load_training_data(config, args.data)
    loaded = time.perf_counter() - start
    loader = make_loader(data.train_set, config.batching, shuffle=True, seed=config.training.seed)
    loader.sampler.set_epoch(0)
    batch = next(iter(loader))
    first_batch = time.perf_counter() - start
    print(json.dumps({"load_s": loaded, "first_batch_s": first_batch, "batch_samples": len(batch),
                      "stations": len(data.station_data.station_ids), "steps": len(data.station_data.times),
                      "features": len(data.feature_names), "feature_names": data.feature_names}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
