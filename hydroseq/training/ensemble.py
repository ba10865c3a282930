"""``training.ensemble: N``: N members trained one after the other, tracked as child runs of one parent run.

Member ``i`` is the configured run with seed ``seed + i`` in ``<output_dir>/member<i>``. When all
have finished, their best weights form one ensemble checkpoint ``<output_dir>/best.pt`` (the
member mean, see :class:`~hydroseq.model.EnsembleModel`) that is scored on the validation split
and logged to the parent run, so ``hydroseq evaluate`` and ``hydroseq export`` take the parent
run id like any other. ``--resume`` skips the members recorded as finished in
``<output_dir>/ensemble.json`` and resumes the others from their own ``last.pt``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import mlflow

import hydroseq.training.checkpoint as ckpt
import hydroseq.training.tracking as tracking
from hydroseq.config import TrainConfig
from hydroseq.config.stores import resolve_tracking_uri
from hydroseq.fileio import write_text_atomic
from hydroseq.training.base_checks import check_data_units
from hydroseq.training.data import load_training_data, resolve_data_path
from hydroseq.training.finish import finish_run, start_run
from hydroseq.training.init_from import base_scalers, load_base_model
from hydroseq.training.result import MemberCallback, ModelLogger, TrainResult
from hydroseq.training.runtime import resolve_device

ENSEMBLE_RECORD = "ensemble.json"


def member_config(config: TrainConfig, member: int) -> TrainConfig:
    """The config of member ``member``: its own seed, output folder and run name; no ensemble."""
    training = config.training.model_copy(update={
        "seed": config.training.seed + member, "ensemble": 1,
        "output_dir": Path(config.training.output_dir) / f"member{member}"})
    name = f"{config.tracking.run_name or 'ensemble'}-member{member}"
    return config.model_copy(update={"training": training,
                                     "tracking": config.tracking.model_copy(update={"run_name": name})})


def train_ensemble(config: TrainConfig, data_path: str | Path | None, resume: bool, tracking_uri: str | None,
                   train_member: Callable[..., TrainResult], on_member: MemberCallback | None = None,
                   show_progress: bool = True, log_model: ModelLogger | None = None) -> TrainResult:
    """Train every member, then log the ensemble to the parent run; returns the parent run's result.

    ``train_member(config, data_path, resume, tracking_uri, parent_run_id=...)`` trains one member
    (:func:`hydroseq.training.train`; passed in so that this module does not import the loop) and
    ``on_member`` gets its result; ``log_model`` logs the ensemble's model to the parent run (the members
    log none). The result's best epoch and NSE are those of the best member;
    its epochs and history those of the members trained by this call (resume skips finished ones).
    """
    out_dir = Path(config.training.output_dir)
    record_path = out_dir / ENSEMBLE_RECORD
    record = json.loads(record_path.read_text()) if resume and record_path.exists() else {}
    uri = resolve_tracking_uri(config.tracking, tracking_uri)
    base = load_base_model(config.training.init_from, tracking_uri) if config.training.init_from else None
    if base is not None:
        check_data_units(resolve_data_path(config, data_path), base.input_units)
    data = load_training_data(config, data_path, *base_scalers(config, base))
    parent = record.get("parent_run_id") or start_run(config, data, uri, out_dir,
                                                      extra_tags=base.tags if base else None)
    finished: dict[str, dict] = record.get("members", {})
    results = []
    for member in range(config.training.ensemble):
        if str(member) in finished:
            continue
        member_cfg = member_config(config, member)
        member_resume = resume and (Path(member_cfg.training.output_dir) / "last.pt").exists()
        result = train_member(member_cfg, data_path, member_resume, tracking_uri, parent_run_id=parent)
        if on_member is not None:
            on_member(result)
        results.append(result)
        finished[str(member)] = {"run_id": result.run_id, "best_epoch": result.best_epoch,
                                 "best_val_median_nse": result.best_val_median_nse}
        write_text_atomic(record_path, json.dumps({"parent_run_id": parent, "members": finished}, indent=2))
    members = [ckpt.Checkpoint.load(member_config(config, m).training.output_dir / ckpt.BEST_CHECKPOINT)
               for m in range(config.training.ensemble)]
    if any(member.scalers.to_dict() != members[0].scalers.to_dict() for member in members[1:]):
        raise RuntimeError("ensemble members were trained with different scalers")
    combined = replace(members[0], config=config, run_id=parent,
                       member_states=[member.model_state for member in members],
                       member_run_ids=[finished[str(m)]["run_id"] for m in range(config.training.ensemble)])
    combined.save(out_dir / ckpt.BEST_CHECKPOINT)
    with tracking.use_tracking_uri(uri), mlflow.start_run(run_id=parent):
        mlflow.set_tags({"ensemble_members": json.dumps(combined.member_run_ids)})
        for member_key, info in finished.items():
            mlflow.log_metric("member_best_val_median_nse", info["best_val_median_nse"], step=int(member_key))
        validation = finish_run(config, data, out_dir, resolve_device(config.training.device), show_progress,
                                log_model)
    best = max(finished.values(), key=lambda info: info["best_val_median_nse"])
    return TrainResult(parent, uri, out_dir, int(best["best_epoch"]), float(best["best_val_median_nse"]),
                       sum(result.epochs_completed for result in results),
                       [entry for result in results for entry in result.history],
                       validation=validation, members=finished,
                       base_val_median_nse=next((result.base_val_median_nse for result in results
                                                 if result.base_val_median_nse is not None), None))
