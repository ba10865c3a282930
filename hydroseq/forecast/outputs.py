"""The files of one forecast run, published together as one set (see :func:`hydroseq.fileio.publish_set`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from hydroseq.fileio import manifest_path, publish_set
from hydroseq.forecast.csv_writer import write_forecast_csv
from hydroseq.forecast.netcdf_writer import write_forecast_netcdf
from hydroseq.forecast.result import ForecastResult

if TYPE_CHECKING:  # the scores exist for a hindcast only (see publish_forecast)
    from hydroseq.forecast.hindcast import HindcastScores
from hydroseq.scoring.probabilistic_scores import ProbabilisticScores


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
    manifest = manifest_path(target)
    with publish_set(manifest) as staged:
        write_forecast_netcdf(result, staged.path(target))
        write_forecast_csv(result, staged.path(csv_path))
        if observed is None:
            return PublishedForecast([target, csv_path, manifest], manifest)
        # imported for a hindcast only: its figures load matplotlib, which a single forecast never needs
        from hydroseq.forecast.hindcast_files import write_hindcast_files

        scores, score_files = write_hindcast_files(staged, result, target, observed, baselines, distribution_scores)
    return PublishedForecast([target, csv_path, manifest], manifest, scores, score_files, distribution_scores)
