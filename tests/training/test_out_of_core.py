"""Out-of-core training (``data.storage: disk``): the same first epoch, loss for loss, as in memory."""

from __future__ import annotations

from pathlib import Path

import torch

from hydroseq.batching import make_loader
from hydroseq.model import get_model
from hydroseq.training.data import load_training_data
from hydroseq.training.loop import train_one_epoch, validate


def _first_epoch(config) -> tuple[dict[str, float], dict[str, float], str]:
    data = load_training_data(config)
    torch.manual_seed(config.training.seed)
    model = get_model(config.model, len(data.feature_names), data.n_outputs, config.data.mode, data=config.data)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.training.learning_rate)
    loader = make_loader(data.train_set, config.batching, shuffle=True, seed=config.training.seed)
    loader.sampler.set_epoch(0)
    device = torch.device("cpu")
    metrics = train_one_epoch(model, optimizer, loader, data, config, device, 0, show_progress=False)
    return metrics, validate(model, data, config, device), data.train_set.inputs.storage


def test_disk_storage_trains_the_same_first_epoch(make_config, small_nc: Path, tmp_path: Path) -> None:
    """Per-step mode (sequence-mode batches are compared in tests/dataset/test_scaled_inputs.py)."""
    in_memory = make_config(tmp_path / "memory", small_nc)
    on_disk = in_memory.model_copy(update={"data": in_memory.data.model_copy(update={"storage": "disk"})})
    memory_metrics, memory_validation, memory_storage = _first_epoch(in_memory)
    disk_metrics, disk_validation, disk_storage = _first_epoch(on_disk)
    assert (memory_storage, disk_storage) == ("memory", "disk")
    assert disk_metrics["train_loss"] == memory_metrics["train_loss"]
    assert disk_validation.pop("val_seconds") > 0 and memory_validation.pop("val_seconds") > 0
    assert disk_validation == memory_validation
