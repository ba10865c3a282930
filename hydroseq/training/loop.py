"""``hydroseq train``: the training loop, readable top to bottom.

One epoch = one pass over the training samples in the sampler's order for that epoch (seeded by
``seed`` and the epoch, so a resumed run sees exactly the batches an uninterrupted one would). After
each epoch: validation (median NSE and KGE over stations), the epoch's commit (``last.pt``, then
``best.pt`` when the validation median NSE improved, then the metrics to MLflow:
:func:`~hydroseq.training.checkpoint.commit_epoch`), early stopping.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from dataclasses import replace
from pathlib import Path

import mlflow
import numpy as np
import torch
from tqdm.auto import tqdm

import hydroseq.training.checkpoint as ckpt
import hydroseq.training.distributed as distributed
import hydroseq.training.store as store
import hydroseq.training.tracking as tracking
from hydroseq.batching import BatchLoader, make_loader
from hydroseq.config import ConfigError, TrainConfig
from hydroseq.config.stores import resolve_tracking_uri
from hydroseq.fileio import make_output_dir, prepare_output_file
from hydroseq.model import BaseCorrectedModel, LSTMModel, get_loss, get_model
from hydroseq.training.augment import hide_forecast, hide_observed
from hydroseq.training.base_checks import check_data_units
from hydroseq.training.data import TrainingData, load_training_data, resolve_data_path
from hydroseq.training.ensemble import train_ensemble
from hydroseq.training.finish import finish_run, start_run
from hydroseq.training.init_from import (
    base_scalers,
    check_correctable,
    check_same_layout,
    corrects,
    freeze,
    initial_weights,
    load_base_model,
)
from hydroseq.training.predict import eval_batch_size, predict_split
from hydroseq.training.result import EpochCallback, MemberCallback, ModelLogger, TrainResult
from hydroseq.training.runtime import (
    EarlyStopping,
    check_bf16,
    lr_factor,
    peak_memory_mb,
    resolve_lstm_path,
    set_threads,
)
from hydroseq.training.scoring import scaled_mse, score_stations, summarise

LOGGER = logging.getLogger(__name__)


def train(config: TrainConfig, data_path: str | Path | None = None, resume: bool = False,
          tracking_uri: str | None = None, parent_run_id: str | None = None, *, show_progress: bool = True,
          on_epoch: EpochCallback | None = None, on_member: MemberCallback | None = None,
          log_model: ModelLogger | None = None) -> TrainResult:
    """Train the configured LSTM, tracked in MLflow; returns the run, the history and the final scores.

    ``resume`` continues from ``<output_dir>/last.pt`` (same MLflow run, same scalers, generator
    states restored; ``best.pt`` and the MLflow metrics of the committed epochs completed first), so
    a killed run ends with the same checkpoints and metric history as an uninterrupted one; without
    a ``last.pt`` yet (killed before its first epoch was committed) training starts fresh, and the
    result's ``resumed_from_epoch`` is None.
    Under ``torchrun`` every process trains its share of each epoch with DDP and only rank 0 logs
    and writes checkpoints (see :mod:`hydroseq.training.distributed`).
    ``training.ensemble > 1`` trains the members one after the other as child runs of
    ``parent_run_id`` (see :mod:`hydroseq.training.ensemble`); the result is the parent run's.
    Nothing is printed: ``on_epoch`` gets each epoch's history entry once it is validated,
    ``on_member`` each ensemble member's result; ``show_progress`` draws progress bars on a terminal.
    ``log_model`` logs the finished run's model (an ensemble's to the parent run only), which is then
    registered (:func:`hydroseq.training.finish.finish_run`); ``hydroseq train`` passes the pyfunc
    forecaster's, :func:`hydroseq.serving.pyfunc_logging.log_forecast_model`. Without it the run
    logs no model (its checkpoints are still artifacts).
    """
    cfg = config.training
    if cfg.ensemble > 1:
        member = functools.partial(train, show_progress=show_progress, on_epoch=on_epoch)
        return train_ensemble(config, data_path, resume, tracking_uri, member, on_member, show_progress, log_model)
    set_threads(cfg)
    ddp = distributed.setup(cfg)  # under torchrun: process group, this rank's device and share of the cores
    device = ddp.device
    check_bf16(cfg, device)
    uri = resolve_tracking_uri(config.tracking, tracking_uri)  # a store MLflow refuses stops here
    out_dir = make_output_dir(cfg.output_dir)
    for checkpoint_file in (ckpt.LAST_CHECKPOINT, ckpt.BEST_CHECKPOINT):  # not after the first epoch
        prepare_output_file(out_dir / checkpoint_file)
    last = resume_from(out_dir) if resume else None
    base = load_base_model(cfg.init_from, tracking_uri) if cfg.init_from else None
    correcting = corrects(config, base)
    if config.model.base_correction is not None and base is None:
        raise ConfigError("model.base_correction needs training.init_from: the base model it corrects")
    if base is not None:
        (check_correctable if correcting else check_same_layout)(config, base)
        check_data_units(resolve_data_path(config, data_path), base.input_units)  # the base's scalers read them
    data = load_training_data(config, data_path, last.scalers) if last else load_training_data(
        config, data_path, *base_scalers(config, base))
    torch.manual_seed(cfg.seed)
    model = get_model(config.model, len(data.feature_names), data.n_outputs, config.data.mode,
                      lstm_path=resolve_lstm_path(cfg, device), data=config.data)
    if correcting and isinstance(model, BaseCorrectedModel) and base is not None:
        scale = base.checkpoint.quantile_scale
        model.load_base(base.checkpoint.member_states or [base.checkpoint.model_state],
                        None if scale is None else torch.tensor(scale, dtype=torch.float32))
    elif base is not None:
        model.load_state_dict(initial_weights(base, cfg.seed))
        freeze(model, cfg.freeze)
    model = model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_factor(cfg))
    stopper = EarlyStopping(cfg.patience)
    loader = make_loader(data.train_set, config.batching, shuffle=True, seed=cfg.seed,
                         num_replicas=ddp.world_size, rank=ddp.rank)
    history: list[dict[str, float]] = []
    stopped_early_after: int | None = None
    if last:
        model.load_state_dict(last.model_state)
        optimizer.load_state_dict(last.optimizer_state)
        scheduler.load_state_dict(last.scheduler_state)
        for group, base_lr in zip(optimizer.param_groups, scheduler.base_lrs, strict=True):  # this config's schedule
            group["lr"] = base_lr * lr_factor(cfg)(last.epoch)
        stopper = replace(last.early_stopping, patience=cfg.patience)
        history = list(last.history)
        ckpt.restore_rng_states(ddp.own_rng_state(last))
    trained = ddp.wrap(model)  # DDP averages gradients over ranks; `model` stays the plain module
    run_id = ddp.from_main(lambda: start_run(config, data, uri, out_dir, run_id=last.run_id if last else None,
                                             parent_run_id=parent_run_id, extra_tags=base.tags if base else None))
    log_new_metrics = functools.partial(store.log_new_metrics, uri, run_id, config.tracking)
    if last and ddp.is_main:  # finish the commit of the last epoch if a kill interrupted it
        ckpt.repair_best_checkpoint(out_dir, last)
        log_new_metrics(history)
    first_epoch = last.epoch if last else 0
    base_nse = None
    if base is not None and last is None:  # the base model on the new stations, before the first update
        base_nse = float(validate(model, data, config, device)["val_median_nse"])
        LOGGER.info(f"--init-from: the base model scores validation median NSE {base_nse:.3f} on these stations "
                    "before fine-tuning")
        if ddp.is_main:
            log_new_metrics([{"epoch": 0, "base_val_median_nse": base_nse}])
    if stopper.should_stop:  # killed after committing the epoch that stopped early: nothing left to train
        first_epoch = cfg.epochs
    with tracking.use_tracking_uri(uri), (mlflow.start_run(run_id=run_id) if ddp.is_main else contextlib.nullcontext()):
        for epoch in range(first_epoch, cfg.epochs):
            loader.sampler.set_epoch(epoch)
            metrics = train_one_epoch(trained, optimizer, loader, data, config, device, epoch, show_progress)
            scheduler.step()
            metrics.update(validate(model, data, config, device))
            metrics = ddp.combine_metrics(metrics)
            improved = stopper.update(metrics["val_median_nse"], epoch)
            history.append({"epoch": epoch, **metrics})
            if on_epoch is not None:
                on_epoch(history[-1])
            checkpoint = ckpt.Checkpoint(
                model.state_dict(), config, data.feature_names, data.n_outputs, data.scalers, run_id,
                epoch=epoch + 1, optimizer_state=optimizer.state_dict(), scheduler_state=scheduler.state_dict(),
                early_stopping=replace(stopper), rng=ckpt.rng_states(), rng_by_rank=ddp.all_gather(ckpt.rng_states()),
                history=list(history))
            if ddp.is_main:
                ckpt.commit_epoch(out_dir, checkpoint, improved, log_new_metrics)
            if stopper.should_stop:
                stopped_early_after = epoch
                break
        del trained  # DDP's reducer holds the process group: drop it before the group goes
        ddp.finish()  # the last collective; what follows is rank 0's alone
        validation = finish_run(config, data, out_dir, device, show_progress, log_model) if ddp.is_main else None
    return TrainResult(run_id, uri, out_dir, stopper.best_epoch, stopper.best_nse,
                       int(history[-1]["epoch"]) + 1 if history else 0, history, stopped_early_after, validation,
                       resumed_from_epoch=last.epoch if last else None, base_val_median_nse=base_nse)


def resume_from(out_dir: Path) -> ckpt.Checkpoint | None:
    """The checkpoint ``--resume`` continues from, ``<out_dir>/last.pt``; None (a fresh start, logged) if
    there is none yet: a run killed before its first epoch was committed left nothing to resume."""
    path = out_dir / ckpt.LAST_CHECKPOINT
    if not path.exists():
        LOGGER.info("resume: no checkpoint %s yet (no epoch was committed): training starts fresh", path)
        return None
    return ckpt.Checkpoint.load(path)


def train_one_epoch(model: torch.nn.Module, optimizer: torch.optim.Optimizer, loader: BatchLoader,
                    data: TrainingData, config: TrainConfig, device: torch.device, epoch: int,
                    show_progress: bool = True) -> dict[str, float]:
    """One pass over the training batches; the only host syncs are every ``log_every`` steps and at the end."""
    cfg = config.training
    model.train()
    station_std = data.station_std.to(device)
    loss_of = get_loss(config)
    total_batches = min(len(loader), cfg.max_batches_per_epoch or len(loader))
    loss_sum = torch.zeros((), device=device)
    n_batches = samples = valid_steps = padded_steps = 0
    start = time.perf_counter()
    progress = tqdm(loader, total=total_batches, desc=f"epoch {epoch}", unit="batch", leave=False,
                    disable=None if show_progress else True)  # None: only on a terminal
    for step, batch in enumerate(progress):
        if step >= total_batches:
            break
        batch = batch.to(device, non_blocking=True)
        if config.data.target_hiding is not None:
            batch = hide_observed(batch, data.train_set.layout, config.data.target_hiding)
        if config.data.forecast_hiding is not None:
            batch = hide_forecast(batch, data.train_set.layout, config.data.forecast_hiding)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=cfg.bf16):
            pred = model(batch.x, batch.lengths)
        loss = loss_of(pred.float(), batch.y, batch.mask, station_std[batch.station])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.grad_clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        optimizer.step()
        loss_sum += loss.detach()
        n_batches += 1
        samples += len(batch)
        valid_steps += batch.valid_steps
        padded_steps += batch.padded_steps
        if step % cfg.log_every == 0:
            elapsed = time.perf_counter() - start
            progress.set_postfix(loss=f"{loss.item():.4f}", steps_per_s=f"{valid_steps / elapsed:,.0f}")
    train_loss = float(loss_sum) / max(n_batches, 1)  # the epoch's one host sync: the time includes the queue
    seconds = time.perf_counter() - start
    return {"train_loss": train_loss, "padding_ratio": 1 - valid_steps / max(padded_steps, 1),
            "valid_timesteps_per_s": valid_steps / seconds, "samples_per_s": samples / seconds,
            "epoch_seconds": seconds, "peak_memory_mb": peak_memory_mb(device),
            "learning_rate": optimizer.param_groups[0]["lr"]}


def validate(model: LSTMModel | BaseCorrectedModel, data: TrainingData, config: TrainConfig,
             device: torch.device) -> dict[str, float]:
    """Validation loss (MSE of the scaled target), median NSE / KGE over stations (the first lead, or their
    mean over the leads with ``training.selection_leads: all``), seconds taken."""
    start = time.perf_counter()
    prediction = predict_split(model, data.station_data, data.scalers, config.data, "validation", device,
                               batch_size=eval_batch_size(config),
                               stride=config.training.eval_stride)
    leads = range(len(prediction.sim)) if config.training.selection_leads == "all" else range(1)
    stations = list(data.station_data.station_ids)
    per_lead = [summarise(score_stations(prediction.obs, prediction.sim[k], stations)) for k in leads]
    return {"val_loss": scaled_mse(prediction.sim_scaled, prediction.obs_scaled),
            "val_median_nse": float(np.mean([scores["median_nse"] for scores in per_lead])),
            "val_median_kge": float(np.mean([scores["median_kge"] for scores in per_lead])),
            "val_seconds": time.perf_counter() - start}
