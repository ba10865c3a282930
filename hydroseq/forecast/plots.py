"""Hindcast figures: skill per lead over stations, hydrographs of the best, median and worst station, the plume.

Discharge is drawn in m³/s where the station's catchment area converts it (the target's depth rate on
a second axis, :mod:`hydroseq.forecast.discharge`); titles name the basin, the issue times and the
lead in days.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from hydroseq.config.units import is_volume_rate, to_m3s
from hydroseq.fileio import atomic_path
from hydroseq.forecast.discharge import M3S_LABEL
from hydroseq.forecast.hindcast import HindcastScores
from hydroseq.forecast.result import ForecastResult, lead_text

FORECAST_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:grey")
PLUME_COLUMNS = 4  # lead panels per row of the plume (a week of leads: two rows)
NSE_FLOOR = -1.0  # lower NSE values are drawn at the floor so one bad station does not squash the plot


def plot_hindcast(result: ForecastResult, observed: np.ndarray, scores: HindcastScores, path: str | Path) -> Path:
    """Write a PNG: NSE per lead (boxes over stations: the model beside the baselines) and three hydrographs.

    The hydrographs show the stations with the best, median and worst NSE at the first lead,
    forecast (with its 50 and 90 % bands, for a model with quantiles) against observed, by valid time.
    """
    return _save(hindcast_figure(result, observed, scores), path)


def hindcast_figure(result: ForecastResult, observed: np.ndarray, scores: HindcastScores) -> Figure:
    """The figure :func:`plot_hindcast` writes."""
    figure = Figure(figsize=(18, 4.6))
    axes = figure.subplots(1, 4, gridspec_kw={"width_ratios": [1, 2, 2, 2]})
    _skill_boxes(axes[0], scores, result.step)
    # No station with a finite NSE: no stations are picked and the hydrograph panels stay empty.
    for axis, (label, station) in zip(axes[1:], _picked_stations(scores), strict=False):
        valid = result.valid_times[:, 0]
        factor = _draw_in_discharge(axis, result, station)
        _bands(axis, result, valid, station, 0, factor=factor)
        axis.plot(valid, observed[:, station, 0] * factor, color="black", linewidth=1, label="observed")
        axis.plot(valid, result.values[:, station, 0] * factor, color="tab:blue", linewidth=1, label="forecast")
        axis.set_title(f"{label} (NSE {scores.nse[0, station, 0]:.2f}): {station_title(result, station)}",
                       fontsize="small")
        axis.tick_params(axis="x", labelrotation=30)
    axes[1].legend(loc="upper right")
    figure.suptitle(f"hindcast {issue_text(result)}, {lead_text(int(result.leads[0]), result.step)}")
    figure.tight_layout()
    return figure


def plot_plume(result: ForecastResult, observed: np.ndarray, scores: HindcastScores, path: str | Path,
               half_window_steps: int = 60) -> Path:
    """A PNG of one station's predictive distribution: median, 50 % and 90 % bands, observations, thresholds.

    The station is the one with the median NSE at the first lead, shown around its largest
    observed flow (``half_window_steps`` issue times either side), one panel per lead, at most
    :data:`PLUME_COLUMNS` to a row; in m³/s where its area converts the target.
    """
    return _save(plume_figure(result, observed, scores, half_window_steps), path)


def plume_figure(result: ForecastResult, observed: np.ndarray, scores: HindcastScores,
                 half_window_steps: int = 60) -> Figure:
    """The figure :func:`plot_plume` writes."""
    picked = dict(_picked_stations(scores))
    n_leads = len(result.leads)
    columns = min(n_leads, PLUME_COLUMNS)
    rows = -(-n_leads // columns)
    figure = Figure(figsize=(6 * columns, 4 * rows))
    grid = np.atleast_1d(figure.subplots(rows, columns, sharey=True, squeeze=False)).ravel()
    for unused in grid[n_leads:]:  # the last row's empty places
        unused.set_visible(False)
    axes = grid[:n_leads]
    if "median" in picked:
        station = picked["median"]
        peak = int(np.nanargmax(np.where(np.isfinite(observed[:, station, 0]), observed[:, station, 0], -np.inf)))
        window = slice(max(0, peak - half_window_steps), peak + half_window_steps + 1)
        thresholds = result.thresholds.for_stations(result.stations) if result.thresholds is not None else None
        for k, axis in enumerate(axes):
            valid = result.valid_times[window, k]
            last_of_row = k % columns == columns - 1 or k == n_leads - 1
            factor = _draw_in_discharge(axis, result, station, second_axis=last_of_row, label=k % columns == 0)
            _bands(axis, result, valid, station, k, window, factor)
            axis.plot(valid, observed[window, station, k] * factor, color="black", linewidth=1, label="observed")
            axis.plot(valid, result.values[window, station, k] * factor, color="tab:blue", linewidth=1.2,
                      label="median")
            if thresholds is not None:
                for level, style in zip(thresholds.levels[:2], ("--", ":"), strict=False):
                    value = thresholds.values[station, thresholds.levels.index(level)]
                    if np.isfinite(value):
                        axis.axhline(value * factor, color="tab:red", linestyle=style, linewidth=1,
                                     label=thresholds.label(level))
            axis.set_title(lead_text(int(result.leads[k]), result.step))
            axis.tick_params(axis="x", labelrotation=30)
        axes[0].legend(loc="upper left", fontsize="small")
        figure.suptitle(f"{station_title(result, station)}: hindcast {issue_text(result)}")
    figure.tight_layout()
    return figure


def _save(figure: Figure, path: str | Path) -> Path:
    path = Path(path)
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=90, metadata={"Software": None})
    return path


def station_title(result: ForecastResult, station: int) -> str:
    """``Narraguagus River at Cherryfield, Maine (01022500)``; the id alone when the name is not known."""
    name = result.station_names[station] if result.station_names is not None else ""
    return f"{name} ({result.stations[station]})" if name else result.stations[station]


def issue_text(result: ForecastResult) -> str:
    """``issued 2014-10-01 08:00 UTC``, or the first and last issue times of a hindcast."""
    first, last = (pd.Timestamp(result.issue_times[i]).strftime("%Y-%m-%d %H:%M") for i in (0, -1))
    return f"issued {first} UTC" if len(result.issue_times) == 1 else f"issued {first}..{last} UTC"


def _draw_in_discharge(axis: Axes, result: ForecastResult, station: int, second_axis: bool = True,
                       label: bool = True) -> float:
    """Label ``axis`` for discharge in m³/s (with the target's depth rate on a second axis) and return the
    factor from the target's units to m³/s; 1 and the target's own label where the area is unknown."""
    one = to_m3s(np.ones(1), result.units, result.step,
                 None if result.area_km2 is None else np.asarray(result.area_km2, np.float64)[station:station + 1])
    factor = float(one[0]) if one is not None and np.isfinite(one[0]) else None
    if factor is None:
        if label:
            axis.set_ylabel(f"{result.variable} ({result.units})")
        return 1.0
    if label:
        axis.set_ylabel(M3S_LABEL)
    if second_axis and not is_volume_rate(result.units):
        scale = factor

        def to_depth(discharge: ArrayLike) -> np.ndarray:
            return np.asarray(discharge, dtype=np.float64) / scale

        def to_discharge(depth_rate: ArrayLike) -> np.ndarray:
            return np.asarray(depth_rate, dtype=np.float64) * scale

        depth = axis.secondary_yaxis("right", functions=(to_depth, to_discharge))
        depth.set_ylabel(result.units.replace(" d-1", "/d").replace(" h-1", "/h"))
    return factor


def _bands(axis: Axes, result: ForecastResult, valid: np.ndarray, station: int, lead: int,
           window: slice = slice(None), factor: float = 1.0) -> None:
    """The 90 % and 50 % central intervals, when the forecast has them (times ``factor``: in m³/s)."""
    if result.quantiles is None or result.quantile_levels is None:
        return
    levels = result.quantile_levels
    for lower, upper, alpha in ((0.05, 0.95, 0.2), (0.25, 0.75, 0.4)):
        if lower in levels and upper in levels:
            axis.fill_between(valid, result.quantiles[window, station, lead, levels.index(lower)] * factor,
                              result.quantiles[window, station, lead, levels.index(upper)] * factor,
                              color="tab:blue", alpha=alpha, linewidth=0,
                              label=f"{round((upper - lower) * 100)} % interval")


def _skill_boxes(axis: Axes, scores: HindcastScores, step: pd.Timedelta) -> None:
    """Per lead, one box over stations per forecast (model first, then the baselines), side by side.

    The median over stations is also drawn as a line per forecast, which is what remains readable
    for a single station or many leads.
    """
    n_forecasts = len(scores.forecasts)
    width = 0.8 / n_forecasts
    for f, name in enumerate(scores.forecasts):
        colour = FORECAST_COLOURS[f % len(FORECAST_COLOURS)]
        columns = [np.maximum(column[np.isfinite(column)], NSE_FLOOR) for column in scores.nse[f].T]
        positions = np.arange(len(scores.leads)) + (f - (n_forecasts - 1) / 2) * width
        drawn = [k for k, column in enumerate(columns) if column.size]
        if not drawn:  # no finite NSE at any lead (a baseline without data): named in the legend, nothing drawn
            axis.plot([], [], color=colour, marker="o", markersize=3, linewidth=1, label=f"{name} (no scores)")
            continue
        boxes = axis.boxplot([columns[k] for k in drawn], positions=positions[drawn], widths=width * 0.9,
                             patch_artist=True, manage_ticks=False, medianprops={"color": "black"})
        for patch in boxes["boxes"]:
            patch.set_facecolor(colour)
        medians = [np.median(columns[k]) for k in drawn]
        axis.plot(positions[drawn], medians, color=colour, marker="o", markersize=3, linewidth=1, label=name)
    every = max(1, len(scores.leads) // 8)
    ticks = np.arange(0, len(scores.leads), every)
    axis.set_xticks(ticks, [f"{int(scores.leads[k]) * (step / pd.Timedelta(days=1)):g}" for k in ticks])
    axis.set_xlabel("lead (days)")
    axis.set_ylabel(f"NSE over stations (floored at {NSE_FLOOR:g})")
    axis.axhline(0.0, color="grey", linewidth=0.5)
    axis.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=n_forecasts, fontsize="x-small", frameon=False)


def _picked_stations(scores: HindcastScores) -> list[tuple[str, int]]:
    first = scores.nse[0, :, 0]
    finite = np.flatnonzero(np.isfinite(first))
    if not finite.size:
        return []
    order = finite[np.argsort(first[finite])]
    return [("best", int(order[-1])), ("median", int(order[len(order) // 2])), ("worst", int(order[0]))]
