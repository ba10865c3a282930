"""Score hindcasts against observations: NSE and KGE per station and lead, medians per lead."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hydroseq.fileio import atomic_path
from hydroseq.forecast.result import ForecastResult
from hydroseq.metrics import kge, nse

SCORE_COLUMNS = ("station", "lead", "n", "nse", "kge")


@dataclass(frozen=True)
class HindcastScores:
    """``nse``/``kge``/``n`` of shape ``[station, lead]`` (NaN where undefined)."""

    stations: tuple[str, ...]
    leads: np.ndarray
    n: np.ndarray
    nse: np.ndarray
    kge: np.ndarray

    def medians(self) -> list[tuple[int, int, float, float]]:
        """``(lead, stations scored, median NSE, median KGE)`` for every lead."""
        rows = []
        for k, lead in enumerate(self.leads):
            scored = np.isfinite(self.nse[:, k])
            rows.append((int(lead), int(scored.sum()), _nanmedian(self.nse[:, k]), _nanmedian(self.kge[:, k])))
        return rows


def _nanmedian(values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return float(np.median(finite)) if finite.size else math.nan


def score_hindcast(result: ForecastResult, observed: np.ndarray) -> HindcastScores:
    """Score ``result.values [issue, station, lead]`` against ``observed`` of the same shape.

    Each station and lead is scored over the issue times where both values exist.
    """
    n_stations, n_leads = len(result.stations), len(result.leads)
    shape = (n_stations, n_leads)
    n, nse_values, kge_values = np.zeros(shape, np.int64), np.full(shape, np.nan), np.full(shape, np.nan)
    for s in range(n_stations):
        for k in range(n_leads):
            obs, sim = observed[:, s, k], result.values[:, s, k]
            n[s, k] = int(np.sum(np.isfinite(obs) & np.isfinite(sim)))
            nse_values[s, k] = nse(obs, sim)
            kge_values[s, k] = kge(obs, sim).kge
    return HindcastScores(result.stations, np.asarray(result.leads), n, nse_values, kge_values)


def write_scores_csv(scores: HindcastScores, path: str | Path) -> Path:
    """``station,lead,n,nse,kge`` per station and lead, atomically (empty field for NaN)."""
    path = Path(path)
    with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(SCORE_COLUMNS)
        for s, station in enumerate(scores.stations):
            for k, lead in enumerate(scores.leads):
                writer.writerow((station, int(lead), int(scores.n[s, k]), _number(scores.nse[s, k]),
                                 _number(scores.kge[s, k])))
    return path


def _number(value: float) -> str:
    return "" if not math.isfinite(value) else f"{value:.4f}"
