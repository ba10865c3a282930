"""A converged head-to-head: NeuralHydrology and hydroseq, each trained until validation stops improving.

``python -m experiments.converged [--quick] [--work-dir DIR [--resume]] [--nh-jobs 2]``

On one protocol (the 31 bundled basins, the water-year split, P/T/PET + 13 attributes, hidden 64,
365-day inputs, NSE loss, one thread per tool, the tools one after the other), with and without
the observed discharge of the day before as an input:

- hydroseq per-step (``configs/train_caravan_protocol_per_step.yaml``): its own recipe and its
  own early stopping (``training.patience``), validated after every epoch;
- NeuralHydrology 1.13 CudaLSTM (own venv, ``python -m experiments.nh.venv``): validated every
  ``--nh-updates-per-check`` updates (``max_updates_per_epoch``: each "epoch" is that many random
  batches), stopped by the driver after ``--nh-patience`` checks without a higher validation
  median NSE, at most ``--nh-max-checks`` checks, and within its share of ``--budget-minutes``
  (the wall time of all runs; the report says which of the three ended each run).

Each run is tested with the weights of its best validation check. ``--resume`` (with the ``--work-dir`` of an
earlier invocation) keeps the hydroseq runs that finished there with the same config and continues each
NeuralHydrology run that the time budget or the cap stopped from its last check (NeuralHydrology's
``continue_training``), its earlier checks counting towards the patience; ``--nh-jobs 2`` runs the two
NeuralHydrology runs at the same time (one thread each). Writes ``converged.md``,
``converged.json`` and ``converged_curves.png`` to ``experiments/results/`` (``--quick``: two
basins, short periods, a few updates, into a temporary folder; it proves the harness only).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import numpy as np

from experiments.compare import ingest_dataset, nh_interpreter, same_observations
from experiments.converged_report import Check, ConvergedReport, ConvergedRun, Settings, write_converged_report
from experiments.environment import current_environment
from experiments.hydroseq_side import (
    BASE_CONFIGS,
    HydroseqRunError,
    finished_training_child,
    hydroseq_config,
    own_choices,
    run_training_child,
)
from experiments.measures import TestScores, score_series
from experiments.nh.runner import NHResult, NHRunError, collect, run_nh
from experiments.protocol import REPO_ROOT, Protocol, full_protocol, quick_protocol
from hydroseq.scoring import metrics
from hydroseq.scoring.skill import stations_beating

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
RESULTS_DIR = REPO_ROOT / "experiments" / "results"
NH_TOOL = "NeuralHydrology 1.13 CudaLSTM"
HYDROSEQ_TOOL = "hydroseq per-step"


QUICK_SETTINGS = Settings(nh_updates_per_check=2, nh_patience=1, nh_max_checks=3, budget_minutes=None)
# Minutes of a NeuralHydrology run outside training and validation (imports, data, the test), on 1 shared core.
NH_OVERHEAD_MINUTES = 2.0


def converged_protocol(quick: bool, settings: Settings) -> Protocol:
    """The comparison's protocol on one thread, with NeuralHydrology's check cadence and cap and hydroseq's own
    epoch cap (its per-step config's ``training.epochs``, which also sets the length of its cosine schedule).

    The quick one: two basins, 60-day inputs, three checks of two updates each.
    """
    from hydroseq.config import TrainConfig, load_config

    own_epochs = load_config(BASE_CONFIGS["per_step"], TrainConfig).training.epochs
    protocol = dataclasses.replace(
        quick_protocol() if quick else full_protocol(), threads=1, epochs=settings.nh_max_checks,
        max_updates_per_epoch=settings.nh_updates_per_check, per_step_epochs=3 if quick else own_epochs,
        seed=settings.nh_seeds[0], name="quick converged" if quick else "converged")
    if quick:
        protocol = dataclasses.replace(protocol, basins=protocol.basins[:2], seq_length=60)
    return protocol


def hydroseq_run(protocol: Protocol, data_path: Path, work_dir: Path, timeout_s: float | None,
                 reuse: bool = False) -> tuple[ConvergedRun, dict[str, Any]]:
    """Train and test hydroseq per-step with its own recipe on ``protocol``; the run and the child's payload.

    ``reuse``: take the run that finished in ``work_dir`` with the same config instead, if there is one.
    """
    name = f"hydroseq_{'lagged' if protocol.lagged_target else 'simulation'}_seed{protocol.seed}"
    config = hydroseq_config(protocol, "per_step", data_path, work_dir / name, own_batch_size=True)
    finished = finished_training_child(config, work_dir / name / "run") if reuse else None
    payload, peak_mib, wall_s = finished or run_training_child(config, work_dir / name / "run", protocol.threads,
                                                               timeout_s)
    per_epoch = int(payload["updates_per_epoch"])
    checks, elapsed = [], float(payload["data_loading_s"])
    for row in payload["history"]:
        elapsed += row["epoch_seconds"] + row["val_seconds"]
        epoch = int(row["epoch"]) + 1
        checks.append(Check(epoch, epoch * per_epoch, elapsed, row["val_median_nse"]))
    station_nse = payload["station_nse"]
    beating, compared = stations_beating(*_aligned(station_nse["model"], station_nse["persistence"]))
    return ConvergedRun(
        tool=HYDROSEQ_TOOL, lagged_target=protocol.lagged_target, seed=protocol.seed,
        test=TestScores(**payload["test"]), station_nse=station_nse["model"], beating_persistence=beating,
        compared_with_persistence=compared, checks=tuple(checks), best_check=int(payload["best_epoch"]) + 1,
        stopped_by=None if payload["stopped_early_after"] is None else "patience", max_checks=config.training.epochs,
        patience=config.training.patience or 0, wall_s=wall_s, peak_rss_mib=peak_mib,
        recipe=f"{own_choices(config)}, batch {config.batching.batch_size} chunks, {per_epoch} updates per epoch",
    ), payload


def nh_run(protocol: Protocol, settings: Settings, work_dir: Path, python: Path, persistence_nse: dict[str, float],
           max_minutes: float | None = None, files_lock: threading.Lock | None = None) -> tuple[
        ConvergedRun, NHResult]:
    """Train NeuralHydrology with early stopping in its driver, test its best check; the run and NH's result.

    ``max_minutes``: the run's share of the time budget for training and validation. With ``settings.resume``, a
    run that finished in ``work_dir`` on patience is taken as it is and one stopped otherwise is continued.
    ``files_lock``: see :func:`experiments.nh.runner.run_nh`.
    """
    name = f"nh_{'lagged' if protocol.lagged_target else 'simulation'}_seed{protocol.seed}"
    earlier = work_dir / name / "nh_out" / "timings.json"
    timings = json.loads(earlier.read_text()) if settings.resume and earlier.exists() else {}
    if timings.get("stopped_by") == "patience":
        with files_lock or nullcontext():
            result = collect(earlier.parent, timings["maxrss_kib"] / 1024, timings["total_s"], protocol.seq_length)
    else:
        result = run_nh(protocol, work_dir / name, python, settings.timeout_s, patience=settings.nh_patience,
                        max_minutes=max_minutes, resume=earlier.exists() and settings.resume, files_lock=files_lock)
    per_check = int(result.updates_per_epoch or settings.nh_updates_per_check)
    checks, elapsed = [], result.data_loading_s
    for epoch in result.epochs:
        elapsed += epoch.train_s + epoch.validation_s
        checks.append(Check(epoch.epoch, epoch.epoch * per_check, elapsed, epoch.validation_median_nse))
    predictions = result.test_predictions
    basins = [str(basin) for basin in predictions["basin"].to_numpy()]
    obs, sim = predictions["obs"].to_numpy(), predictions["sim"].to_numpy()
    station_nse = {basin: metrics.nse(o, s) for basin, o, s in zip(basins, obs, sim, strict=True)}
    beating, compared = stations_beating(*_aligned(station_nse, persistence_nse))
    recipe = (f"batch {protocol.batch_size} one-day samples, Adam lr {protocol.learning_rate:g} constant, "
              f"no dropout, gradient clip 1, a check every {per_check} random batches")
    return ConvergedRun(
        tool=NH_TOOL, lagged_target=protocol.lagged_target, seed=protocol.seed, test=score_series(obs, sim),
        station_nse=station_nse, beating_persistence=beating, compared_with_persistence=compared,
        checks=tuple(checks), best_check=result.test_epoch,
        stopped_by=None if result.stopped_by is None else (
            "patience" if result.stopped_by == "patience" else f"time budget ({max_minutes:.0f} min)"),
        max_checks=protocol.epochs, patience=settings.nh_patience, wall_s=result.wall_s,
        peak_rss_mib=result.peak_rss_mib, recipe=recipe,
    ), result


def _aligned(model: dict[str, float], reference: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """The two per-basin scores on the basins of ``model``, in its order (NaN where ``reference`` has none)."""
    basins = list(model)
    return (np.array([model[b] for b in basins], dtype=np.float64),
            np.array([reference.get(b, np.nan) for b in basins], dtype=np.float64))


def information_notes(protocol: Protocol) -> list[str]:
    """What each tool sees for a target day, and what still differs."""
    return [
        "without lagged Q both tools simulate Q(d) from P, T, PET up to day d and the attributes. NeuralHydrology "
        f"reads exactly the {protocol.seq_length} days ending on d; hydroseq per-step predicts d from an LSTM state "
        f"started {protocol.seq_length // 2 + 1}-{protocol.seq_length} days before (its evaluation windows "
        f"overlap by half), trained on {protocol.seq_length}-day chunks whose first 30 days carry no loss",
        "with lagged Q both tools predict Q(d) from P, T, PET and observed Q up to day d - 1: hydroseq as its lead-1 "
        "forecast issued on d - 1 (`data.lagged_target: true`, `leads: [1]`), NeuralHydrology with every dynamic "
        "input and the discharge shifted by one day (`lagged_features: {name: 1}`, inputs `<name>_shift1`). "
        "Remaining difference: hydroseq also reads an \"observed\" flag beside lagged Q; it is 1 on every day here "
        "(the 31 basins have no missing discharge from 1981 to 2014)",
        "persistence is Q(d - 1) for Q(d) and climatology the training-period day-of-year mean; both as "
        "`hydroseq evaluate` computes them on the same test days; \"beats persistence\" compares per-basin NSE",
        "each tool keeps its own optimisation recipe (batch size, learning rate, dropout, validation cadence, "
        "patience); the recipe of every run is listed below",
    ]


def run_converged(protocol: Protocol, settings: Settings, work_dir: Path, out_dir: Path,
                  nh_python: Path | None, skipped: list[str]) -> ConvergedReport:
    """All runs, one after the other; writes and returns the report.

    hydroseq first (a few minutes each), then NeuralHydrology with lagged Q, then without: each
    NeuralHydrology run gets an even share of what is left of ``settings.budget_minutes`` (so the
    time a run that stops early leaves goes to the next one).
    """
    deadline = None if settings.budget_minutes is None else time.monotonic() + settings.budget_minutes * 60
    data_path, _ = ingest_dataset(work_dir)
    runs: list[ConvergedRun] = []
    notes = information_notes(protocol)
    baselines: dict[str, TestScores] = {}
    baseline_nse: dict[str, dict[str, float]] = {}
    for lagged in (False, True):
        for seed in settings.hydroseq_seeds:
            variant = dataclasses.replace(protocol, lagged_target=lagged, seed=seed)
            try:
                run, payload = hydroseq_run(variant, data_path, work_dir, settings.timeout_s, reuse=settings.resume)
            except HydroseqRunError as error:
                skipped.append(f"{HYDROSEQ_TOOL} (lagged Q {lagged}, seed {seed}) failed: {error}")
                continue
            runs.append(run)
            if not baselines:
                baselines = {name: TestScores(**values) for name, values in payload["baselines"].items()}
                baseline_nse = {name: payload["station_nse"][name] for name in baselines}
    if nh_python is not None:
        persistence = baseline_nse.get("persistence", {})
        files_lock = threading.Lock()

        def one_nh_run(variant: Protocol, runs_left: int) -> tuple[ConvergedRun, NHResult] | str:
            share = None if deadline is None else (deadline - time.monotonic()) / 60 / runs_left - NH_OVERHEAD_MINUTES
            try:
                return nh_run(variant, settings, work_dir, nh_python, persistence, max_minutes=share,
                              files_lock=files_lock)
            except NHRunError as error:
                return f"{NH_TOOL} (lagged Q {variant.lagged_target}, seed {variant.seed}) failed: {error}"

        variants = [dataclasses.replace(protocol, lagged_target=lagged, seed=seed)
                    for seed in settings.nh_seeds for lagged in (True, False)]
        # a run's share of the budget: what is left, over the runs still to start on its worker
        lefts = [(len(variants) - index + settings.nh_jobs - 1) // settings.nh_jobs for index in range(len(variants))]
        with ThreadPoolExecutor(max_workers=settings.nh_jobs) as pool:
            outcomes = list(pool.map(one_nh_run, variants, lefts))
        for outcome in outcomes:
            if isinstance(outcome, str):
                skipped.append(outcome)
                continue
            run, result = outcome
            runs.append(run)
            notes.append(f"{run.label}: {same_observations(result, data_path, protocol)}")
            if result.resumed_after:
                checks = ", ".join(map(str, result.resumed_after))
                notes.append(f"{run.label}: continued from its saved check(s) {checks} with NeuralHydrology's "
                             "`continue_training` (model and optimizer state restored, batches drawn anew from the "
                             "seed); wall time and updates include every part")
    climatology_beating = None
    if baseline_nse:
        climatology_beating = stations_beating(*_aligned(baseline_nse["climatology"], baseline_nse["persistence"]))
    report = ConvergedReport(environment=current_environment(protocol.threads), protocol=protocol, settings=settings,
                             runs=runs, baselines=baselines, climatology_beating=climatology_beating, skipped=skipped,
                             notes=notes)
    write_converged_report(report, out_dir)
    return report


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m experiments.converged", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two basins, a few updates, into a temporary folder")
    parser.add_argument("--out", type=Path, default=None,
                        help="report folder (default: experiments/results, or a temporary folder with --quick)")
    parser.add_argument("--work-dir", type=Path, default=None, help="scratch folder (default: a temporary folder)")
    parser.add_argument("--nh", choices=["auto", "skip", "setup"], default="auto",
                        help="NeuralHydrology: auto = use its venv (created on a full run only), setup = create it "
                             "if missing, skip = hydroseq only")
    parser.add_argument("--nh-updates-per-check", type=int, default=None, help="NH updates between validations")
    parser.add_argument("--nh-patience", type=int, default=None, help="NH checks without improvement before stopping")
    parser.add_argument("--nh-max-checks", type=int, default=None, help="NH cap on validations (updates: x cadence)")
    parser.add_argument("--hydroseq-seeds", default=None, help="comma-separated seeds of the hydroseq runs (default 0)")
    parser.add_argument("--nh-seeds", default=None, help="comma-separated NeuralHydrology seeds (default 0)")
    parser.add_argument("--budget-minutes", type=float, default=None,
                        help="wall time for all runs; NeuralHydrology's runs share what hydroseq's leave (default and "
                             "0: no budget)")
    parser.add_argument("--timeout", type=float, default=None, help="seconds allowed per training child")
    parser.add_argument("--resume", action="store_true",
                        help="with --work-dir of an earlier invocation: keep its finished hydroseq runs and continue "
                             "its NeuralHydrology runs that did not stop on patience")
    parser.add_argument("--nh-jobs", type=int, choices=[1, 2], default=None,
                        help="NeuralHydrology runs at the same time (default 1: one after the other)")
    return parser.parse_args(argv)


def settings_from(args: argparse.Namespace) -> Settings:
    """The quick or full settings with the command line's changes."""
    settings = QUICK_SETTINGS if args.quick else Settings()
    changes: dict[str, Any] = {"timeout_s": args.timeout, "resume": args.resume}
    for name in ("nh_updates_per_check", "nh_patience", "nh_max_checks", "nh_jobs"):
        if getattr(args, name) is not None:
            changes[name] = getattr(args, name)
    if args.budget_minutes is not None:
        changes["budget_minutes"] = args.budget_minutes or None
    for name in ("hydroseq_seeds", "nh_seeds"):
        if getattr(args, name):
            changes[name] = tuple(int(seed) for seed in getattr(args, name).split(","))
    return dataclasses.replace(settings, **changes)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point; see the module docstring."""
    args = _parse_args(argv)
    if args.resume and args.work_dir is None:
        print("python -m experiments.converged: --resume needs the --work-dir of the run to continue", file=sys.stderr)
        return 2
    settings = settings_from(args)
    protocol = converged_protocol(args.quick, settings)
    nh_python, reason = nh_interpreter(args.nh, args.quick)
    scratch = Path(tempfile.mkdtemp(prefix="hydroseq-converged-"))
    work_dir = args.work_dir or scratch / "work"
    out_dir = args.out or (scratch / "results" if args.quick else RESULTS_DIR)
    work_dir.mkdir(parents=True, exist_ok=True)
    report = run_converged(protocol, settings, work_dir, out_dir, nh_python, [reason] if reason else [])
    for run in report.runs:
        print(f"{run.label}: test median NSE {run.test.median_nse:.3f}, best check {run.best_check} "
              f"({run.best.updates} updates), {run.stop}")
    for reason in report.skipped:
        print(f"skipped: {reason}")
    print(f"report: {out_dir / 'converged.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
