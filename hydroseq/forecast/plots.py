"""Hindcast figure: skill per lead over stations, and hydrographs of the best, median and worst station."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from hydroseq.fileio import atomic_path
from hydroseq.forecast.hindcast import HindcastScores
from hydroseq.forecast.result import ForecastResult

FORECAST_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:grey")
NSE_FLOOR = -1.0  # lower NSE values are drawn at the floor so one bad station does not squash the plot


def plot_hindcast(result: ForecastResult, observed: np.ndarray, scores: HindcastScores, path: str | Path) -> Path:
    """Write a PNG: NSE per lead (boxes over stations: the model beside the baselines) and three hydrographs.

    The hydrographs show the stations with the best, median and worst NSE at the first lead,
    forecast against observed, by valid time.
    """
    path = Path(path)
    figure = Figure(figsize=(18, 4))
    axes = figure.subplots(1, 4, gridspec_kw={"width_ratios": [1, 2, 2, 2]})
    _skill_boxes(axes[0], scores)
    # No station with a finite NSE: no stations are picked and the hydrograph panels stay empty.
    for axis, (label, station) in zip(axes[1:], _picked_stations(scores), strict=False):
        valid = result.valid_times[:, 0]
        _bands(axis, result, valid, station, 0)
        axis.plot(valid, observed[:, station, 0], color="black", linewidth=1, label="observed")
        axis.plot(valid, result.values[:, station, 0], color="tab:blue", linewidth=1, label="forecast")
        axis.set_title(f"{label}: {result.stations[station]} (NSE {scores.nse[0, station, 0]:.2f})")
        axis.set_ylabel(f"{result.variable} [{result.units}]")
        axis.tick_params(axis="x", labelrotation=30)
    axes[1].legend(loc="upper right")
    figure.suptitle(f"hindcast, lead {int(result.leads[0])} step(s)")
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=90, metadata={"Software": None})
    return path


def plot_plume(result: ForecastResult, observed: np.ndarray, scores: HindcastScores, path: str | Path,
               half_window_steps: int = 60) -> Path:
    """A PNG of one station's predictive distribution: median, 50 % and 90 % bands, observations, thresholds.

    The station is the one with the median NSE at the first lead, shown around its largest
    observed flow (``half_window_steps`` issue times either side), one panel per lead.
    """
    path = Path(path)
    picked = dict(_picked_stations(scores))
    figure = Figure(figsize=(6 * len(result.leads), 4))
    axes = np.atleast_1d(figure.subplots(1, len(result.leads), sharey=True))
    if "median" in picked:
        station = picked["median"]
        peak = int(np.nanargmax(np.where(np.isfinite(observed[:, station, 0]), observed[:, station, 0], -np.inf)))
        window = slice(max(0, peak - half_window_steps), peak + half_window_steps + 1)
        thresholds = result.thresholds.for_stations(result.stations) if result.thresholds is not None else None
        for k, axis in enumerate(axes):
            valid = result.valid_times[window, k]
            _bands(axis, result, valid, station, k, window)
            axis.plot(valid, observed[window, station, k], color="black", linewidth=1, label="observed")
            axis.plot(valid, result.values[window, station, k], color="tab:blue", linewidth=1.2, label="median")
            if thresholds is not None:
                for level, style in zip(thresholds.levels[:2], ("--", ":"), strict=False):
                    value = thresholds.values[station, thresholds.levels.index(level)]
                    if np.isfinite(value):
                        axis.axhline(value, color="tab:red", linestyle=style, linewidth=1, label=f"{level} flow")
            axis.set_title(f"{result.stations[station]}, lead {int(result.leads[k])}")
            axis.tick_params(axis="x", labelrotation=30)
        axes[0].set_ylabel(f"{result.variable} [{result.units}]")
        axes[0].legend(loc="upper left", fontsize="small")
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=90, metadata={"Software": None})
    return path


def _bands(axis: Axes, result: ForecastResult, valid: np.ndarray, station: int, lead: int,
           window: slice = slice(None)) -> None:
    """The 90 % and 50 % central intervals, when the forecast has them."""
    if result.quantiles is None or result.quantile_levels is None:
        return
    levels = result.quantile_levels
    for lower, upper, alpha in ((0.05, 0.95, 0.2), (0.25, 0.75, 0.4)):
        if lower in levels and upper in levels:
            axis.fill_between(valid, result.quantiles[window, station, lead, levels.index(lower)],
                              result.quantiles[window, station, lead, levels.index(upper)], color="tab:blue",
                              alpha=alpha, linewidth=0, label=f"{round((upper - lower) * 100)} % interval")


def _skill_boxes(axis: Axes, scores: HindcastScores) -> None:
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
        boxes = axis.boxplot([columns[k] for k in drawn], positions=positions[drawn], widths=width * 0.9,
                             patch_artist=True, manage_ticks=False, medianprops={"color": "black"})
        for patch in boxes["boxes"]:
            patch.set_facecolor(colour)
        medians = [np.median(columns[k]) for k in drawn]
        axis.plot(positions[drawn], medians, color=colour, marker="o", markersize=3, linewidth=1, label=name)
    every = max(1, len(scores.leads) // 8)
    ticks = np.arange(0, len(scores.leads), every)
    axis.set_xticks(ticks, [str(int(scores.leads[k])) for k in ticks])
    axis.set_xlabel("lead (grid steps)")
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
