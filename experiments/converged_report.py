"""The converged head-to-head's records (its settings, each run's checks, the report) and their writing as Markdown,
JSON and a PNG of the validation curves (all atomically)."""

from __future__ import annotations

import dataclasses
import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from benchmarks.files import atomic_path, write_text_atomic
from experiments.environment import Environment
from experiments.measures import TestScores
from experiments.protocol import Protocol
from experiments.report import _num, _table

MARKDOWN_NAME = "converged.md"
RAW_NAME = "converged.json"
PLOT_NAME = "converged_curves.png"
CURVE_ROWS = 10


@dataclass(frozen=True)
class Settings:
    """How the runs are stopped; hydroseq's own patience and epoch cap come from its config."""

    nh_updates_per_check: int = 200
    nh_patience: int = 4
    nh_max_checks: int = 40
    hydroseq_seeds: tuple[int, ...] = (0,)
    nh_seeds: tuple[int, ...] = (0,)
    budget_minutes: float | None = None
    timeout_s: float | None = None
    resume: bool = False
    nh_jobs: int = 1


@dataclass(frozen=True)
class Check:
    """One validation of a run.

    ``elapsed_s`` is data loading plus training plus validation up to and including this check.
    """

    number: int
    updates: int
    elapsed_s: float
    validation_median_nse: float


@dataclass(frozen=True)
class ConvergedRun:
    """One tool's run, trained to its best validation check and tested with those weights."""

    tool: str
    lagged_target: bool
    seed: int
    test: TestScores
    station_nse: dict[str, float]
    beating_persistence: int
    compared_with_persistence: int
    checks: tuple[Check, ...]
    best_check: int
    stopped_by: str | None
    max_checks: int
    patience: int
    wall_s: float
    peak_rss_mib: float
    recipe: str

    @property
    def label(self) -> str:
        """Tool, inputs and seed in a few words."""
        return f"{self.tool}, {'with' if self.lagged_target else 'no'} lagged Q, seed {self.seed}"

    @property
    def best(self) -> Check:
        """The check whose weights were tested."""
        return next(check for check in self.checks if check.number == self.best_check)

    @property
    def stop(self) -> str:
        """Why training ended."""
        last = self.checks[-1].number if self.checks else 0
        if self.stopped_by == "patience":
            return f"patience ({self.patience} checks) after check {last}"
        still_rising = " (best was the last check)" if last == self.best_check else ""
        if self.stopped_by is not None:
            return f"{self.stopped_by} after check {last}{still_rising}"
        return f"cap of {self.max_checks} checks hit{still_rising}"


@dataclass(frozen=True)
class ConvergedReport:
    """Everything ``python -m experiments.converged`` measured."""

    environment: Environment
    protocol: Protocol
    settings: Settings
    runs: list[ConvergedRun]
    baselines: dict[str, TestScores]
    climatology_beating: tuple[int, int] | None
    skipped: list[str]
    notes: list[str]


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def _header(report: ConvergedReport) -> list[str]:
    env, protocol, settings = report.environment, report.protocol, report.settings
    return [
        f"# hydroseq vs NeuralHydrology, trained until validation stops improving or time runs out ({protocol.name})",
        "",
        f"- commit `{env.commit}`, {env.date}",
        f"- CPU: {env.cpu} ({env.logical_cpus} logical CPUs, shared), torch {env.torch}, Python {env.python}",
        f"- threads per tool: {env.threads}; " + (
            "hydroseq's runs one after the other, then the two NeuralHydrology runs at the same time (a core each)"
            if settings.nh_jobs > 1 else "the runs one after the other in this invocation"),
        (f"- {len(protocol.basins)} basins; train {protocol.train.start}..{protocol.train.end}, validation "
         f"{protocol.validation.start}..{protocol.validation.end}, test {protocol.test.start}..{protocol.test.end}"),
        (f"- inputs: {', '.join(protocol.dynamic_inputs)} + {len(protocol.static_inputs)} static attributes; "
         f"target {protocol.target}; LSTM hidden {protocol.hidden_size}, {protocol.seq_length}-day inputs, NSE loss"),
        (f"- NeuralHydrology: a validation every {settings.nh_updates_per_check} updates, stopped after "
         f"{settings.nh_patience} validations without a higher median NSE, at most {settings.nh_max_checks} "
         f"validations ({settings.nh_max_checks * settings.nh_updates_per_check} updates); hydroseq: a validation "
         "every epoch, its config's own patience and epoch cap"),
        (f"- time budget: {settings.budget_minutes:g} min of wall time for all runs; hydroseq runs first, then each "
         "NeuralHydrology run (lagged Q first) gets an even share of what is left"
         + (" over the runs still to start on its core" if settings.nh_jobs > 1 else "")
         + ", less 2 min for its imports, data and test" if settings.budget_minutes else "- no time budget"),
        *(["- resumed: this invocation kept the hydroseq runs and continued the NeuralHydrology runs of an earlier "
           "one from their last checks (the notes say which); wall times and updates include every part"]
          if settings.resume else []),
        "- every run is tested with the weights of its best validation check (the test period never picks it)",
        "",
    ]


def _result_table(report: ConvergedReport) -> list[str]:
    header = ["run", "test median NSE", "test mean NSE", "test median KGE", "test mean KGE", "beats persistence",
              "best check (updates)", "stopped by", "updates in all", "to best check", "whole run"]
    rows = []
    for run in report.runs:
        scores = run.test
        rows.append([run.label, _num(scores.median_nse), _num(scores.mean_nse), _num(scores.median_kge),
                     _num(scores.mean_kge), f"{run.beating_persistence} of {run.compared_with_persistence}",
                     f"{run.best_check} ({run.best.updates:,})", run.stop, f"{run.checks[-1].updates:,}",
                     _minutes(run.best.elapsed_s), _minutes(run.wall_s)])
    for name, scores in report.baselines.items():
        beating = "-"
        if name == "climatology" and report.climatology_beating is not None:
            beating = f"{report.climatology_beating[0]} of {report.climatology_beating[1]}"
        rows.append([f"baseline: {name}", _num(scores.median_nse), _num(scores.mean_nse), _num(scores.median_kge),
                     _num(scores.mean_kge), beating, "-", "-", "-", "-", "-"])
    return ["## Test period", "",
            "NSE and KGE per basin with `hydroseq.scoring.metrics` on each run's own predictions of the same basins "
            "and days; median and mean over the basins. \"to best check\": data loading, training and validation "
            "up to the best check; \"whole run\": the training child from start to end (imports, the checks after "
            "the best one, the test).", "",
            *_table(header, rows), ""]


def seed_rows(runs: list[ConvergedRun]) -> list[list[str]]:
    """One row per tool and input set run with more than one seed: each seed's test median NSE, their mean and
    spread, the mean over seeds of the test mean NSE, the basins beating persistence and the minutes to the best
    check."""
    groups: dict[tuple[str, bool], list[ConvergedRun]] = {}
    for run in runs:
        groups.setdefault((run.tool, run.lagged_target), []).append(run)
    rows = []
    for (tool, lagged), group in groups.items():
        if len(group) < 2:
            continue
        medians = [run.test.median_nse for run in group]
        rows.append([f"{tool}, {'with' if lagged else 'no'} lagged Q", ", ".join(str(run.seed) for run in group),
                     " / ".join(_num(value) for value in medians),
                     f"**{_num(statistics.fmean(medians))}** (spread {_num(max(medians) - min(medians))})",
                     _num(statistics.fmean(run.test.mean_nse for run in group)),
                     " / ".join(str(run.beating_persistence) for run in group),
                     " / ".join(_minutes(run.best.elapsed_s) for run in group)])
    return rows


def _seed_table(report: ConvergedReport) -> list[str]:
    rows = seed_rows(report.runs)
    if not rows:
        return []
    header = ["tool and inputs", "seeds", "test median NSE per seed", "mean over seeds", "mean of test mean NSE",
              "beats persistence per seed", "to best check per seed"]
    return ["## Over seeds", "", *_table(header, rows), ""]


def curve_points(checks: tuple[Check, ...], best: int, rows: int = CURVE_ROWS) -> list[Check]:
    """At most about ``rows`` evenly spread checks, always the first, the best and the last."""
    if len(checks) <= rows:
        return list(checks)
    step = (len(checks) - 1) / (rows - 1)
    keep = {round(i * step) for i in range(rows)} | {len(checks) - 1}
    keep |= {i for i, check in enumerate(checks) if check.number == best}
    return [checks[i] for i in sorted(keep)]


def _curve_table(runs: list[ConvergedRun]) -> list[str]:
    rows = []
    for run in runs:
        for check in curve_points(run.checks, run.best_check):
            nse = _num(check.validation_median_nse)
            rows.append([run.label, str(check.number), f"{check.updates:,}", _num(check.elapsed_s, 0),
                         f"**{nse}**" if check.number == run.best_check else nse])
    return ["## Validation curves", "",
            f"Validation median NSE after a check (at most about {CURVE_ROWS} per run, the best in bold); seconds "
            "of data loading, training and validation so far. Every check is in the JSON file.", "",
            *_table(["run", "check", "updates", "seconds", "validation median NSE"], rows), "",
            f"![validation median NSE against wall time]({PLOT_NAME})", ""]


def _notes(report: ConvergedReport) -> list[str]:
    lines = ["## What each tool sees, and what differs", "", *[f"- {note}" for note in report.notes], "",
             "## Recipes", "", *[f"- {run.label}: {run.recipe}; peak RSS {run.peak_rss_mib:,.0f} MiB"
                                 for run in report.runs], ""]
    if report.skipped:
        lines += ["## Skipped", "", *[f"- {reason}" for reason in report.skipped], ""]
    return lines


def render_markdown(report: ConvergedReport) -> str:
    """The whole report as Markdown."""
    return "\n".join(_header(report) + _result_table(report) + _seed_table(report) + _curve_table(report.runs)
                     + _notes(report))


def plot_curves(runs: list[ConvergedRun], target: Path) -> None:
    """Validation median NSE against wall time, one line per run, the best check marked; written atomically."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7.5, 5.5), dpi=120, layout="constrained")
    axes = figure.subplots()
    for run in runs:
        if not run.checks:
            continue
        line, = axes.plot([c.elapsed_s / 60 for c in run.checks], [c.validation_median_nse for c in run.checks],
                          marker=".", label=run.label)
        axes.plot(run.best.elapsed_s / 60, run.best.validation_median_nse, marker="*", markersize=12,
                  color=line.get_color())
    axes.set_xscale("log")  # hydroseq's runs end in minutes, NeuralHydrology's in tens of minutes
    axes.set_xlabel("data loading + training + validation [min, log scale]")
    axes.set_ylabel("validation median NSE")
    axes.set_title("Validation curves (best check starred)")
    axes.grid(alpha=0.3)
    figure.legend(loc="outside lower center", ncols=2, fontsize="x-small")
    with atomic_path(target) as tmp:
        figure.savefig(tmp, format="png")


def write_converged_report(report: ConvergedReport, out_dir: Path) -> Path:
    """Write ``converged.md``, ``converged.json`` and ``converged_curves.png`` into ``out_dir``; the Markdown's path."""
    markdown = out_dir / MARKDOWN_NAME
    plot_curves(report.runs, out_dir / PLOT_NAME)
    write_text_atomic(out_dir / RAW_NAME, json.dumps(dataclasses.asdict(report), indent=1, default=str))
    write_text_atomic(markdown, render_markdown(report))
    return markdown
