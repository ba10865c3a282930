"""Write the comparison as a Markdown table and a PNG time-to-accuracy plot (both atomically)."""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.files import atomic_path, write_text_atomic
from experiments.environment import Environment
from experiments.measures import OverheadRun, PaddingRun, TestScores, ToolRun
from experiments.profile_step import StepProfile
from experiments.protocol import Protocol
from experiments.targets import TargetCheck

MARKDOWN_NAME = "comparison.md"
PLOT_NAME = "time_to_accuracy.png"
RAW_NAME = "comparison.json"


@dataclass(frozen=True)
class BenchmarkReport:
    """All measurements of one ``python -m experiments.compare`` invocation."""

    environment: Environment
    protocol: Protocol
    runs: list[ToolRun]
    baselines: dict[str, TestScores] = field(default_factory=dict)
    padding: list[PaddingRun] = field(default_factory=list)
    overhead: list[OverheadRun] = field(default_factory=list)
    targets: list[TargetCheck] = field(default_factory=list)
    profiles: list[StepProfile] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _num(value: float, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, float) and math.isinf(value):
        return "never"
    return f"{value:,.{digits}f}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def _header(report: BenchmarkReport) -> list[str]:
    env, protocol = report.environment, report.protocol
    return [
        f"# hydroseq vs NeuralHydrology ({protocol.name} run)", "",
        f"- commit `{env.commit}`, {env.date}",
        f"- CPU: {env.cpu} ({env.logical_cpus} logical CPUs), torch {env.torch}, Python {env.python}",
        f"- threads per tool: {env.threads}; tools run one after the other in this invocation",
        (f"- {len(protocol.basins)} basins; train {protocol.train.start}..{protocol.train.end}, validation "
         f"{protocol.validation.start}..{protocol.validation.end}, test {protocol.test.start}..{protocol.test.end}"),
        (f"- inputs: {', '.join(protocol.dynamic_inputs)} + {len(protocol.static_inputs)} static attributes; "
         f"target {protocol.target}; hidden {protocol.hidden_size}, batch {protocol.batch_size}, NSE loss, "
         f"NH lr {protocol.learning_rate:g}; {protocol.epochs} epoch(s) for NH and hydroseq sequence"
         + (f" (at most {protocol.max_updates_per_epoch} updates each)" if protocol.max_updates_per_epoch else "")
         + f", {protocol.per_step_epochs} for hydroseq per-step"),
        f"- basins: {', '.join(protocol.basins)}",
        "",
    ]


def _speed_table(runs: list[ToolRun]) -> list[str]:
    header = ["tool", "data loading s", "s/epoch (median / min)", "samples/s", "valid steps/s",
              "target steps/s", "peak RSS MiB", "best val median NSE", "test epoch"]
    rows = [[run.name, _num(run.data_loading_s, 1),
             f"{_num(run.seconds_per_epoch, 1)} / {_num(run.min_seconds_per_epoch, 1)}",
             _num(run.samples_per_s, 0), _num(run.valid_steps_per_s, 0), _num(run.target_steps_per_s, 0),
             _num(run.peak_rss_mib, 0), _num(run.best_validation_nse()), str(run.test_epoch)] for run in runs]
    return ["## Speed and memory", "", *_table(header, rows), ""]


def _accuracy_table(runs: list[ToolRun], baselines: dict[str, TestScores]) -> list[str]:
    header = ["model", "test median NSE", "test mean NSE", "test median KGE", "test mean KGE", "basins"]
    scored = [(run.name, run.test) for run in runs] + [(f"baseline: {name}", s) for name, s in baselines.items()]
    rows = [[name, _num(s.median_nse), _num(s.mean_nse), _num(s.median_kge), _num(s.mean_kge), str(s.n_basins)]
            for name, s in scored]
    return ["## Test-period accuracy", "",
            "Every model is scored with `hydroseq.scoring.metrics` on its own predictions of the same basins"
            " and days.", "",
            *_table(header, rows), ""]


def _curve_table(runs: list[ToolRun]) -> list[str]:
    rows = [[run.name, str(point.epoch), _num(seconds, 1), _num(nse)]
            for run in runs for point, (seconds, nse) in zip(run.epochs, run.time_to_accuracy(), strict=True)]
    return ["## Time to accuracy", "",
            "Cumulative seconds of data loading plus training (validation excluded) after each epoch.", "",
            *_table(["tool", "epoch", "cumulative s", "validation median NSE"], rows), "",
            f"![validation median NSE against wall time]({PLOT_NAME})", ""]


def _padding_table(padding: list[PaddingRun]) -> list[str]:
    if not padding:
        return []
    fastest = max(run.best_valid_steps_per_s for run in padding)
    rows = [[run.strategy, _num(run.best_valid_steps_per_s, 0), _num(run.median_valid_steps_per_s, 0),
             f"{run.padding_fraction:.1%}", _num(run.best_valid_steps_per_s / fastest, 2)] for run in padding]
    header = ["batches", "valid steps/s (best)", "valid steps/s (median)", "padding", "relative to fastest"]
    return ["## Padding strategies (hydroseq, same samples)", "", *_table(header, rows), ""]


def _overhead_table(overhead: list[OverheadRun]) -> list[str]:
    if not overhead:
        return []
    rows = [[run.mode, str(run.batches), _num(min(run.full_s), 2), _num(min(run.bare_s), 2),
             f"{run.overhead_fraction:.1%}"] for run in overhead]
    header = ["mode", "batches", "full steps s (min)", "bare LSTM fwd/bwd s (min)", "overhead (medians)"]
    return ["## hydroseq pipeline overhead", "", *_table(header, rows), ""]


def _profile_tables(profiles: list[StepProfile]) -> list[str]:
    lines = []
    for step in profiles:
        rows = [[f"`{row.name}`", _num(row.self_ms, 1), f"{row.share:.1%}"] for row in step.rows]
        lines += [(f"## Step profile: hydroseq {step.mode} ({step.batches} batches, torch.profiler, "
                   f"{step.total_ms:,.0f} ms self CPU in all)"), "",
                  *_table(["operator", "self CPU ms", "share"], rows), ""]
    return lines


def _targets(report: BenchmarkReport) -> list[str]:
    rows = [[check.target, check.measured, check.status] for check in report.targets]
    lines = ["## Targets", "", *_table(["target", "measured", "status"], rows), ""] if rows else []
    if report.skipped:
        lines += ["## Skipped", "", *[f"- {reason}" for reason in report.skipped], ""]
    notes = report.notes + [f"{run.name}: {note}" for run in report.runs for note in run.notes]
    if notes:
        lines += ["## Notes", "", *[f"- {note}" for note in notes], ""]
    return lines


def render_markdown(report: BenchmarkReport) -> str:
    """The whole report as Markdown."""
    lines = (_header(report) + _speed_table(report.runs) + _accuracy_table(report.runs, report.baselines)
             + _curve_table(report.runs) + _padding_table(report.padding) + _overhead_table(report.overhead)
             + _profile_tables(report.profiles) + _targets(report))
    return "\n".join(lines)


def plot_time_to_accuracy(runs: list[ToolRun], target: Path) -> None:
    """Validation median NSE against cumulative wall time, one line per tool, written atomically."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 4.5), dpi=120)
    axes = figure.subplots()
    for run in runs:
        curve = run.time_to_accuracy()
        if curve:
            seconds, nse = zip(*curve, strict=True)
            axes.plot(seconds, nse, marker="o", label=run.name)
    axes.set_xscale("log")  # the tools differ by orders of magnitude
    axes.set_xlabel("data loading + training wall time [s, log scale]")
    axes.set_ylabel("validation median NSE")
    axes.set_title("Time to accuracy (same basins, split, threads)")
    axes.grid(alpha=0.3)
    axes.legend(loc="lower right")
    figure.tight_layout()
    with atomic_path(target) as tmp:
        figure.savefig(tmp, format="png")


def write_report(report: BenchmarkReport, out_dir: Path) -> tuple[Path, Path]:
    """Write ``comparison.md``, ``time_to_accuracy.png`` and the raw ``comparison.json`` into ``out_dir``.

    Returns the Markdown and PNG paths.
    """
    markdown, plot = out_dir / MARKDOWN_NAME, out_dir / PLOT_NAME
    plot_time_to_accuracy(report.runs, plot)
    write_text_atomic(markdown, render_markdown(report))
    raw = json.dumps(dataclasses.asdict(report), indent=1, default=str)
    write_text_atomic(out_dir / RAW_NAME, raw)
    return markdown, plot
