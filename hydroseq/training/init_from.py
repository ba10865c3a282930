"""Fine-tuning: start a training run from a trained base model (``hydroseq train --init-from``).

The base is an exported model directory (its weights file ``checkpoint.pt``; ``hydroseq forecast``
checks the directory's checksums), a checkpoint file, or an MLflow run id. The run keeps the base's
inputs, network and scalers, so the network reads a basin exactly as the base did; only the weights
move. The base's training data is never needed: the NSE* weights come from the fine-tuning basins'
own training period.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from hydroseq.config import TrainConfig
from hydroseq.dataset import Scalers
from hydroseq.errors import ConfigError
from hydroseq.training.base_checks import read_base_directory
from hydroseq.training.checkpoint import WEIGHTS_FILE, Checkpoint
from hydroseq.training.tracking import load_run_checkpoint

# the parts of the data config that fix what the network reads and predicts
DATA_LAYOUT = ("dynamic_inputs", "static_inputs", "target", "mode", "leads", "lagged_target", "forecast_inputs",
               "per_station_target_scaling")
# model settings that may differ from the base's: they change training, not the network's shape
MODEL_TRAINING_ONLY = ("dropout", "initial_forget_bias")


@dataclass(frozen=True)
class BaseModel:
    """The model a fine-tuning run starts from, how MLflow links to it, and the units of the variables it reads
    (a model directory's ``input_units``; empty for a checkpoint or a run id)."""

    checkpoint: Checkpoint
    source: str
    input_units: dict[str, str] = field(default_factory=dict)

    @property
    def tags(self) -> dict[str, str]:
        """MLflow tags of the fine-tuned run: what it started from, and that base's own run."""
        return {"init_from": self.source, "base_run_id": self.checkpoint.run_id,
                "base_model": _link(self.source, self.checkpoint.run_id)}


def load_base_model(init_from: str | Path, tracking_uri: str | None = None) -> BaseModel:
    """The base model named by ``init_from``: a model directory, a ``.pt`` checkpoint or a run id.

    Raises
    ------
    InputDataError
        If a checkpoint is unreadable, or a model directory's metadata is not JSON or its weights differ from
        their recorded checksum (:func:`hydroseq.training.base_checks.read_base_directory`).
    ConfigError
        If the path is neither a model directory with weights nor a checkpoint file, or a run id is not in
        the tracking store (:func:`hydroseq.training.tracking.load_run_checkpoint`).
    """
    path = Path(init_from)
    units: dict[str, str] = {}
    if path.is_dir():
        if not (path / WEIGHTS_FILE).is_file():
            raise ConfigError(f"--init-from {path}: the model directory has no {WEIGHTS_FILE} (the weights "
                              "fine-tuning starts from): export it again with this hydroseq")
        units = read_base_directory(path, WEIGHTS_FILE)
        checkpoint = Checkpoint.load(path / WEIGHTS_FILE)
    elif path.is_file():
        checkpoint = Checkpoint.load(path)
    elif "/" in str(init_from) or str(init_from).endswith(".pt"):
        raise ConfigError(f"--init-from {path}: no such model directory or checkpoint file")
    else:
        checkpoint, _ = load_run_checkpoint(str(init_from), tracking_uri)
    if checkpoint.scalers.station_target:
        raise ConfigError(f"--init-from {init_from}: the base model scales discharge per basin, so it cannot read "
                          "basins it was not trained on; fine-tune a model trained with "
                          "data.per_station_target_scaling: false")
    return BaseModel(checkpoint, str(init_from), units)


def check_same_layout(config: TrainConfig, base: BaseModel) -> None:
    """Raise :class:`ConfigError` naming each setting where ``config`` changes the base's inputs or network."""
    theirs = base.checkpoint.config
    differences = _differing("data", config.data, theirs.data, DATA_LAYOUT)
    ours_model, base_model = config.model.model_dump(mode="json"), theirs.model.model_dump(mode="json")
    differences += [f"model.{key}: {ours_model[key]!r} (the base has {base_model[key]!r})"
                    for key in ours_model if key not in MODEL_TRAINING_ONLY and ours_model[key] != base_model[key]]
    if differences:
        raise ConfigError(f"--init-from {base.source}: a fine-tuning config keeps the base model's inputs and "
                          f"network; it changes {'; '.join(differences)}")


# what a correction keeps of its base: the base reads the history exactly as it was trained to
CORRECTED_LAYOUT = ("dynamic_inputs", "static_inputs", "target", "mode", "lagged_target",
                    "per_station_target_scaling", "day_convention")
CORRECTED_NETWORK = ("hidden_size", "num_layers", "embedding_size", "observed_skip", "quantiles")


def check_correctable(config: TrainConfig, base: BaseModel) -> None:
    """Raise :class:`ConfigError` unless ``config`` (``model.base_correction``) can hold ``base`` frozen:
    the same history inputs, network and quantiles, no forecast inputs of the base's own, the members
    and leads the config says."""
    theirs = base.checkpoint.config
    correction = config.model.base_correction
    assert correction is not None
    differences = _differing("data", config.data, theirs.data, CORRECTED_LAYOUT)
    differences += _differing("model", config.model, theirs.model, CORRECTED_NETWORK)
    if theirs.data.forecast_inputs:
        differences.append("the base reads weather-forecast inputs itself")
    if list(correction.base_leads) != list(theirs.data.leads or []):
        differences.append(f"model.base_correction.base_leads: {correction.base_leads} (the base has "
                           f"{theirs.data.leads})")
    members = len(base.checkpoint.member_states) or 1
    if correction.base_members != members:
        differences.append(f"model.base_correction.base_members: {correction.base_members} (the base has {members})")
    if differences:
        raise ConfigError(f"--init-from {base.source}: a correction holds the base as it was trained; "
                          f"it changes {'; '.join(differences)}")


def corrects(config: TrainConfig, base: BaseModel | None) -> bool:
    """Whether a run of ``config`` from ``base`` is a correction's first run (``model.base_correction`` over a base
    without one); fine-tuning a trained correction is plain fine-tuning."""
    return (config.model.base_correction is not None and base is not None
            and base.checkpoint.config.model.base_correction is None)


def base_scalers(config: TrainConfig, base: BaseModel | None) -> tuple[Scalers | None, Scalers | None]:
    """``(scalers, input_scalers)`` of :func:`hydroseq.training.data.load_training_data` for a run from ``base``:
    a fine-tuning run keeps the base's scalers, a correction fits its forecast inputs' only."""
    if base is None:
        return None, None
    return (None, base.checkpoint.scalers) if corrects(config, base) else (base.checkpoint.scalers, None)


def initial_weights(base: BaseModel, seed: int) -> dict[str, torch.Tensor]:
    """The weights a run with ``seed`` starts from: the base member of the same seed offset (member
    ``seed - base seed``, modulo the base's members), so an ensemble fine-tunes each base member."""
    states = base.checkpoint.member_states or [base.checkpoint.model_state]
    return states[(seed - base.checkpoint.config.training.seed) % len(states)]


def freeze(model: nn.Module, parts: Sequence[str]) -> None:
    """Stop the gradients of the named parts (``embedding``, ``lstm``) of ``model``."""
    for part in parts:
        module = getattr(model, part, None)
        if module is None:
            raise ConfigError(f"training.freeze: the model has no {part} to freeze")
        module.requires_grad_(False)


def _differing(section: str, ours: Any, theirs: Any, keys: Sequence[str]) -> list[str]:
    """``section.key: ours (the base has theirs)`` for each of ``keys`` whose values differ."""
    return [f"{section}.{key}: {_shown(getattr(ours, key))} (the base has {_shown(getattr(theirs, key))})"
            for key in keys if _shown(getattr(ours, key)) != _shown(getattr(theirs, key))]


def _shown(value: Any) -> Any:
    return [item.model_dump(mode="json") if hasattr(item, "model_dump") else item for item in value] \
        if isinstance(value, list) else value


def _link(source: str, run_id: str) -> str:
    path = Path(source)
    if path.exists():
        return str(path.resolve())
    return f"runs:/{run_id}"
