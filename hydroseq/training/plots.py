"""Hydrograph figures: observed vs simulated discharge for a few stations (PNG, no display needed)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from hydroseq.fileio import atomic_path


def plot_hydrograph(path: str | Path, times: np.ndarray, obs: np.ndarray, sim: np.ndarray, station: str,
                    nse: float, ylabel: str = "discharge", baseline: np.ndarray | None = None,
                    baseline_name: str = "") -> Path:
    """Write one station's observed and simulated series (and optionally a baseline) as a PNG."""
    figure = Figure(figsize=(11, 3.5), layout="constrained")
    axis = figure.subplots()
    axis.plot(times, obs, color="black", linewidth=0.8, label="observed")
    axis.plot(times, sim, color="tab:blue", linewidth=0.8, label=f"simulated (NSE {nse:.2f})")
    if baseline is not None:
        axis.plot(times, baseline, color="tab:orange", linewidth=0.6, alpha=0.7, label=baseline_name)
    axis.set_title(f"station {station}")
    axis.set_ylabel(ylabel)
    axis.legend(loc="upper right", frameon=False)
    path = Path(path)
    with atomic_path(path) as tmp:
        figure.savefig(tmp, dpi=110, format="png")
    return path


def pick_stations(nse_by_station: dict[str, float], count: int = 4) -> list[str]:
    """A few stations spanning the skill range: best, worst and ones near the median NSE."""
    ranked = sorted((value, station) for station, value in nse_by_station.items() if np.isfinite(value))
    if len(ranked) <= count:
        return [station for _, station in ranked]
    positions = np.linspace(0, len(ranked) - 1, count).round().astype(int)
    return [ranked[i][1] for i in dict.fromkeys(positions)]


def plot_hydrographs(out_dir: str | Path, stations: Sequence[str], station_ids: Sequence[str],
                     times: np.ndarray, obs: np.ndarray, sim: np.ndarray, nse_by_station: dict[str, float],
                     ylabel: str = "discharge", baseline: np.ndarray | None = None,
                     baseline_name: str = "") -> list[Path]:
    """One PNG per station in ``stations``; rows of ``obs``, ``sim`` and ``baseline`` follow ``station_ids``."""
    index = {station: row for row, station in enumerate(station_ids)}
    return [plot_hydrograph(Path(out_dir) / f"hydrograph_{station}.png", times, obs[index[station]],
                            sim[index[station]], station, nse_by_station[station], ylabel,
                            None if baseline is None else baseline[index[station]], baseline_name)
            for station in stations]
