"""Training checkpoints: everything needed to resume bit-exactly, or to rebuild the model elsewhere.

A checkpoint is one ``torch.save`` file (written atomically) holding only tensors, numbers, strings,
lists and dicts, so it loads with ``torch.load(weights_only=True)``. Keys (see docs/training.md):

``format_version``, ``model_state``, ``optimizer_state``, ``scheduler_state``, ``epoch`` (epochs
completed), ``early_stopping`` (best validation median NSE, its epoch, epochs without improvement),
``rng`` (torch, CUDA, numpy and Python generator states at the end of the epoch), ``config`` (the
resolved train config as a JSON-able dict), ``feature_names``, ``n_features``, ``n_outputs``,
``mode``, ``scalers`` (the fitted scalers' JSON text), ``history`` (per-epoch metrics), ``run_id``.
An ensemble's checkpoint (``training.ensemble > 1``) also holds ``member_states`` (every member's
weights, first member first) and ``member_run_ids``; :func:`model_from_checkpoint` then rebuilds
an :class:`~hydroseq.model.EnsembleModel`.

An epoch is committed by :func:`commit_epoch`; :func:`repair_best_checkpoint` finishes, at resume,
the part of a commit that a killed process left undone.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hydroseq.config import TrainConfig, validate_config
from hydroseq.errors import InputDataError
from hydroseq.fileio import atomic_path
from hydroseq.model import EnsembleModel, LSTMModel, get_model

CHECKPOINT_FORMAT_VERSION = 1
LAST_CHECKPOINT = "last.pt"
BEST_CHECKPOINT = "best.pt"
REQUIRED_KEYS = ("format_version", "model_state", "config", "n_features", "n_outputs", "mode")


def rng_states() -> dict[str, Any]:
    """The state of every random generator training touches (torch CPU and CUDA, numpy, Python)."""
    numpy_state = np.random.get_state(legacy=False)
    return {
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        "numpy": {"bit_generator": numpy_state["bit_generator"], "key": numpy_state["state"]["key"].tolist(),
                  "pos": int(numpy_state["state"]["pos"]), "has_gauss": int(numpy_state["has_gauss"]),
                  "cached_gaussian": float(numpy_state["gauss"])},
        "python": _to_lists(random.getstate()),
    }


def restore_rng_states(states: dict[str, Any]) -> None:
    """Put every generator back into the state recorded by :func:`rng_states`."""
    torch.set_rng_state(states["torch"])
    if states["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])
    numpy_state = states["numpy"]
    np.random.set_state((numpy_state["bit_generator"], np.array(numpy_state["key"], dtype=np.uint32),
                         numpy_state["pos"], numpy_state["has_gauss"], numpy_state["cached_gaussian"]))
    version, internal, gauss = states["python"]
    random.setstate((version, tuple(internal), gauss))


def _to_lists(value: Any) -> Any:
    return [_to_lists(item) for item in value] if isinstance(value, tuple) else value


def save_checkpoint(path: str | Path, state: dict[str, Any]) -> Path:
    """Write ``state`` (the keys listed in the module docstring) to ``path`` atomically."""
    path = Path(path)
    with atomic_path(path) as tmp:
        torch.save({"format_version": CHECKPOINT_FORMAT_VERSION, **state}, tmp)
    return path


def commit_epoch(out_dir: Path, checkpoint: dict[str, Any], improved: bool,
                 log_metrics: Callable[[list[dict[str, float]]], None]) -> None:
    """Commit a finished epoch: the atomic rename of ``last.pt`` is its one commit point.

    What follows is derived from ``last.pt`` and redone at ``--resume`` if a kill interrupts it:
    ``best.pt`` (a copy of this checkpoint when ``improved``; :func:`repair_best_checkpoint`) and the
    epoch's MLflow metrics (``log_metrics`` is given the epoch's history row and must skip what the
    run already holds). A kill before the rename leaves the previous epoch committed, and the resumed
    run trains this epoch again bit-exactly; nothing of it has reached ``best.pt`` or MLflow.
    """
    save_checkpoint(out_dir / LAST_CHECKPOINT, checkpoint)
    if improved:
        save_checkpoint(out_dir / BEST_CHECKPOINT, checkpoint)
    log_metrics(checkpoint["history"][-1:])


def repair_best_checkpoint(out_dir: Path, last: dict[str, Any]) -> None:
    """Make ``best.pt`` hold the best epoch that ``last`` (the loaded ``last.pt``) records.

    When the last committed epoch was the best one, ``best.pt`` is the same checkpoint as ``last.pt``;
    if a kill came between the two writes it is copied now. An earlier best epoch was committed
    whole before the next epoch began, so its ``best.pt`` must already be there.

    Raises
    ------
    InputDataError
        If ``best.pt`` does not hold the earlier best epoch ``last.pt`` records (it was replaced or removed).
    """
    best_epoch = int(last["early_stopping"]["best_epoch"])
    if best_epoch < 0:  # no epoch had a finite validation NSE yet
        return
    best_path = out_dir / BEST_CHECKPOINT
    if _holds_epoch(best_path, best_epoch + 1, last["run_id"]):
        return
    if best_epoch + 1 == last["epoch"]:
        with atomic_path(best_path) as tmp:
            shutil.copyfile(out_dir / LAST_CHECKPOINT, tmp)
        return
    raise InputDataError(best_path, f"does not hold epoch {best_epoch}, the best epoch that "
                                    f"{LAST_CHECKPOINT} of run {last['run_id']} records; restore it or train afresh")


def _holds_epoch(path: Path, epochs_completed: int, run_id: str) -> bool:
    if not path.is_file():
        return False
    try:
        state = load_checkpoint(path)
    except InputDataError:
        return False
    return state.get("epoch") == epochs_completed and state.get("run_id") == run_id


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """Read a checkpoint written by :func:`save_checkpoint` (safely: ``weights_only=True``).

    Raises
    ------
    InputDataError
        If the file is missing, unreadable, or not a hydroseq checkpoint.
    """
    try:
        state = torch.load(path, map_location=map_location, weights_only=True)
    except FileNotFoundError:
        raise InputDataError(path, "checkpoint not found") from None
    except Exception as error:  # torch raises many types for a corrupt or foreign file
        raise InputDataError(path, f"not a readable checkpoint ({type(error).__name__}: {error})") from None
    missing = [key for key in REQUIRED_KEYS if key not in state] if isinstance(state, dict) else list(REQUIRED_KEYS)
    if missing:
        raise InputDataError(path, f"not a hydroseq checkpoint: missing {', '.join(missing)}")
    if state["format_version"] > CHECKPOINT_FORMAT_VERSION:
        raise InputDataError(path, f"checkpoint format {state['format_version']} is newer than this hydroseq "
                                   f"understands ({CHECKPOINT_FORMAT_VERSION})")
    return state


def model_from_checkpoint(state: dict[str, Any], lstm_path: str = "padded") -> tuple[LSTMModel, TrainConfig]:
    """Rebuild the trained model (in eval mode, on the CPU) and its config from a loaded checkpoint.

    An ensemble checkpoint gives an :class:`~hydroseq.model.EnsembleModel` (the member mean).
    """
    config = validate_config(state["config"], TrainConfig, source="checkpoint config")
    members = []
    for weights in state.get("member_states") or [state["model_state"]]:
        member = get_model(config.model, state["n_features"], state["n_outputs"], state["mode"], lstm_path=lstm_path,
                           data=config.data)
        member.load_state_dict(weights)
        members.append(member)
    model = members[0] if len(members) == 1 else EnsembleModel(members)
    return model.eval(), config
