"""Score hindcasts against observations: NSE and KGE per station, lead and forecast (model and baselines)."""

from __future__ import annotations

import csv
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from hydroseq.fileio import atomic_path
from hydroseq.forecast.result import ForecastResult
from hydroseq.scoring.metrics import kge, nse
from hydroseq.scoring.skill import stations_beating

SCORE_COLUMNS = ("station", "lead", "forecast", "n", "nse", "kge")
MODEL = "model"


@dataclass(frozen=True)
class HindcastScores:
    """``nse``/``kge``/``n`` of shape ``[forecast, station, lead]`` (NaN where undefined).

    ``forecasts[0]`` is the model; the others are reference forecasts scored on the steps the
    model was scored on (where their own value also exists).
    """

    stations: tuple[str, ...]
    leads: np.ndarray
    forecasts: tuple[str, ...]
    n: np.ndarray
    nse: np.ndarray
    kge: np.ndarray

    def of(self, forecast: str) -> int:
        """Position of ``forecast`` on the first axis."""
        return self.forecasts.index(forecast)

    def summary(self) -> list[LeadSummary]:
        """Per lead: stations scored, median and mean NSE of every forecast, stations beating persistence."""
        rows = []
        model = self.nse[self.of(MODEL)]
        for k, lead in enumerate(self.leads):
            beats = None
            if "persistence" in self.forecasts:
                persisted = self.nse[self.of("persistence"), :, k]
                beats = stations_beating(model[:, k], persisted)
            rows.append(LeadSummary(
                lead=int(lead), stations=int(np.isfinite(model[:, k]).sum()),
                median_nse={name: _nanstat(np.median, self.nse[f, :, k]) for f, name in enumerate(self.forecasts)},
                mean_nse={name: _nanstat(np.mean, self.nse[f, :, k]) for f, name in enumerate(self.forecasts)},
                median_kge=_nanstat(np.median, self.kge[self.of(MODEL), :, k]), beats_persistence=beats))
        return rows


@dataclass(frozen=True)
class LeadSummary:
    """What the printed hindcast table shows for one lead (``beats_persistence``: (stations, of)."""

    lead: int
    stations: int
    median_nse: dict[str, float]
    mean_nse: dict[str, float]
    median_kge: float
    beats_persistence: tuple[int, int] | None


def _nanstat(statistic: Callable[[np.ndarray], np.floating], values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return float(statistic(finite)) if finite.size else math.nan


def score_hindcast(result: ForecastResult, observed: np.ndarray,
                   baselines: dict[str, np.ndarray] | None = None) -> HindcastScores:
    """Score ``result.values [issue, station, lead]`` and each of ``baselines`` (same shape) against ``observed``.

    The model is scored over the issue times where it and the observation exist; a baseline over
    those of them where it exists too, so that every forecast is judged on the same steps.
    """
    baselines = baselines or {}
    forecasts = (MODEL, *baselines)
    shape = (len(forecasts), len(result.stations), len(result.leads))
    n, nse_values, kge_values = np.zeros(shape, np.int64), np.full(shape, np.nan), np.full(shape, np.nan)
    scored = np.isfinite(observed) & np.isfinite(result.values)
    for f, values in enumerate([result.values, *baselines.values()]):
        if values.shape != result.values.shape:
            raise ValueError(f"{forecasts[f]} has shape {values.shape}, expected {result.values.shape}")
        for s in range(shape[1]):
            for k in range(shape[2]):
                keep = scored[:, s, k] & np.isfinite(values[:, s, k])
                obs, sim = observed[keep, s, k], values[keep, s, k]
                n[f, s, k] = int(keep.sum())
                nse_values[f, s, k] = nse(obs, sim)
                kge_values[f, s, k] = kge(obs, sim).kge
    return HindcastScores(result.stations, np.asarray(result.leads), forecasts, n, nse_values, kge_values)


def write_scores_csv(scores: HindcastScores, path: str | Path) -> Path:
    """``station,lead,forecast,n,nse,kge``: one row per station, lead and forecast, atomically (empty field for NaN)."""
    path = Path(path)
    with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(SCORE_COLUMNS)
        for s, station in enumerate(scores.stations):
            for k, lead in enumerate(scores.leads):
                for f, forecast in enumerate(scores.forecasts):
                    writer.writerow((station, int(lead), forecast, int(scores.n[f, s, k]),
                                     _number(scores.nse[f, s, k]), _number(scores.kge[f, s, k])))
    return path


def read_scores_csv(path: str | Path, stations: tuple[str, ...], leads: np.ndarray) -> HindcastScores:
    """The scores :func:`write_scores_csv` wrote to ``path``, on ``stations`` and ``leads`` (NaN where not scored).

    Raises
    ------
    ValueError
        If the file cannot be read or is not a scores table.
    """
    try:
        table = pd.read_csv(path, dtype={"station": str, "forecast": str})
    except (OSError, ValueError) as error:
        raise ValueError(f"unreadable scores table ({error})") from None
    if tuple(table.columns) != SCORE_COLUMNS or MODEL not in set(table["forecast"]):
        raise ValueError(f"not a hindcast scores table: columns {list(table.columns)}, expected "
                         f"{list(SCORE_COLUMNS)} with the forecast {MODEL!r}")
    forecasts = (MODEL, *sorted(set(table["forecast"]) - {MODEL}, key=list(table["forecast"]).index))
    arrays = {name: np.full((len(forecasts), len(stations), len(leads)), np.nan) for name in ("n", "nse", "kge")}
    station_row = {station: s for s, station in enumerate(stations)}
    lead_column = {int(lead): k for k, lead in enumerate(leads)}
    for row in table.itertuples(index=False):
        s, k = station_row.get(row.station), lead_column.get(int(row.lead))
        if s is not None and k is not None:
            f = forecasts.index(row.forecast)
            arrays["n"][f, s, k], arrays["nse"][f, s, k], arrays["kge"][f, s, k] = row.n, row.nse, row.kge
    return HindcastScores(stations, np.asarray(leads), forecasts, np.nan_to_num(arrays["n"]).astype(np.int64),
                          arrays["nse"], arrays["kge"])


def _number(value: float) -> str:
    return "" if not math.isfinite(value) else f"{value:.4f}"
