"""NeuralHydrology's run configuration: the fixed template plus the benchmark protocol."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import yaml

from benchmarks.files import write_text_atomic
from experiments.protocol import Protocol

TEMPLATE = Path(__file__).with_name("cudalstm.yml")


def nh_date(day: dt.date) -> str:
    """A date in NeuralHydrology's config format, ``DD/MM/YYYY``."""
    return day.strftime("%d/%m/%Y")


def nh_config(protocol: Protocol, data_dir: Path, basin_file: Path, run_dir: Path) -> dict[str, Any]:
    """The full NeuralHydrology configuration for ``protocol`` as a mapping.

    ``run_dir`` is the parent folder: NeuralHydrology creates a time-stamped run folder inside it.
    """
    config: dict[str, Any] = yaml.safe_load(TEMPLATE.read_text())
    config.update({
        "data_dir": str(data_dir),
        "run_dir": str(run_dir),
        "train_basin_file": str(basin_file),
        "validation_basin_file": str(basin_file),
        "test_basin_file": str(basin_file),
        "dynamic_inputs": list(protocol.dynamic_inputs),
        "static_attributes": list(protocol.static_inputs),
        "target_variables": [protocol.target],
        "seq_length": protocol.seq_length,
        "hidden_size": protocol.hidden_size,
        "batch_size": protocol.batch_size,
        "learning_rate": float(protocol.learning_rate),
        "epochs": protocol.epochs,
        "seed": protocol.seed,
    })
    for period in ("train", "validation", "test"):
        span = getattr(protocol, period)
        config[f"{period}_start_date"] = nh_date(span.start)
        config[f"{period}_end_date"] = nh_date(span.end)
    if protocol.max_updates_per_epoch is not None:
        config["max_updates_per_epoch"] = protocol.max_updates_per_epoch
    if protocol.lagged_target:
        config.update(lagged_inputs(protocol))
    return config


def lagged_inputs(protocol: Protocol, lag: int = 1) -> dict[str, Any]:
    """Inputs that end the day before the target day: every dynamic input and the target, shifted by ``lag``.

    NeuralHydrology predicts Q(t) from the inputs up to t; with the forcing and the observed target
    shifted by one day (``lagged_features``, which adds ``<name>_shift1`` columns) it reads the
    forcing and Q up to t - 1, as hydroseq's lead-1 forecast of Q(t) issued at t - 1 does.
    """
    shifted = [*protocol.dynamic_inputs, protocol.target]
    return {"lagged_features": {name: lag for name in shifted},
            "dynamic_inputs": [f"{name}_shift{lag}" for name in shifted]}


def write_nh_config(config: dict[str, Any], target: Path) -> Path:
    """Write ``config`` as YAML (atomically) and return its path."""
    write_text_atomic(target, yaml.safe_dump(config, sort_keys=False))
    return target
