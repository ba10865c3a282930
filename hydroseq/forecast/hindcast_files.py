"""A hindcast's score files: the scores and signature tables and figures beside the forecast files (matplotlib).

Imported by :func:`hydroseq.forecast.outputs.publish_forecast` for a hindcast only, so a forecast
for one issue time never loads the plotting stack.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from hydroseq.fileio import atomic_path
from hydroseq.fileio.output_set import StagedSet
from hydroseq.forecast.hindcast import HindcastScores, score_hindcast, write_scores_csv
from hydroseq.forecast.plots import issue_text, plot_hindcast, plot_plume
from hydroseq.forecast.result import ForecastResult, lead_text
from hydroseq.scoring.probabilistic_scores import RELIABILITY_LEVEL, ProbabilisticScores
from hydroseq.scoring.verification_plots import plot_pit_histogram, plot_reliability_diagram


def write_hindcast_files(staged: StagedSet, result: ForecastResult, target: Path, observed: np.ndarray,
                         baselines: dict[str, np.ndarray] | None, distribution_scores: list[ProbabilisticScores] | None,
                         signatures: pd.DataFrame | None = None) -> tuple[HindcastScores, tuple[Path, ...]]:
    """Score ``result`` against ``observed`` beside ``baselines`` and stage the score files of ``target``.

    ``signatures`` (:func:`hydroseq.forecast.hindcast.hindcast_signatures`) go to ``<stem>_signatures.csv``.
    """
    scores_csv = target.with_name(f"{target.stem}_scores.csv")
    scores_png = target.with_name(f"{target.stem}_scores.png")
    scores = score_hindcast(result, observed, baselines)
    write_scores_csv(scores, staged.path(scores_csv))
    plot_hindcast(result, observed, scores, staged.path(scores_png))
    score_files: tuple[Path, ...] = (scores_csv, scores_png)
    if signatures is not None:
        signatures_csv = target.with_name(f"{target.stem}_signatures.csv")
        with atomic_path(staged.path(signatures_csv)) as tmp:
            signatures.to_csv(tmp, index=False, float_format="%.6g")
        score_files += (signatures_csv,)
    if distribution_scores is not None:
        extra = tuple(target.with_name(f"{target.stem}_{name}") for name in
                      ("probabilistic.csv", "reliability.png", "pit.png", "plume.png"))
        write_probabilistic_scores(distribution_scores, result, *(staged.path(path) for path in extra[:3]))
        plot_plume(result, observed, scores, staged.path(extra[3]))
        score_files += extra
    return scores, score_files


def write_probabilistic_scores(scores: list[ProbabilisticScores], result: ForecastResult, csv_path: Path,
                               reliability_png: Path, pit_png: Path) -> None:
    """Per-station scores of every lead of ``result`` as one CSV, the reliability diagram of the 2-year flow
    (titled with its label, ``2-year daily-mean flow`` when derived) and the PIT histogram of the first lead
    (titled with the issue times, leads in days)."""
    leads = result.leads
    table = pd.concat([score.stations.assign(lead=int(lead)) for score, lead in zip(scores, leads, strict=True)])
    table = table[["station", "lead", *[c for c in table.columns if c not in ("station", "lead")]]]
    with atomic_path(csv_path) as tmp:
        table.to_csv(tmp, index=False, float_format="%.4f")
    diagrams = {lead_text(int(lead), result.step): score.reliability[RELIABILITY_LEVEL]
                for score, lead in zip(scores, leads, strict=True) if RELIABILITY_LEVEL in score.reliability}
    label = result.thresholds.label(RELIABILITY_LEVEL) if diagrams and result.thresholds is not None else ""
    label = f"{label} flow" if label == RELIABILITY_LEVEL else label
    plot_reliability_diagram(diagrams, reliability_png,
                             f"hindcast {issue_text(result)}:\nexceeding the {label}, all stations")
    plot_pit_histogram(scores[0].pit, pit_png, f"hindcast PIT, {lead_text(int(leads[0]), result.step)}")
