"""``hydroseq stats``: sample-length distribution and the padding cost of each batching strategy."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from hydroseq.batching.padding import PaddingFigures, padding_by_strategy
from hydroseq.config import TrainConfig
from hydroseq.dataset import SplitName, build_sample_index, load_station_data
from hydroseq.errors import ConfigError
from hydroseq.fileio import atomic_path, write_text_atomic

SPLITS: tuple[SplitName, ...] = ("train", "validation", "test")
PERCENTILES = (50, 75, 90, 95, 99)


@dataclass
class SplitLengths:
    """Length distribution of one split and how many samples fixed full-length windows would keep."""

    split: str
    count: int
    mean: float
    percentiles: dict[int, float]
    max: int
    fixed_window: int
    fixed_window_count: int

    @property
    def extra_samples(self) -> int:
        """Samples that variable lengths add over fixed windows."""
        return self.count - self.fixed_window_count


@dataclass
class StatsReport:
    """What :func:`run_stats` returns (and ``hydroseq stats`` prints), also written as ``stats.json``."""

    data_path: str
    mode: str
    lengths: list[SplitLengths]
    padding: dict[str, PaddingFigures]
    histogram: Path

    def to_dict(self) -> dict[str, object]:
        """JSON-ready mapping."""
        return {"data": self.data_path, "mode": self.mode, "histogram": str(self.histogram),
                "lengths": [{**vars(item), "extra_samples": item.extra_samples} for item in self.lengths],
                "padding_train": {name: figures.to_dict() for name, figures in self.padding.items()}}


def run_stats(config: TrainConfig, data_path: str | Path | None, out_dir: str | Path) -> StatsReport:
    """The length distribution per split and the padding of the three strategies on the train split.

    Writes ``length_histogram.png`` and ``stats.json`` into ``out_dir``. The sample indices are
    read from (or written to) the cache of ``config.data.cache_dir``. Padding is computed for one
    shuffled epoch (seed ``config.training.seed``, epoch 0) with the config's batch size, tail
    policy, and, for buckets, token budget and bucket width.

    Raises
    ------
    ConfigError
        If neither ``data_path`` nor ``data.path`` in the config names a file.
    """
    path = data_path or config.data.path
    if path is None:
        raise ConfigError("no dataset: pass --data or set data.path in the train config")
    out_dir = Path(out_dir)
    station_data = load_station_data(path, config.data)
    indices = {split: build_sample_index(station_data, config.data, split) for split in SPLITS}
    lengths = [_split_lengths(split, index.length, config.data.seq_len) for split, index in indices.items()]
    padding = padding_by_strategy(indices["train"].length, config.batching, seed=config.training.seed)
    histogram = _plot_histogram(indices, config, out_dir / "length_histogram.png")
    report = StatsReport(data_path=str(path), mode=config.data.mode, lengths=lengths, padding=padding,
                         histogram=histogram)
    write_text_atomic(out_dir / "stats.json", json.dumps(report.to_dict(), indent=2))
    return report


def _split_lengths(split: str, lengths: np.ndarray, fixed_window: int) -> SplitLengths:
    if len(lengths) == 0:
        return SplitLengths(split, 0, 0.0, {p: 0.0 for p in PERCENTILES}, 0, fixed_window, 0)
    values = np.percentile(lengths, PERCENTILES)
    return SplitLengths(split=split, count=len(lengths), mean=float(lengths.mean()),
                        percentiles={p: float(v) for p, v in zip(PERCENTILES, values, strict=True)},
                        max=int(lengths.max()),
                        fixed_window=fixed_window, fixed_window_count=int((lengths >= fixed_window).sum()))


def _plot_histogram(indices: dict, config: TrainConfig, target: Path) -> Path:
    figure = Figure(figsize=(7, 4), layout="constrained")
    axis = figure.subplots()
    bins = np.arange(0, config.data.seq_len + 2, max(1, config.data.seq_len // 60)).tolist()
    for split, index in indices.items():
        axis.hist(index.length, bins=bins, histtype="step", linewidth=1.5, label=f"{split} ({len(index):,})")
    axis.set_yscale("log")
    axis.set_xlabel("input length (steps)")
    axis.set_ylabel("samples (log scale)")
    axis.set_title(f"Sample lengths, {config.data.mode} mode, min_len {config.data.min_len}, "
                   f"seq_len {config.data.seq_len}")
    axis.legend()
    with atomic_path(target) as tmp:
        figure.savefig(tmp, format="png", dpi=120)
    return target
