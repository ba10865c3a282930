"""The tables ``hydroseq forecast`` prints after its summary: the stations likely to exceed a threshold
(one issue time) and a hindcast's scores. Each names the issue time as the local day and the UTC label, and
its leads in days (hours on a sub-daily grid)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hydroseq.cli.tables import add_column, add_id_column, issue_label, lead_label, leads_label
from hydroseq.config.units import to_m3s
from hydroseq.forecast import ForecastResult
from hydroseq.forecast.hindcast import HindcastScores
from hydroseq.grid import GridSpec
from hydroseq.scoring.probabilistic_scores import ProbabilisticScores
from hydroseq.scoring.thresholds import StationThresholds

MAX_LEAD_COLUMNS = 4  # more leads (hourly ones): the highest probability and its lead instead of one column each


def result_grid(result: ForecastResult) -> GridSpec:
    """The grid the forecast's attributes record; a UTC grid of its step when they record none."""
    try:
        return GridSpec.from_attrs(result.attributes)
    except ValueError:
        return GridSpec(frequency=f"{int(result.step.total_seconds())}s")


def result_issue(result: ForecastResult) -> str:
    """The forecast's issue time(s) as :func:`hydroseq.cli.tables.issue_label` gives them."""
    return issue_label(result.issue_times, result_grid(result))


def print_exceedance(result: ForecastResult, console: Console, min_probability: float = 0.1) -> None:
    """The stations whose probability of exceeding one of their thresholds is at least
    ``min_probability`` at some lead, likeliest first, with their names; per such threshold what it is
    (``2-year daily-mean flow``), its flow (m³/s when the target converts, :mod:`hydroseq.forecast.discharge`),
    for a derived return-period flow its confidence interval and the water years it was fitted to, and the
    probability at each lead (more than four leads: the highest and its lead). Without any, one line:
    ``31 stations, none above 10 %``.
    """
    assert result.thresholds is not None and result.exceedance is not None
    thresholds = result.thresholds.for_stations(result.stations)
    probability = result.exceedance[0]  # [station, lead, threshold]
    forecast = np.isfinite(result.values[0]).any(axis=1)
    highest = np.where(np.isfinite(probability), probability, -1.0).max(axis=1)  # [station, threshold]
    above = forecast[:, None] & (highest >= min_probability)
    listed = sorted(np.flatnonzero(above.any(axis=1)), key=lambda s: -highest[s].max())
    share = f"{min_probability * 100:g} %"
    leads = (leads_label(result.leads, result.step) if len(result.leads) <= MAX_LEAD_COLUMNS else
             f"{lead_label(result.leads[0], result.step)} to {lead_label(result.leads[-1], result.step)}")
    what = f"of exceeding a threshold at leads {leads}"
    if not listed:
        count = int(forecast.sum())
        console.print(f"{count} station{'s' if count != 1 else ''}, none above {share}: probability {what}, issued "
                      f"{result_issue(result)}")
        return
    converted, lower, upper = (to_m3s(values, result.units, result.step, result.area_km2)
                               for values in (thresholds.values, thresholds.lower, thresholds.upper))
    with_interval = bool(np.isfinite(thresholds.lower[listed]).any())
    names = result.station_names if result.station_names and any(result.station_names) else None
    table = Table(title=f"{len(listed)} of {int(forecast.sum())} stations with a probability of {share} or more "
                        f"{what}, issued {result_issue(result)}", caption=f"thresholds: {thresholds.source}")
    add_id_column(table, "station", [result.stations[s] for s in listed])
    if names is not None:
        add_column(table, "name")
    add_column(table, "threshold")
    add_column(table, "m³/s" if converted is not None else result.units, "right")
    if with_interval:
        add_column(table, f"{thresholds.confidence * 100:g} %\ninterval" if thresholds.confidence else "interval",
                   "right")
        add_column(table, "water\nyears", "right")
    many = len(result.leads) > MAX_LEAD_COLUMNS
    for header in (["highest P", "at lead"] if many else [f"P {lead_label(lead, result.step)}"
                                                          for lead in result.leads]):
        add_column(table, header, "right")
    for s in listed:
        levels = np.flatnonzero(above[s])
        for row, k in enumerate(levels):
            flow = _flow(thresholds.values[s, k], None if converted is None else converted[s, k], result.units)
            fit = ([_interval(thresholds, lower, upper, int(s), int(k), result.units),
                    str(thresholds.years[s, k] or "")] if with_interval else [])
            chances = probability[s, :, k]
            cells = ([f"{highest[s, k]:.0%}", lead_label(result.leads[int(np.nanargmax(chances))], result.step)]
                     if many else [f"{p:.0%}" if np.isfinite(p) else "-" for p in chances])
            first = [escape(result.stations[s]), *([escape(names[s] or "")] if names is not None else [])]
            table.add_row(*(first if row == 0 else [""] * len(first)), escape(thresholds.labels[k]), flow, *fit,
                          *cells, end_section=row == len(levels) - 1)
    console.print(table)


def _flow(value: float, m3s: float | None, units: str) -> str:
    """A threshold in m³/s (the column's units), or in the target's units with them when it has no m³/s value."""
    if m3s is not None and np.isfinite(m3s):
        decimals = "{:,.0f}" if m3s >= 100 else "{:.1f}" if m3s >= 10 else "{:.2f}" if m3s >= 1 else "{:.2g}"
        return decimals.format(m3s)
    return f"{value:.3g} {units}" if m3s is not None else f"{value:.3g}"


def _interval(thresholds: StationThresholds, lower_m3s: np.ndarray | None, upper_m3s: np.ndarray | None, s: int,
              k: int, units: str) -> str:
    """``13.3-17.0``: the interval of threshold ``k`` of station ``s`` as :func:`_flow` writes the threshold;
    empty without one."""
    low, high = float(thresholds.lower[s, k]), float(thresholds.upper[s, k])
    if not (np.isfinite(low) and np.isfinite(high)):
        return ""
    bounds = [_flow(value, None if m3s is None else float(m3s[s, k]), units)
              for value, m3s in ((low, lower_m3s), (high, upper_m3s))]
    return f"{bounds[0].removesuffix(f' {units}')}-{bounds[1]}"


def print_scores(scores: HindcastScores, paths: list[Path], result: ForecastResult, console: Console) -> None:
    """Per lead and forecast (model, then the baselines): median and mean NSE over stations.

    The model's row also gives its median KGE and Peak-MAPE and how many stations it beats persistence at.
    Every station's scores are in ``paths``.
    """
    table = Table(title=f"hindcast NSE over stations, issued {result_issue(result)}")
    add_column(table, "lead", "right")
    table.add_column("forecast", no_wrap=True, min_width=max(len(name) for name in scores.forecasts))
    for column in ("stations", "NSE\nmedian", "NSE\nmean", "KGE\nmedian", "Peak-MAPE\nmedian", "beats\npersistence"):
        add_column(table, column, "right")
    for row in scores.summary():
        for name in scores.forecasts:
            is_model = name == scores.forecasts[0]
            beats = row.beats_persistence
            table.add_row(lead_label(row.lead, result.step) if is_model else "", name,
                          str(row.stations) if is_model else "",
                          f"{row.median_nse[name]:.3f}", f"{row.mean_nse[name]:.3f}",
                          f"{row.median_kge:.3f}" if is_model else "",
                          f"{row.median_peak_mape:.1f} %" if is_model else "",
                          f"{beats[0]} of {beats[1]}" if is_model and beats is not None else "",
                          end_section=name == scores.forecasts[-1])
    console.print(table)
    for path in paths:
        console.print(f"per station and forecast: {path}", soft_wrap=True)


def print_distribution_scores(scores: list[ProbabilisticScores], result: ForecastResult, console: Console) -> None:
    """Per lead: median CRPS skill against climatology and persistence, interval coverage, Brier skill of the
    2-year daily-mean flow."""
    table = Table(title="hindcast of the predictive distribution (median over stations; CRPSS against "
                        f"climatology and persistence), issued {result_issue(result)}")
    for column in ("lead", "CRPSS\nclim", "CRPSS\npers", "CRPSS\nclim > 0", "cover\n50 %", "cover\n90 %",
                   "BSS 2-year\nflow, pooled"):
        add_column(table, column, "right")
    for lead, score in zip(result.leads, scores, strict=True):
        rows = score.stations
        table.add_row(lead_label(int(lead), result.step), f"{_median(rows['crpss_climatology']):.3f}",
                      f"{_median(rows['crpss_persistence']):.3f}",
                      f"{int((rows['crpss_climatology'] > 0).sum())} of {len(rows)}",
                      f"{_median(rows['coverage50']):.1%}", f"{_median(rows['coverage90']):.1%}",
                      f"{score.pooled.get('bss_2-year', float('nan')):.3f}")
    console.print(table)


def _median(values: object) -> float:
    """The median of the finite values; NaN, without numpy's warning, when there is none (a climatology of a
    training period the file does not hold)."""
    finite = np.asarray(values, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    return float(np.median(finite)) if finite.size else float("nan")
