"""Side-by-side benchmark: NeuralHydrology vs hydroseq (per-step, sequence, sequence bf16), one command.

``python -m experiments.compare [--quick]`` (``make bench`` runs the full one)

In one invocation and with the same thread count, one after the other: NeuralHydrology's CudaLSTM
(own venv, child process), hydroseq per-step, sequence and sequence with bf16 autocast (child
processes), then the in-process step benchmarks (naive padding vs length buckets vs the packed
path, and hydroseq's pipeline overhead). Writes ``comparison.md`` and ``time_to_accuracy.png`` and prints a summary.

The full run writes to ``experiments/results/``; ``--quick`` (three basins, short periods, one
epoch: proves the harness, measures nothing worth keeping) writes to a temporary folder.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from experiments.environment import current_environment
from experiments.hydroseq_side import BENCHMARK_MODES, HydroseqRunError, hydroseq_config, run_hydroseq
from experiments.measures import OverheadRun, PaddingRun, TestScores, ToolRun
from experiments.nh import venv as nh_venv
from experiments.nh.runner import NHResult, NHRunError, as_tool_run, run_nh
from experiments.profile_step import StepProfile, profile_steps
from experiments.protocol import REPO_ROOT, Protocol, full_protocol, quick_protocol
from experiments.report import BenchmarkReport, write_report
from experiments.targets import check_all

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
NH_NAME = "NeuralHydrology CudaLSTM"
RESULTS_DIR = REPO_ROOT / "experiments" / "results"
INGEST_CONFIG = REPO_ROOT / "configs" / "ingest_caravan_daily.yaml"


@dataclasses.dataclass(frozen=True)
class StepSizes:
    """How much the in-process step benchmarks time."""

    padding_batches: int
    overhead_batches: int
    repeats: int
    max_batch_samples: int | None = None
    packed_batch_samples: int | None = None


QUICK_STEPS = StepSizes(padding_batches=1, overhead_batches=1, repeats=1, max_batch_samples=32, packed_batch_samples=32)
# The packed path runs on a 64-sample batch: its CPU backward does about 1,000 steps/s, and a full
# 256-sample batch would take minutes per repeat.
FULL_STEPS = StepSizes(padding_batches=4, overhead_batches=4, repeats=3, packed_batch_samples=64)


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m experiments.compare", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="CI-sized run (3 basins, 1 epoch) into a temp folder")
    parser.add_argument("--out", type=Path, default=None, help="report folder (default: experiments/results, "
                                                                "or a temp folder with --quick)")
    parser.add_argument("--work-dir", type=Path, default=None, help="scratch folder (default: a temp folder)")
    parser.add_argument("--nh", choices=["auto", "skip", "setup"], default="auto",
                        help="NeuralHydrology half: auto = use its venv, creating it on a full run only; "
                             "setup = create it if missing; skip = hydroseq only")
    parser.add_argument("--threads", type=int, default=None, help="torch threads for every tool (default: all cores)")
    parser.add_argument("--modes", default="per_step,sequence,sequence_bf16", help="hydroseq modes to train, of "
                        f"{', '.join(BENCHMARK_MODES)}")
    parser.add_argument("--epochs", type=int, default=None, help="epochs of NeuralHydrology and hydroseq sequence")
    parser.add_argument("--per-step-epochs", type=int, default=None, help="epochs of hydroseq per-step")
    parser.add_argument("--max-basins", type=int, default=None,
                        help="use this many basins, evenly spread over the bundled list (default: all)")
    parser.add_argument("--updates-per-epoch", type=int, default=None,
                        help="cap on updates per epoch of the one-sample-per-day tools (0: whole epochs)")
    parser.add_argument("--timeout", type=float, default=None, help="seconds allowed per training child")
    return parser.parse_args(argv)


def with_overrides(protocol: Protocol, args: argparse.Namespace) -> Protocol:
    """The protocol with the command line's thread, epoch and update settings applied."""
    changes: dict[str, int | None] = {}
    if args.threads:
        changes["threads"] = args.threads
    if args.epochs:
        changes["epochs"] = args.epochs
    if args.per_step_epochs:
        changes["per_step_epochs"] = args.per_step_epochs
    if args.updates_per_epoch is not None:
        changes["max_updates_per_epoch"] = args.updates_per_epoch or None
    protocol = dataclasses.replace(protocol, **changes)
    return protocol.with_basins(spread(protocol.basins, args.max_basins)) if args.max_basins else protocol


def spread(basins: tuple[str, ...], count: int) -> tuple[str, ...]:
    """``count`` basins evenly spaced over ``basins`` (ordered by id, so across HUC regions)."""
    if count >= len(basins):
        return basins
    return tuple(basins[round(i * (len(basins) - 1) / max(count - 1, 1))] for i in range(count))


def nh_interpreter(choice: str, quick: bool, venv: Path = nh_venv.DEFAULT_VENV) -> tuple[Path | None, str | None]:
    """NeuralHydrology's python, or ``None`` and the reason the NH half is skipped."""
    if choice == "skip":
        return None, "NeuralHydrology skipped on request (--nh skip)"
    if nh_venv.is_ready(venv):
        return nh_venv.venv_python(venv), None
    if quick and choice == "auto":
        return None, ("NeuralHydrology skipped: its venv (experiments/.nh-venv) does not exist and creating it takes "
                      "1-1.5 minutes on 2 cores; run `python -m experiments.nh.venv` or pass --nh setup")
    return nh_venv.create_nh_venv(venv), None


def ingest_dataset(work_dir: Path) -> tuple[Path, float]:
    """The bundled Caravan basins ingested by hydroseq into ``work_dir``; (path, seconds)."""
    from hydroseq.config import IngestConfig, load_config
    from hydroseq.ingest import ingest

    out = work_dir / "caravan_daily.nc"
    start = time.perf_counter()
    ingest(load_config(INGEST_CONFIG, IngestConfig), out, show_progress=False)
    return out, time.perf_counter() - start


def same_observations(nh: NHResult, data_path: Path, protocol: Protocol) -> str:
    """Whether NeuralHydrology's test observations equal hydroseq's ingested streamflow, day by day."""
    from hydroseq.dataset import load_station_data

    config = hydroseq_config(protocol, "per_step", data_path, data_path.parent).data
    station_data = load_station_data(data_path, config)
    in_test = station_data.grid.period_mask(station_data.times, config.splits.test)
    ours = station_data.target[:, in_test].astype(np.float64)
    theirs = nh.test_predictions["obs"].sel(basin=list(station_data.station_ids)).to_numpy()
    if ours.shape != theirs.shape:
        return f"test observations differ in shape: hydroseq {ours.shape}, NeuralHydrology {theirs.shape}"
    equal = np.allclose(ours, theirs, atol=1e-4, equal_nan=True)
    return ("both tools score the same test observations (every basin and day equal)" if equal
            else "WARNING: the tools' test observations differ: the day alignment is not the same")


def step_benchmarks(protocol: Protocol, data_path: Path, work_dir: Path, modes: list[str],
                    sizes: StepSizes) -> tuple[list[PaddingRun], list[OverheadRun], list[StepProfile]]:
    """Padding strategies (sequence mode, else the first mode), pipeline overhead and a profile (every mode)."""
    import torch

    from experiments.overhead import measure_overhead
    from experiments.padding import measure_padding
    from hydroseq.training.data import load_training_data

    torch.set_num_threads(protocol.threads)
    padding, overhead, profiles = [], [], []
    training_modes = list(dict.fromkeys(BENCHMARK_MODES[mode].training_mode for mode in modes))
    padding_mode = "sequence" if "sequence" in training_modes else training_modes[0]
    for mode in training_modes:  # float32 steps, once per training mode
        config = hydroseq_config(protocol, mode, data_path, work_dir / "steps")
        data = load_training_data(config)
        if mode == padding_mode:
            padding = measure_padding(config, data.train_set, data.station_std, sizes.padding_batches, sizes.repeats,
                                      max_batch_samples=sizes.max_batch_samples,
                                      packed_batch_samples=sizes.packed_batch_samples)
        overhead.append(measure_overhead(config, data.train_set, data.station_std, sizes.overhead_batches,
                                         sizes.repeats))
        profiles.append(profile_steps(config, data.train_set, data.station_std, min(sizes.overhead_batches, 2)))
    return padding, overhead, profiles


def print_summary(report: BenchmarkReport, markdown: Path) -> None:
    """A rich table of the headline numbers."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"benchmark ({report.protocol.name}), threads {report.environment.threads}")
    for column in ("tool", "load s", "s/epoch", "valid steps/s", "peak MiB", "best val NSE", "test median NSE"):
        table.add_column(column, justify="left" if column == "tool" else "right")
    for run in report.runs:
        table.add_row(run.name, f"{run.data_loading_s:.1f}", f"{run.seconds_per_epoch:.1f}",
                      f"{run.valid_steps_per_s:,.0f}", f"{run.peak_rss_mib:,.0f}",
                      f"{run.best_validation_nse():.3f}", f"{run.test.median_nse:.3f}")
    console = Console()
    console.print(table)
    for check in report.targets:
        console.print(f"[{'green' if check.met else 'red'}]{check.status}[/]: {check.target}: {check.measured}")
    for reason in report.skipped:
        console.print(f"[yellow]skipped[/]: {reason}")
    console.print(f"report: {markdown}")


def run_comparison(protocol: Protocol, work_dir: Path, out_dir: Path, nh_python: Path | None, modes: list[str],
                   sizes: StepSizes, skipped: list[str], timeout_s: float | None = None) -> BenchmarkReport:
    """Run every tool one after the other and write the report; returns it."""
    runs: list[ToolRun] = []
    notes: list[str] = []
    nh_result = None
    if nh_python is not None:
        try:
            nh_result = run_nh(protocol, work_dir, nh_python, timeout_s)
            runs.append(as_tool_run(nh_result))
        except NHRunError as error:
            skipped.append(f"NeuralHydrology failed: {error}")
    data_path, ingest_s = ingest_dataset(work_dir)
    notes.append(f"hydroseq ingest of the raw CSVs: {ingest_s:.1f} s (once; not counted as data loading)")
    if nh_result is not None:
        notes.append(same_observations(nh_result, data_path, protocol))
    baselines: dict[str, TestScores] = {}
    for mode in modes:
        try:
            run, mode_baselines = run_hydroseq(protocol, mode, data_path, work_dir, timeout_s)
        except HydroseqRunError as error:
            skipped.append(f"hydroseq {mode} failed: {error}")
            continue
        runs.append(run)
        baselines = baselines or mode_baselines
    padding, overhead, profiles = step_benchmarks(protocol, data_path, work_dir, modes, sizes)
    report = BenchmarkReport(environment=current_environment(protocol.threads), protocol=protocol, runs=runs,
                             baselines=baselines, padding=padding, overhead=overhead, profiles=profiles,
                             targets=check_all(runs, NH_NAME, overhead, padding), skipped=skipped, notes=notes)
    markdown, _ = write_report(report, out_dir)
    print_summary(report, markdown)
    return report


def main(argv: list[str] | None = None) -> int:
    """Command line entry point; see the module docstring."""
    args = _parse_args(argv)
    protocol = quick_protocol() if args.quick else full_protocol()
    protocol = with_overrides(protocol, args)
    modes = [mode.strip() for mode in args.modes.split(",") if mode.strip()]
    unknown = sorted(set(modes) - set(BENCHMARK_MODES))
    if unknown:
        raise SystemExit(f"--modes: unknown mode(s) {', '.join(unknown)}; choose from {', '.join(BENCHMARK_MODES)}")
    nh_python, reason = nh_interpreter(args.nh, args.quick)
    skipped = [reason] if reason else []
    scratch = Path(tempfile.mkdtemp(prefix="hydroseq-bench-"))  # kept: the quick report is read from it
    work_dir = args.work_dir or scratch / "work"
    out_dir = args.out or (scratch / "results" if args.quick else RESULTS_DIR)
    work_dir.mkdir(parents=True, exist_ok=True)
    run_comparison(protocol, work_dir, out_dir, nh_python, modes, QUICK_STEPS if args.quick else FULL_STEPS,
                   skipped, args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
