"""Hydrograph figures: observed vs simulated discharge for a few stations (PNG, no display needed).

Each is titled with the basin's name and id and what it shows (split, period, lead in days); a model
with quantiles draws its 90 % band; where the station's area is known the discharge is in m³/s with the
target's units on a second axis (:func:`hydroseq.config.units.to_m3s`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from hydroseq.config.units import to_m3s
from hydroseq.dataset import StationData
from hydroseq.fileio import atomic_path
from hydroseq.ingested import open_ingested

M3S_LABEL = "discharge (m³/s)"


@dataclass(frozen=True)
class HydrographStyle:
    """What the hydrographs of one split say beyond the series.

    ``subtitle`` (e.g. ``test 2010-10-01..2014-12-31, lead 1 d``) follows the basin in each title;
    ``names`` and ``areas`` (km²) are per station id; ``units`` and ``step`` of the target turn a depth
    rate into m³/s (:func:`hydroseq.config.units.to_m3s`) where the area is known.
    """

    subtitle: str = ""
    names: Mapping[str, str] | None = None
    areas: Mapping[str, float] | None = None
    units: str = ""
    step: pd.Timedelta = field(default_factory=lambda: pd.Timedelta(days=1))


def hydrograph_style(station_data: StationData, split: str, times: np.ndarray, lead: int) -> HydrographStyle:
    """The style of ``split``'s hydrographs: its period (grid labels ``times``, UTC) and ``lead`` in the
    subtitle, the station names and areas of the ingested file."""
    with open_ingested(station_data.path)[0] as dataset:
        ids = [str(station) for station in dataset["station"].values]
        names = ([str(name) for name in dataset["station_name"].values] if "station_name" in dataset.variables
                 else [""] * len(ids))
        areas = (np.asarray(dataset["area_km2"].values, np.float64) if "area_km2" in dataset.variables
                 else np.full(len(ids), np.nan))
    period = "..".join(pd.Timestamp(times[i]).strftime("%Y-%m-%d") for i in (0, -1)) if len(times) else ""
    step = station_data.grid.step
    return HydrographStyle(f"{split} {period} UTC, {lead_days(lead, step)}", dict(zip(ids, names, strict=True)),
                           dict(zip(ids, areas.tolist(), strict=True)), station_data.target_units, step)


def quantile_band(quantiles: np.ndarray | None, levels: Sequence[float] | None) -> np.ndarray | None:
    """``[2, station, time]``: the 5 and 95 % quantiles of ``quantiles[station, time, level]``; None without."""
    if quantiles is None or levels is None or 0.05 not in levels or 0.95 not in levels:
        return None
    return np.stack([quantiles[..., list(levels).index(0.05)], quantiles[..., list(levels).index(0.95)]])


def lead_days(lead: int, step: pd.Timedelta) -> str:
    """``lead 1 d`` (``lead 0 d``: the simulated flow of the last input step); hours on a sub-daily grid."""
    days = lead * (step / pd.Timedelta(days=1))
    if step >= pd.Timedelta(days=1) or lead == 0:
        return f"lead {days:g} d"
    return f"lead {days:.3g} d ({lead * (step / pd.Timedelta(hours=1)):g} h)"


def plot_hydrograph(path: str | Path, times: np.ndarray, obs: np.ndarray, sim: np.ndarray, station: str,
                    nse: float, ylabel: str = "discharge", baseline: np.ndarray | None = None,
                    baseline_name: str = "", band: np.ndarray | None = None,
                    style: HydrographStyle = HydrographStyle()) -> Path:
    """Write one station's observed and simulated series (and optionally a baseline and the 90 % band,
    ``band[0]`` to ``band[1]``) as a PNG."""
    path = Path(path)
    figure = hydrograph_figure(times, obs, sim, station, nse, ylabel, baseline, baseline_name, band, style)
    with atomic_path(path) as tmp:
        figure.savefig(tmp, dpi=110, format="png")
    return path


def hydrograph_figure(times: np.ndarray, obs: np.ndarray, sim: np.ndarray, station: str, nse: float,
                      ylabel: str = "discharge", baseline: np.ndarray | None = None, baseline_name: str = "",
                      band: np.ndarray | None = None, style: HydrographStyle = HydrographStyle()) -> Figure:
    """The figure :func:`plot_hydrograph` writes."""
    figure = Figure(figsize=(11, 3.5), layout="constrained")
    axis = figure.subplots()
    factor = _discharge_axis(axis, station, ylabel, style)
    if band is not None:
        axis.fill_between(times, band[0] * factor, band[1] * factor, color="tab:blue", alpha=0.25, linewidth=0,
                          label="90 % interval")
    axis.plot(times, obs * factor, color="black", linewidth=0.8, label="observed")
    axis.plot(times, sim * factor, color="tab:blue", linewidth=0.8, label=f"simulated (NSE {nse:.2f})")
    if baseline is not None:
        axis.plot(times, baseline * factor, color="tab:orange", linewidth=0.6, alpha=0.7, label=baseline_name)
    name = (style.names or {}).get(station, "")
    title = f"{name} ({station})" if name else f"station {station}"
    axis.set_title(f"{title}: {style.subtitle}" if style.subtitle else title)
    axis.legend(loc="upper right", frameon=False)
    return figure


def _discharge_axis(axis: Axes, station: str, ylabel: str, style: HydrographStyle) -> float:
    """Label ``axis`` and return the factor from the target's units to what it draws: m³/s (the target's
    units on a second axis) where ``style`` knows the station's area and units, else 1 and ``ylabel``."""
    area = (style.areas or {}).get(station)
    one = to_m3s(np.ones(1), style.units, style.step, None if area is None else np.array([area]))
    if one is None or not np.isfinite(one[0]):
        axis.set_ylabel(ylabel)
        return 1.0
    factor = float(one[0])
    axis.set_ylabel(M3S_LABEL)
    if factor != 1.0:

        def to_depth(discharge: ArrayLike) -> np.ndarray:
            return np.asarray(discharge, dtype=np.float64) / factor

        def to_discharge(depth_rate: ArrayLike) -> np.ndarray:
            return np.asarray(depth_rate, dtype=np.float64) * factor

        second = axis.secondary_yaxis("right", functions=(to_depth, to_discharge))
        second.set_ylabel(ylabel)
    return factor


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
                     baseline_name: str = "", band: np.ndarray | None = None,
                     style: HydrographStyle = HydrographStyle()) -> list[Path]:
    """One PNG per station in ``stations``; rows of ``obs``, ``sim`` and ``baseline`` follow ``station_ids``,
    and so does the second axis of ``band`` (``[2, station, time]``: the 90 % interval's bounds)."""
    index = {station: row for row, station in enumerate(station_ids)}
    return [plot_hydrograph(Path(out_dir) / f"hydrograph_{station}.png", times, obs[index[station]],
                            sim[index[station]], station, nse_by_station[station], ylabel,
                            None if baseline is None else baseline[index[station]], baseline_name,
                            None if band is None else band[:, index[station]], style)
            for station in stations]
