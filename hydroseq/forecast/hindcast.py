"""Score hindcasts against observations: NSE, KGE and Peak-MAPE per station, lead and forecast (model and baselines),
and the hydrological signatures of the observed and the forecast flows."""

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
from hydroseq.grid import GridSpec
from hydroseq.scoring.metrics import kge, nse
from hydroseq.scoring.peak_metrics import peak_mape
from hydroseq.scoring.signature_errors import signature_table
from hydroseq.scoring.skill import stations_beating

SCORE_COLUMNS = ("station", "lead", "forecast", "n", "nse", "kge", "peak_mape")
# Tables written before Peak-MAPE was scored; they read back with it NaN.
SCORE_COLUMNS_WITHOUT_PEAK_MAPE = SCORE_COLUMNS[:-1]
MODEL = "model"


@dataclass(frozen=True)
class HindcastScores:
    """``nse``/``kge``/``peak_mape``/``n`` of shape ``[forecast, station, lead]`` (NaN where undefined).

    ``forecasts[0]`` is the model; the others are reference forecasts scored on the steps the
    model was scored on (where their own value also exists).
    """

    stations: tuple[str, ...]
    leads: np.ndarray
    forecasts: tuple[str, ...]
    n: np.ndarray
    nse: np.ndarray
    kge: np.ndarray
    peak_mape: np.ndarray

    def of(self, forecast: str) -> int:
        """Position of ``forecast`` on the first axis."""
        return self.forecasts.index(forecast)

    def summary(self) -> list[LeadSummary]:
        """Per lead: stations scored, median and mean NSE of every forecast, the model's median KGE and Peak-MAPE,
        stations beating persistence."""
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
                median_kge=_nanstat(np.median, self.kge[self.of(MODEL), :, k]), beats_persistence=beats,
                median_peak_mape=_nanstat(np.median, self.peak_mape[self.of(MODEL), :, k])))
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
    median_peak_mape: float = math.nan


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
    peak_values = np.full(shape, np.nan)
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
                peak_values[f, s, k] = peak_mape(obs, sim)
    return HindcastScores(result.stations, np.asarray(result.leads), forecasts, n, nse_values, kge_values,
                          peak_values)


def observed_at_leads(target: np.ndarray, ends: np.ndarray, leads: np.ndarray) -> np.ndarray:
    """``target`` ``[station, time]`` (the observed discharge, or another series) as ``[issue, station, lead]`` at
    the valid time of each issue step ``ends`` and lead (NaN beyond the data)."""
    steps = ends[:, None] + np.asarray(leads)[None, :]
    inside = steps < target.shape[1]
    observed = np.where(inside[:, None, :], target[:, np.minimum(steps, target.shape[1] - 1)].transpose(1, 0, 2),
                        np.nan)
    return observed.astype(np.float32)


def hindcast_signatures(result: ForecastResult, observed: np.ndarray, baselines: dict[str, np.ndarray] | None,
                        grid: GridSpec, precipitation: np.ndarray | None = None) -> pd.DataFrame:
    """Signatures of the observed and forecast flows per station, lead and forecast (model and ``baselines``).

    Per lead, the series over the issue times at their valid times (local starts of the steps:
    :meth:`hydroseq.grid.GridSpec.step_starts`), on the steps where the forecast and the
    observation exist. ``precipitation`` ``[issue, station, lead]`` at the same valid times, in the
    flow's unit, gives the runoff ratio and the elasticity.

    Returns
    -------
    pandas.DataFrame
        ``station, lead,`` then the columns of :func:`hydroseq.scoring.signature_errors.signature_table`
        after ``station``.
    """
    forecasts = {MODEL: result.values, **(baselines or {})}
    valid = result.valid_times
    frames = []
    for k, lead in enumerate(result.leads):
        at_lead = {name: values[:, :, k].T for name, values in forecasts.items()}
        rain = None if precipitation is None else precipitation[:, :, k].T
        table = signature_table(observed[:, :, k].T, at_lead, grid.step_starts(valid[:, k]), result.stations,
                                rain, result.units)
        frames.append(table.assign(lead=int(lead)))
    table = pd.concat(frames, ignore_index=True)
    return table[["station", "lead", *[column for column in table.columns if column not in ("station", "lead")]]]


def write_scores_csv(scores: HindcastScores, path: str | Path) -> Path:
    """``station,lead,forecast,n,nse,kge,peak_mape``: one row per station, lead and forecast, atomically (empty
    field for NaN)."""
    path = Path(path)
    with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(SCORE_COLUMNS)
        for s, station in enumerate(scores.stations):
            for k, lead in enumerate(scores.leads):
                for f, forecast in enumerate(scores.forecasts):
                    writer.writerow((station, int(lead), forecast, int(scores.n[f, s, k]),
                                     _number(scores.nse[f, s, k]), _number(scores.kge[f, s, k]),
                                     _number(scores.peak_mape[f, s, k])))
    return path


def read_scores_csv(path: str | Path, stations: tuple[str, ...], leads: np.ndarray) -> HindcastScores:
    """The scores :func:`write_scores_csv` wrote to ``path``, on ``stations`` and ``leads`` (NaN where not scored).

    A table written before Peak-MAPE was scored reads with ``peak_mape`` NaN.

    Raises
    ------
    ValueError
        If the file cannot be read or is not a scores table.
    """
    try:
        table = pd.read_csv(path, dtype={"station": str, "forecast": str})
    except (OSError, ValueError) as error:
        raise ValueError(f"unreadable scores table ({error})") from None
    if tuple(table.columns) == SCORE_COLUMNS_WITHOUT_PEAK_MAPE:
        table["peak_mape"] = np.nan
    if tuple(table.columns) != SCORE_COLUMNS or MODEL not in set(table["forecast"]):
        raise ValueError(f"not a hindcast scores table: columns {list(table.columns)}, expected "
                         f"{list(SCORE_COLUMNS)} with the forecast {MODEL!r}")
    forecasts = (MODEL, *sorted(set(table["forecast"]) - {MODEL}, key=list(table["forecast"]).index))
    arrays = {name: np.full((len(forecasts), len(stations), len(leads)), np.nan) for name in SCORE_COLUMNS[3:]}
    station_row = {station: s for s, station in enumerate(stations)}
    lead_column = {int(lead): k for k, lead in enumerate(leads)}
    for row in table.itertuples(index=False):
        s, k = station_row.get(row.station), lead_column.get(int(row.lead))
        if s is not None and k is not None:
            f = forecasts.index(row.forecast)
            for name in SCORE_COLUMNS[3:]:
                arrays[name][f, s, k] = getattr(row, name)
    return HindcastScores(stations, np.asarray(leads), forecasts, np.nan_to_num(arrays["n"]).astype(np.int64),
                          arrays["nse"], arrays["kge"], arrays["peak_mape"])


def _number(value: float) -> str:
    return "" if not math.isfinite(value) else f"{value:.4f}"
