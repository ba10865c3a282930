"""The files of one forecast run, published together as one set (see :func:`hydroseq.fileio.publish_set`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hydroseq.fileio import manifest_path, publish_set
from hydroseq.forecast.csv_writer import write_forecast_csv
from hydroseq.forecast.hindcast import HindcastScores, score_hindcast, write_scores_csv
from hydroseq.forecast.netcdf_writer import write_forecast_netcdf
from hydroseq.forecast.plots import plot_hindcast, plot_plume
from hydroseq.forecast.probabilistic import write_probabilistic_scores
from hydroseq.forecast.result import ForecastResult
from hydroseq.probabilistic_scores import ProbabilisticScores


@dataclass(frozen=True)
class PublishedForecast:
    """What :func:`publish_forecast` wrote: NetCDF, CSV and manifest; for a hindcast its scores and their files."""

    forecast_files: list[Path]
    manifest: Path
    scores: HindcastScores | None = None
    score_files: tuple[Path, ...] = ()
    distribution_scores: list[ProbabilisticScores] | None = None


def publish_forecast(result: ForecastResult, target: Path, observed: np.ndarray | None = None,
                     baselines: dict[str, np.ndarray] | None = None,
                     distribution_scores: list[ProbabilisticScores] | None = None) -> PublishedForecast:
    """Write ``target`` (NetCDF), the CSV beside it and, given ``observed``, the hindcast scores (CSV, PNG).

    ``baselines`` (``{name: [issue, station, lead]}``, e.g. persistence and climatology) are scored
    beside the model (:func:`hydroseq.forecast.hindcast.score_hindcast`); ``distribution_scores``
    (a hindcast of a model with a predictive distribution, one per lead) go to
    ``<stem>_probabilistic.csv``, ``<stem>_reliability.png``, ``<stem>_pit.png`` and ``<stem>_plume.png`` (one station's
    median and 50 / 90 % bands around its largest flow, with its thresholds).

    All of them appear together, under ``<stem>.manifest.json`` written last, or none of them
    does: an interrupted run leaves the previous set as it was.
    """
    csv_path = target.with_suffix(".csv")
    scores_csv = target.with_name(f"{target.stem}_scores.csv")
    scores_png = target.with_name(f"{target.stem}_scores.png")
    manifest = manifest_path(target)
    scores = None
    with publish_set(manifest) as staged:
        write_forecast_netcdf(result, staged.path(target))
        write_forecast_csv(result, staged.path(csv_path))
        if observed is not None:
            scores = score_hindcast(result, observed, baselines)
            write_scores_csv(scores, staged.path(scores_csv))
            plot_hindcast(result, observed, scores, staged.path(scores_png))
        score_files: tuple[Path, ...] = (scores_csv, scores_png)
        if scores is not None and observed is not None and distribution_scores is not None:
            extra = tuple(target.with_name(f"{target.stem}_{name}") for name in
                          ("probabilistic.csv", "reliability.png", "pit.png", "plume.png"))
            write_probabilistic_scores(distribution_scores, result.leads, *(staged.path(path) for path in extra[:3]))
            plot_plume(result, observed, scores, staged.path(extra[3]))
            score_files += extra
    if scores is None:
        return PublishedForecast([target, csv_path, manifest], manifest)
    return PublishedForecast([target, csv_path, manifest], manifest, scores, score_files, distribution_scores)
