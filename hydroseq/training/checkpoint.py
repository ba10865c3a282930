"""Training checkpoints: everything needed to resume bit-exactly, or to rebuild the model elsewhere.

A :class:`Checkpoint` is one ``torch.save`` file (written atomically) holding only tensors, numbers,
strings, lists and dicts, so it loads with ``torch.load(weights_only=True)``. This module is the only
one that knows its keys (see docs/training.md):

``format_version``, ``model_state``, ``optimizer_state``, ``scheduler_state``, ``epoch`` (epochs
completed), ``early_stopping`` (best validation median NSE, its epoch, epochs without improvement),
``rng`` (torch, CUDA, numpy and Python generator states at the end of the epoch), ``config`` (the
resolved train config as a JSON-able dict), ``feature_names``, ``n_features``, ``n_outputs``,
``mode``, ``scalers`` (the fitted scalers' JSON text), ``history`` (per-epoch metrics), ``run_id``,
``rng_by_rank``. An ensemble's checkpoint (``training.ensemble > 1``) also holds ``member_states``
(every member's weights, first member first) and ``member_run_ids``; :meth:`Checkpoint.build_model`
then rebuilds an :class:`~hydroseq.model.EnsembleModel`.

An epoch is committed by :func:`commit_epoch`; :func:`repair_best_checkpoint` finishes, at resume,
the part of a commit that a killed process left undone.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hydroseq.config import TrainConfig, validate_config
from hydroseq.dataset import Scalers
from hydroseq.errors import InputDataError
from hydroseq.fileio import atomic_path
from hydroseq.model import EnsembleModel, Mode, TrainedModel, get_model
from hydroseq.training.runtime import EarlyStopping

CHECKPOINT_FORMAT_VERSION = 1
LAST_CHECKPOINT = "last.pt"
BEST_CHECKPOINT = "best.pt"
WEIGHTS_FILE = "checkpoint.pt"  # in an exported model directory: the weights, without the training state
REQUIRED_KEYS = ("format_version", "model_state", "optimizer_state", "scheduler_state", "epoch", "early_stopping",
                 "rng", "config", "feature_names", "n_outputs", "scalers", "history", "run_id", "rng_by_rank")


@dataclass
class Checkpoint:
    """A trained model, what rebuilds and exports it, and the training state that resumes its run.

    Attributes
    ----------
    model_state
        The model's weights (``state_dict``; an ensemble's first member).
    config
        The resolved train config of the run.
    feature_names
        The model's inputs in order (:class:`~hydroseq.dataset.FeatureLayout`).
    n_outputs
        Outputs per sequence (sequence mode) or per step (per-step mode): one per lead.
    scalers
        The scalers fitted on the training data.
    run_id
        The MLflow run (an ensemble's parent run).
    epoch
        Epochs completed.
    optimizer_state, scheduler_state
        ``state_dict`` of the optimizer and the learning-rate scheduler.
    early_stopping
        The early-stopping record after ``epoch`` epochs.
    rng, rng_by_rank
        Generator states (:func:`rng_states`) at the end of the epoch: rank 0's, and every DDP rank's.
    history
        Per-epoch metrics, one row per epoch.
    member_states, member_run_ids
        An ensemble's members: weights and run ids, first member first (empty for one model).
    quantile_scale
        Quantile models: the spread calibration ``[lead][level]`` fitted on the validation period
        (:mod:`hydroseq.training.calibration`); None before it is fitted.
    """

    model_state: dict[str, torch.Tensor]
    config: TrainConfig
    feature_names: list[str]
    n_outputs: int
    scalers: Scalers
    run_id: str
    epoch: int = 0
    optimizer_state: dict[str, Any] = field(default_factory=dict)
    scheduler_state: dict[str, Any] = field(default_factory=dict)
    early_stopping: EarlyStopping = field(default_factory=lambda: EarlyStopping(None))
    rng: dict[str, Any] = field(default_factory=dict)
    rng_by_rank: list[dict[str, Any]] = field(default_factory=list)
    history: list[dict[str, float]] = field(default_factory=list)
    member_states: list[dict[str, torch.Tensor]] = field(default_factory=list)
    member_run_ids: list[str] = field(default_factory=list)
    quantile_scale: list[list[float]] | None = None

    @property
    def n_features(self) -> int:
        """Inputs per step."""
        return len(self.feature_names)

    @property
    def mode(self) -> Mode:
        """``per_step`` or ``sequence`` (the data config's)."""
        return self.config.data.mode

    def build_model(self) -> TrainedModel:
        """The trained model (padded path), in eval mode on the CPU; an ensemble's is the member mean."""
        members = []
        for weights in self.member_states or [self.model_state]:
            member = get_model(self.config.model, self.n_features, self.n_outputs, self.mode, data=self.config.data)
            member.load_state_dict(weights)
            members.append(member)
        model = members[0] if len(members) == 1 else EnsembleModel(members)
        if self.quantile_scale is not None:
            model.set_quantile_scale(torch.tensor(self.quantile_scale, dtype=torch.float32))
        return model.eval()

    def weights_only(self) -> Checkpoint:
        """The checkpoint without the state that only resumes its run (optimizer, scheduler, generators)."""
        return replace(self, optimizer_state={}, scheduler_state={}, rng={}, rng_by_rank=[])

    def save(self, path: str | Path) -> Path:
        """Write this checkpoint to ``path`` atomically; returns ``path``."""
        state = {
            "format_version": CHECKPOINT_FORMAT_VERSION, "model_state": self.model_state,
            "optimizer_state": self.optimizer_state, "scheduler_state": self.scheduler_state, "epoch": self.epoch,
            "early_stopping": asdict(self.early_stopping), "rng": self.rng,
            "config": self.config.model_dump(mode="json"), "feature_names": list(self.feature_names),
            "n_features": self.n_features, "n_outputs": self.n_outputs, "mode": self.mode,
            "scalers": json.dumps(self.scalers.to_dict()), "history": self.history, "run_id": self.run_id,
            "rng_by_rank": self.rng_by_rank,
        }
        if self.member_states:
            state.update(member_states=self.member_states, member_run_ids=self.member_run_ids)
        if self.quantile_scale is not None:
            state["quantile_scale"] = self.quantile_scale
        path = Path(path)
        with atomic_path(path) as tmp:
            torch.save(state, tmp)
        return path

    @classmethod
    def load(cls, path: str | Path) -> Checkpoint:
        """Read a checkpoint written by :meth:`save` onto the CPU (safely: ``weights_only=True``).

        Raises
        ------
        InputDataError
            If the file is missing, unreadable, or not a hydroseq checkpoint.
        ConfigError
            If its train config is not valid for this hydroseq.
        """
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
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
        try:
            scalers = Scalers.from_dict(json.loads(state["scalers"]))
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise InputDataError(path, f"not a hydroseq checkpoint: unreadable scalers ({error!r})") from None
        stopping = state["early_stopping"]
        return cls(
            model_state=state["model_state"],
            config=validate_config(state["config"], TrainConfig, source="checkpoint config"),
            feature_names=[str(name) for name in state["feature_names"]], n_outputs=int(state["n_outputs"]),
            scalers=scalers, run_id=str(state["run_id"]), epoch=int(state["epoch"]),
            optimizer_state=state["optimizer_state"], scheduler_state=state["scheduler_state"],
            early_stopping=EarlyStopping(stopping["patience"], float(stopping["best_nse"]), int(stopping["best_epoch"]),
                                         int(stopping["epochs_without_improvement"])),
            rng=state["rng"], rng_by_rank=state["rng_by_rank"], history=state["history"],
            member_states=state.get("member_states", []), member_run_ids=state.get("member_run_ids", []),
            quantile_scale=state.get("quantile_scale"),
        )


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


def commit_epoch(out_dir: Path, checkpoint: Checkpoint, improved: bool,
                 log_metrics: Callable[[list[dict[str, float]]], None]) -> None:
    """Commit a finished epoch: the atomic rename of ``last.pt`` is its one commit point.

    What follows is derived from ``last.pt`` and redone at ``--resume`` if a kill interrupts it:
    ``best.pt`` (a copy of this checkpoint when ``improved``; :func:`repair_best_checkpoint`) and the
    epoch's MLflow metrics (``log_metrics`` is given the epoch's history row and must skip what the
    run already holds). A kill before the rename leaves the previous epoch committed, and the resumed
    run trains this epoch again bit-exactly; nothing of it has reached ``best.pt`` or MLflow.
    """
    checkpoint.save(out_dir / LAST_CHECKPOINT)
    if improved:
        checkpoint.save(out_dir / BEST_CHECKPOINT)
    log_metrics(checkpoint.history[-1:])


def repair_best_checkpoint(out_dir: Path, last: Checkpoint) -> None:
    """Make ``best.pt`` hold the best epoch that ``last`` (the loaded ``last.pt``) records.

    When the last committed epoch was the best one, ``best.pt`` is the same checkpoint as ``last.pt``;
    if a kill came between the two writes it is copied now. An earlier best epoch was committed
    whole before the next epoch began, so its ``best.pt`` must already be there.

    Raises
    ------
    InputDataError
        If ``best.pt`` does not hold the earlier best epoch ``last.pt`` records (it was replaced or removed).
    """
    best_epoch = last.early_stopping.best_epoch
    if best_epoch < 0:  # no epoch had a finite validation NSE yet
        return
    best_path = out_dir / BEST_CHECKPOINT
    if _holds_epoch(best_path, best_epoch + 1, last.run_id):
        return
    if best_epoch + 1 == last.epoch:
        with atomic_path(best_path) as tmp:
            shutil.copyfile(out_dir / LAST_CHECKPOINT, tmp)
        return
    raise InputDataError(best_path, f"does not hold epoch {best_epoch}, the best epoch that "
                                    f"{LAST_CHECKPOINT} of run {last.run_id} records; restore it or train afresh")


def _holds_epoch(path: Path, epochs_completed: int, run_id: str) -> bool:
    if not path.is_file():
        return False
    try:
        checkpoint = Checkpoint.load(path)
    except InputDataError:
        return False
    return checkpoint.epoch == epochs_completed and checkpoint.run_id == run_id
