"""The files of one forecast run, published together as one set (see :func:`hydroseq.fileio.publish_set`): the
forecast in each format of the run (:mod:`hydroseq.forecast.writers`) and, for a hindcast, its scores."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from hydroseq.fileio import manifest_path, publish_set
from hydroseq.forecast.result import ForecastResult
from hydroseq.forecast.writers import ForecastWriter, output_path, output_writers

if TYPE_CHECKING:  # the scores exist for a hindcast only (see publish_forecast)
    from hydroseq.forecast.hindcast import HindcastScores
from hydroseq.scoring.probabilistic_scores import ProbabilisticScores


@dataclass(frozen=True)
class PublishedForecast:
    """What :func:`publish_forecast` wrote: the forecast in each format and the manifest; for a hindcast its scores
    and their files."""

    forecast_files: list[Path]
    manifest: Path
    scores: HindcastScores | None = None
    score_files: tuple[Path, ...] = ()
    distribution_scores: list[ProbabilisticScores] | None = None


def publish_forecast(result: ForecastResult, target: Path, observed: np.ndarray | None = None,
                     baselines: dict[str, np.ndarray] | None = None,
                     distribution_scores: list[ProbabilisticScores] | None = None,
                     signatures: pd.DataFrame | None = None,
                     writers: Sequence[ForecastWriter] | None = None) -> PublishedForecast:
    """Write the forecast in the format of each of ``writers`` (default NetCDF and CSV:
    :func:`~hydroseq.forecast.writers.output_writers`), the NetCDF at ``target`` and the others beside it
    (``<stem>.csv``, ``<stem>.xml``), and, given ``observed``, the hindcast scores (CSV, PNG).

    ``baselines`` (``{name: [issue, station, lead]}``, e.g. persistence and climatology) are scored
    beside the model (:func:`hydroseq.forecast.hindcast.score_hindcast`); ``distribution_scores``
    (a hindcast of a model with a predictive distribution, one per lead) go to
    ``<stem>_probabilistic.csv``, ``<stem>_reliability.png``, ``<stem>_pit.png`` and ``<stem>_plume.png`` (one station's
    median and 50 / 90 % bands around its largest flow, with its thresholds); ``signatures`` (the
    hydrological signatures of the observed and forecast flows,
    :func:`hydroseq.forecast.hindcast.hindcast_signatures`) to ``<stem>_signatures.csv``.

    All of them appear together, under ``<stem>.manifest.json`` written last, or none of them
    does: an interrupted run leaves the previous set as it was.
    """
    writers = output_writers() if writers is None else writers
    forecast_files = [output_path(target, writer) for writer in writers]
    manifest = manifest_path(target)
    with publish_set(manifest) as staged:
        for writer, path in zip(writers, forecast_files, strict=True):
            writer.write(result, staged.path(path))
        if observed is None:
            return PublishedForecast([*forecast_files, manifest], manifest)
        # imported for a hindcast only: its figures load matplotlib, which a single forecast never needs
        from hydroseq.forecast.hindcast_files import write_hindcast_files

        scores, score_files = write_hindcast_files(staged, result, target, observed, baselines, distribution_scores,
                                                   signatures)
    return PublishedForecast([*forecast_files, manifest], manifest, scores, score_files,
                             distribution_scores)
