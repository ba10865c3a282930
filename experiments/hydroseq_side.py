"""hydroseq side of the benchmark: train and test one mode in a child process, like NeuralHydrology.

The training config is hydroseq's own protocol config (``configs/train_caravan_protocol_<mode>.yaml``)
with everything the comparison fixes overridden from :class:`experiments.protocol.Protocol`: basins,
inputs, static attributes, target, split, input length, hidden size, batch size, NSE loss, threads,
CPU, seed and epochs. What stays hydroseq's own choice (learning-rate schedule, dropout, spin-up,
length buckets) is printed in the report's notes.

Child: ``python -m experiments.hydroseq_side --config RUN.yml --out DIR`` writes ``DIR/result.json``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from benchmarks.child import ChildTimeout, log_tail, run_child, thread_environment
from benchmarks.files import write_text_atomic
from benchmarks.timing import default_threads
from experiments.measures import EpochPoint, TestScores, ToolRun
from experiments.protocol import REPO_ROOT, Protocol
from hydroseq.config import TrainConfig, load_config

BASE_CONFIGS = {mode: REPO_ROOT / "configs" / f"train_caravan_protocol_{mode}.yaml"
                for mode in ("per_step", "sequence")}


@dataclass(frozen=True)
class BenchmarkMode:
    """One hydroseq run of the comparison: a training mode plus hydroseq options that NeuralHydrology
    has no counterpart for (``training_options`` update the ``training`` section)."""

    name: str
    training_mode: str
    training_options: dict[str, Any] = field(default_factory=dict)


BENCHMARK_MODES = {
    "per_step": BenchmarkMode("hydroseq per-step", "per_step"),
    "sequence": BenchmarkMode("hydroseq sequence", "sequence"),
    "sequence_bf16": BenchmarkMode("hydroseq sequence bf16", "sequence", {"bf16": True}),
}


class HydroseqRunError(RuntimeError):
    """A hydroseq benchmark child failed."""


def hydroseq_config(protocol: Protocol, mode: str, data_path: Path, work_dir: Path,
                    own_batch_size: bool = False) -> TrainConfig:
    """hydroseq's protocol config for benchmark ``mode`` with the comparison's fixed settings applied.

    With ``protocol.lagged_target`` the observed target is an input and the target is one step
    ahead (lead 1); without it per-step mode simulates the target at each input step (lead 0).
    ``own_batch_size`` keeps the config's batch size instead of the protocol's (a per-step sample
    is a whole chunk, not one target day).
    """
    benchmark_mode = BENCHMARK_MODES[mode]
    base = load_config(BASE_CONFIGS[benchmark_mode.training_mode], TrainConfig).model_dump(mode="json")
    run_dir = work_dir / f"hydroseq_{mode}"
    base["data"].update({
        "path": str(data_path), "dynamic_inputs": list(protocol.dynamic_inputs),
        "static_inputs": list(protocol.static_inputs), "target": protocol.target, "stations": list(protocol.basins),
        "splits": {name: {"start": str(getattr(protocol, name).start), "end": str(getattr(protocol, name).end)}
                   for name in ("train", "validation", "test")},
        "seq_len": protocol.seq_length, "lagged_target": protocol.lagged_target, "cache_dir": str(run_dir / "cache"),
        "leads": [1] if protocol.lagged_target else None,
    })
    base["data"]["min_len"] = min(base["data"]["min_len"], protocol.seq_length)
    if not own_batch_size:
        base["batching"]["batch_size"] = protocol.batch_size
    base["model"]["hidden_size"] = protocol.hidden_size
    per_step = benchmark_mode.training_mode == "per_step"
    base["training"].update(benchmark_mode.training_options)
    base["training"].update({
        "loss": "nse", "threads": protocol.threads, "device": "cpu", "seed": protocol.seed,
        "epochs": protocol.per_step_epochs if per_step else protocol.epochs,
        "max_batches_per_epoch": None if per_step else protocol.max_updates_per_epoch,
        "output_dir": str(run_dir / "train"),
    })
    base["tracking"].update({"tracking_uri": f"sqlite:///{run_dir / 'mlruns.db'}",
                             "artifact_root": str(run_dir / "mlartifacts"), "experiment": f"benchmark-{mode}"})
    return TrainConfig.model_validate(base)


def own_choices(config: TrainConfig) -> str:
    """The settings hydroseq chooses itself (not fixed by the protocol), in one line."""
    data, training = config.data, config.training
    precision = ", bf16 autocast" if training.bf16 else ""
    return (f"{data.mode}{precision}: lr {training.learning_rate:g} ({training.lr_schedule}), "
            f"dropout {config.model.dropout}, min_len {data.min_len}, spin_up {data.spin_up}, "
            f"{config.batching.strategy} batches, "
            f"patience {training.patience}, eval stride {training.eval_stride or 'seq_len // 2'}")


def _scores(table: Any, forecast: str) -> dict[str, float]:
    rows = table[table["forecast"] == forecast]
    nse, kge = rows["nse"].dropna(), rows["kge"].dropna()
    return {"median_nse": float(nse.median()), "mean_nse": float(nse.mean()),
            "median_kge": float(kge.median()), "mean_kge": float(kge.mean()), "n_basins": int(nse.size)}


def child_main(argv: list[str] | None = None) -> int:
    """Child process: time data loading, train, evaluate the test period; write ``result.json``."""
    parser = argparse.ArgumentParser(description="one hydroseq benchmark run")
    parser.add_argument("--config", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args(argv)
    import torch

    from hydroseq.batching.loader import make_loader
    from hydroseq.training import evaluate, train
    from hydroseq.training.data import load_training_data

    config = load_config(args.config, TrainConfig)
    torch.set_num_threads(config.training.threads or default_threads())  # as train() sets them
    start = time.perf_counter()
    data = load_training_data(config)
    loading_s = time.perf_counter() - start
    n_samples, lengths = len(data.train_set), data.train_set.lengths
    loader = make_loader(data.train_set, config.batching, shuffle=True, seed=config.training.seed)
    updates_per_epoch = min(len(loader), config.training.max_batches_per_epoch or len(loader))
    del data, loader
    shutil.rmtree(config.data.cache_dir, ignore_errors=True)  # train() then loads cold, as timed here
    result = train(config)
    report = evaluate(result.run_id, period="test", tracking_uri=result.tracking_uri).report
    lead = int(report.scores["lead"].min())
    table = report.scores[report.scores["lead"] == lead]
    payload = {
        "data_loading_s": loading_s, "train_samples": n_samples, "mean_length": float(lengths.mean()),
        "updates_per_epoch": updates_per_epoch, "stopped_early_after": result.stopped_early_after,
        "history": result.history, "best_epoch": result.best_epoch, "run_id": result.run_id, "lead": lead,
        "test": _scores(table, "model"),
        "baselines": {name: _scores(table, name) for name in ("persistence", "climatology")},
        "station_nse": {name: dict(zip(rows["station"].astype(str), rows["nse"], strict=True))
                        for name, rows in table.groupby("forecast") if name in ("model", "persistence", "climatology")},
        "stations_beating_persistence": int(report.summary[f"test_lead{lead}_stations_beating_persistence"]),
    }
    write_text_atomic(args.out / "result.json", json.dumps(payload, indent=2, default=float))
    return 0


def run_hydroseq(protocol: Protocol, mode: str, data_path: Path, work_dir: Path,
                 timeout_s: float | None = None) -> tuple[ToolRun, dict[str, TestScores]]:
    """Train and test hydroseq in ``mode`` in a child process; the run and the test baselines.

    Raises
    ------
    HydroseqRunError
        If the child fails or runs past ``timeout_s``.
    """
    config = hydroseq_config(protocol, mode, data_path, work_dir)
    payload, peak_mib, wall_s = run_training_child(config, work_dir / f"hydroseq_{mode}", protocol.threads, timeout_s)
    run = as_tool_run(BENCHMARK_MODES[mode].name, payload, peak_mib, wall_s, own_choices(config),
                      config.data.spin_up, sequence_level=config.data.mode == "sequence")
    return run, {name: TestScores(**values) for name, values in payload["baselines"].items()}


CHILD_RECORD = "child.json"


def run_training_child(config: TrainConfig, run_dir: Path, threads: int,
                       timeout_s: float | None = None) -> tuple[dict[str, Any], float, float]:
    """Train and test ``config`` in a child process in ``run_dir`` (emptied first).

    Returns the child's ``result.json``, its peak RSS in MiB and its wall seconds (the last two also written to
    ``child.json`` there).

    Raises
    ------
    HydroseqRunError
        If the child fails or runs past ``timeout_s``.
    """
    shutil.rmtree(run_dir, ignore_errors=True)
    config_path = run_dir / "config.yml"
    write_text_atomic(config_path, yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False))
    command = [sys.executable, "-m", "experiments.hydroseq_side", "--config", str(config_path), "--out", str(run_dir)]
    log = run_dir / "train.log"
    start = time.perf_counter()
    try:
        status, peak_mib = run_child(command, thread_environment(threads), log, timeout_s, cwd=REPO_ROOT)
    except ChildTimeout as error:
        raise HydroseqRunError(str(error)) from None
    if status != 0:
        raise HydroseqRunError(f"hydroseq exited with status {status}:\n{log_tail(log)}")
    payload = json.loads((run_dir / "result.json").read_text())
    wall_s = time.perf_counter() - start
    write_text_atomic(run_dir / CHILD_RECORD, json.dumps({"peak_rss_mib": peak_mib, "wall_s": wall_s}))
    return payload, peak_mib, wall_s


def finished_training_child(config: TrainConfig, run_dir: Path) -> tuple[dict[str, Any], float, float] | None:
    """What :func:`run_training_child` returned for ``config`` in ``run_dir``, if it finished there with exactly
    this config; otherwise None."""
    config_path, result_path, record_path = run_dir / "config.yml", run_dir / "result.json", run_dir / CHILD_RECORD
    if not (config_path.exists() and result_path.exists() and record_path.exists()):
        return None
    if yaml.safe_load(config_path.read_text()) != config.model_dump(mode="json"):
        return None
    record = json.loads(record_path.read_text())
    return json.loads(result_path.read_text()), float(record["peak_rss_mib"]), float(record["wall_s"])


def as_tool_run(name: str, payload: dict[str, Any], peak_mib: float, wall_s: float, choices: str,
                spin_up: int, sequence_level: bool) -> ToolRun:
    """The report's view of one hydroseq child's ``result.json``.

    Samples and steps per epoch come from the epoch's own rates times its duration (the training
    loop logs rates, not counts). Target steps: one per sample in sequence mode; in per-step mode
    every step after the ``spin_up`` of its chunk (an upper bound: missing observations carry no
    loss either, and the bundled basins have none in the training period).
    """
    epochs = []
    for row in payload["history"]:
        seconds = row["epoch_seconds"]
        samples = round(row["samples_per_s"] * seconds)
        valid = round(row["valid_timesteps_per_s"] * seconds)
        targets = samples if sequence_level else valid - samples * spin_up
        epochs.append(EpochPoint(epoch=int(row["epoch"]) + 1, train_s=seconds, samples=samples, valid_steps=valid,
                                 target_steps=targets, validation_s=row.get("val_seconds", float("nan")),
                                 validation_median_nse=row["val_median_nse"]))
    notes = (f"own settings: {choices}",
             f"{payload['train_samples']} training samples of mean length {payload['mean_length']:.0f} steps")
    return ToolRun(name=name, data_loading_s=payload["data_loading_s"], epochs=tuple(epochs), peak_rss_mib=peak_mib,
                   test=TestScores(**payload["test"]), test_epoch=int(payload["best_epoch"]) + 1, wall_s=wall_s,
                   notes=notes)


if __name__ == "__main__":
    raise SystemExit(child_main())
