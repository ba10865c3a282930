"""The issue's targets, checked against one run's measurements."""

from __future__ import annotations

import math
from dataclasses import dataclass

from experiments.measures import OverheadRun, PaddingRun, ToolRun

TIME_TO_ACCURACY_RATIO = 1 / 5
OVERHEAD_LIMIT = 0.10
PADDING_LIMIT = 0.10


@dataclass(frozen=True)
class TargetCheck:
    """One target: what it asks, the measured value, and whether it is met (None: not measured)."""

    target: str
    measured: str
    met: bool | None

    @property
    def status(self) -> str:
        """``met``, ``MISSED`` or ``not measured``."""
        return "not measured" if self.met is None else ("met" if self.met else "MISSED")


def time_to_accuracy(hydroseq: ToolRun, reference: ToolRun) -> TargetCheck:
    """hydroseq reaches the reference's best validation median NSE in at most 1/5 of the reference's time."""
    goal = reference.best_validation_nse()
    target = f"{hydroseq.name}: reach {reference.name}'s best validation median NSE in <= 1/5 of its time"
    if not math.isfinite(goal):
        return TargetCheck(target, "reference has no finite validation NSE", None)
    reference_s = reference.seconds_to_reach(goal)
    own_s = hydroseq.seconds_to_reach(goal)
    if math.isinf(own_s):
        measured = (f"never reached {goal:.3f} (best {hydroseq.best_validation_nse():.3f}); "
                    f"reference took {reference_s:.0f} s")
        return TargetCheck(target, measured, False)
    ratio = own_s / reference_s
    steady = steady_seconds_to_reach(hydroseq, goal) / steady_seconds_to_reach(reference, goal)
    return TargetCheck(target, f"{own_s:.0f} s vs {reference_s:.0f} s (ratio {ratio:.2f}; {steady:.2f} with every "
                               f"epoch at its run's median epoch time)", ratio <= TIME_TO_ACCURACY_RATIO)


def steady_seconds_to_reach(run: ToolRun, level: float) -> float:
    """Data loading plus (epochs needed to reach ``level``) x the run's median epoch time.

    On a shared machine one epoch can take many times the others (another job took the cores);
    this estimate shows the ratio without such outliers. The target itself uses the real clock.
    """
    for point, (_, nse) in zip(run.epochs, run.time_to_accuracy(), strict=True):
        if math.isfinite(nse) and nse >= level:
            return run.data_loading_s + point.epoch * run.seconds_per_epoch
    return math.inf


def accuracy_check(hydroseq: ToolRun, reference: ToolRun) -> TargetCheck:
    """hydroseq's test median NSE is at least the reference's."""
    target = f"{hydroseq.name}: test median NSE >= {reference.name}'s"
    measured = f"{hydroseq.test.median_nse:.3f} vs {reference.test.median_nse:.3f}"
    return TargetCheck(target, measured, hydroseq.test.median_nse >= reference.test.median_nse)


def pipeline_overhead(run: OverheadRun) -> TargetCheck:
    """Time outside the bare LSTM forward/backward is at most 10% of a training step."""
    fraction = run.overhead_fraction
    return TargetCheck(f"hydroseq {run.mode}: pipeline overhead <= {OVERHEAD_LIMIT:.0%} of step time",
                       f"{fraction:.1%}", fraction <= OVERHEAD_LIMIT)


def bucket_padding(run: PaddingRun) -> TargetCheck:
    """Padded slots are at most 10% of the bucketed batches."""
    fraction = run.padding_fraction
    return TargetCheck(f"bucketed batches: padding <= {PADDING_LIMIT:.0%}", f"{fraction:.1%}",
                       fraction <= PADDING_LIMIT)


def check_all(runs: list[ToolRun], reference_name: str, overhead: list[OverheadRun],
              padding: list[PaddingRun]) -> list[TargetCheck]:
    """Every target that the measurements allow to check."""
    reference = next((run for run in runs if run.name == reference_name), None)
    checks: list[TargetCheck] = []
    for run in runs:
        if reference is not None and run is not reference:
            checks += [time_to_accuracy(run, reference), accuracy_check(run, reference)]
    if reference is None:
        checks.append(TargetCheck(f"comparison with {reference_name}", "its run was skipped", None))
    checks += [pipeline_overhead(run) for run in overhead]
    checks += [bucket_padding(run) for run in padding if run.strategy.startswith("bucket")]
    return checks
