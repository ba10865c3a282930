"""``hydroseq stats`` and the padding figures on the real ingested Caravan data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from hydroseq.batching.padding import padding_by_strategy, padding_figures
from hydroseq.batching.stats import run_stats
from hydroseq.cli import main
from hydroseq.cli.stats import print_stats
from hydroseq.config import BatchingConfig, TrainConfig, load_config
from hydroseq.errors import ConfigError

REPO_ROOT = Path(__file__).resolve().parents[2]


def _config(name: str, tmp_path: Path) -> TrainConfig:
    config = load_config(REPO_ROOT / "configs" / f"train_caravan_{name}.yaml", TrainConfig)
    return config.model_copy(update={"data": config.data.model_copy(update={"cache_dir": tmp_path / "cache"})})


@pytest.mark.parametrize("name", ["per_step", "sequence"])
def test_stats_on_real_caravan_data(caravan_nc: Path, tmp_path: Path, name: str) -> None:
    config = _config(name, tmp_path)
    console = Console(record=True, width=140)
    report = run_stats(config, caravan_nc, tmp_path / "stats")
    print_stats(report, config, console)
    text = console.export_text()
    assert "P95" in text and "global_pad" in text and "bucket" in text
    assert (tmp_path / "stats" / "length_histogram.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    saved = json.loads((tmp_path / "stats" / "stats.json").read_text())
    assert saved["padding_train"]["bucket"]["padding_ratio"] == report.padding["bucket"].padding_ratio
    train = report.lengths[0]
    assert train.split == "train" and train.max == 365 and train.percentiles[50] == 365
    assert report.padding["bucket"].padding_ratio <= 0.10  # the acceptance figure
    assert report.padding["bucket"].padding_ratio < report.padding["random"].padding_ratio
    assert report.padding["random"].padding_ratio <= report.padding["global_pad"].padding_ratio
    assert report.padding["bucket"].valid_steps == report.padding["random"].valid_steps
    assert train.extra_samples > 0  # short records at the start contribute samples
    if name == "sequence":
        # 31 basins x (7578 train days - 29 warm-up - 3 leads); 335 more per basin than 365-day windows
        assert train.count == 31 * (7578 - 29 - 3) and train.extra_samples == 31 * 335
    assert list(config.data.cache_dir.glob("sample_index_*.npz"))  # cached for train and later runs


def test_cli_stats_and_missing_data_path(caravan_nc: Path, tmp_path: Path, capsys) -> None:
    config = _config("sequence", tmp_path)
    config_path = tmp_path / "train.yaml"
    from hydroseq.config import dump_config

    config_path.write_text(dump_config(config))
    assert main(["stats", "--config", str(config_path), "--data", str(caravan_nc), "--out",
                 str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "length_histogram.png").exists()
    no_path = config.model_copy(update={"data": config.data.model_copy(update={"path": None})})
    with pytest.raises(ConfigError, match="--data"):
        run_stats(no_path, None, tmp_path / "out")


def test_padding_figures_by_hand() -> None:
    lengths = np.array([10, 8, 3, 3])
    figures = padding_figures(lengths, [np.array([0, 2]), np.array([1, 3])], "random")
    assert (figures.valid_steps, figures.padded_steps) == (24, 36)
    assert figures.padding_ratio == pytest.approx(1 / 3)
    assert padding_figures(lengths, [np.array([0, 1, 2, 3])], "global_pad", pad_to=10).padded_steps == 40


def test_buckets_beat_random_batches_on_mixed_lengths() -> None:
    rng = np.random.default_rng(0)
    lengths = rng.integers(30, 366, 5000)
    figures = padding_by_strategy(lengths, BatchingConfig(batch_size=64))
    assert figures["bucket"].padding_ratio < 0.02 < 0.3 < figures["random"].padding_ratio
    assert figures["global_pad"].padding_ratio >= figures["random"].padding_ratio
