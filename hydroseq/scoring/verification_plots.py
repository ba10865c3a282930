"""Figures of probabilistic verification: PIT histogram and reliability diagram (PNG, no display needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from hydroseq.fileio import atomic_path
from hydroseq.scoring.verification import pit_histogram

FEW_FORECASTS = 30  # a reliability bin with fewer forecasts is drawn hollow, with its count


def _save(figure: Figure, path: str | Path) -> Path:
    path = Path(path)
    with atomic_path(path) as tmp:
        figure.savefig(tmp, dpi=110, format="png")
    return path


def plot_pit_histogram(pit_values: ArrayLike, path: str | Path, title: str, n_bins: int = 10) -> Path:
    """Write the histogram of PIT values as a PNG, as densities with the calibrated (uniform) level at 1.

    Bars above 1 at both ends mean too narrow a forecast, a hump too wide a one, a tilt a bias.
    NaN PIT values are ignored; the number used is in the title.
    """
    counts = pit_histogram(pit_values, n_bins)
    total = int(counts.sum())
    density = counts * n_bins / total if total else np.zeros(n_bins)
    figure = Figure(figsize=(5, 3.5), layout="constrained")
    axis = figure.subplots()
    axis.bar(np.arange(n_bins) / n_bins, density, width=1.0 / n_bins, align="edge", color="tab:blue",
             edgecolor="white")
    axis.axhline(1.0, color="black", linewidth=0.8, linestyle="--", label="calibrated")
    axis.set_xlim(0.0, 1.0)
    axis.set_ylim(0.0, 1.25 * max(1.0, float(density.max())))
    axis.set_xlabel("PIT (forecast non-exceedance probability of the observation)")
    axis.set_ylabel("density")
    axis.set_title(f"{title} (n = {total:,})")
    axis.legend(loc="upper center", frameon=False)
    return _save(figure, path)


def plot_reliability_diagram(tables: dict[str, pd.DataFrame], path: str | Path, title: str,
                             few: int = FEW_FORECASTS) -> Path:
    """Write a reliability diagram as a PNG: observed frequency against forecast probability.

    Parameters
    ----------
    tables
        Label (e.g. ``"lead 1"``) -> a table of :func:`hydroseq.scoring.verification.reliability_table`;
        one line each, empty bins left out.
    path
        The PNG to write (replaced atomically).
    title
        The figure's title.
    few
        Bins with fewer forecasts than this are drawn as hollow markers labelled with their count.

    Notes
    -----
    The diagonal is a perfectly reliable forecast. The panel below shows how many forecasts fell
    in each bin (log scale): a point far off the diagonal from a handful of forecasts means little,
    which is why such points are hollow and say how many forecasts they hold.
    """
    return _save(reliability_figure(tables, title, few), path)


def reliability_figure(tables: dict[str, pd.DataFrame], title: str, few: int = FEW_FORECASTS) -> Figure:
    """The figure :func:`plot_reliability_diagram` writes."""
    figure = Figure(figsize=(5.5, 6.5), layout="constrained")
    curve_axis, count_axis = figure.subplots(2, 1, sharex=True, height_ratios=[3, 1])
    curve_axis.plot([0.0, 1.0], [0.0, 1.0], color="black", linewidth=0.8, linestyle="--", label="reliable")
    hollow_drawn = False
    for label, table in tables.items():
        used = table[table["count"] > 0]
        line, = curve_axis.plot(used["mean_forecast"], used["observed_frequency"], linewidth=1.0, label=label)
        colour = line.get_color()
        enough = used[used["count"] >= few]
        curve_axis.plot(enough["mean_forecast"], enough["observed_frequency"], linestyle="none", marker="o",
                        markersize=4, color=colour)
        scarce = used[used["count"] < few]
        if len(scarce):
            hollow_drawn = True
            curve_axis.plot(scarce["mean_forecast"], scarce["observed_frequency"], linestyle="none", marker="o",
                            markersize=5, markerfacecolor="white", markeredgecolor=colour)
            for x, y, count in zip(scarce["mean_forecast"], scarce["observed_frequency"], scarce["count"],
                                   strict=True):
                curve_axis.annotate(f"n={int(count)}", (x, y), xytext=(4, -10), textcoords="offset points",
                                    fontsize="x-small", color=colour)
        edges = np.append(table["bin_lower"].to_numpy(), table["bin_upper"].to_numpy()[-1:])
        count_axis.stairs(table["count"].where(table["count"] > 0).to_numpy(dtype=float), edges,
                          color=line.get_color(), linewidth=1.0)
    curve_axis.set_xlim(0.0, 1.0)
    curve_axis.set_ylim(0.0, 1.0)
    curve_axis.set_ylabel("observed frequency")
    curve_axis.set_title(title)
    if hollow_drawn:
        curve_axis.plot([], [], linestyle="none", marker="o", markerfacecolor="white", markeredgecolor="grey",
                        label=f"fewer than {few} forecasts")
    curve_axis.legend(loc="upper left", frameon=False, fontsize="small")
    if any((table["count"] > 0).any() for table in tables.values()):
        count_axis.set_yscale("log")
    count_axis.set_xlabel("forecast probability")
    count_axis.set_ylabel("forecasts")
    return figure
