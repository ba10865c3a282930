"""The page's charts as bokeh models: the station map, the hydrograph, the reliability diagram and the PIT histogram.

bokeh was chosen by measurement (``benchmarks/bench_report_libraries.py``, ``docs/forecast.md``, "Why bokeh"): with
its JavaScript inline a page is a third of plotly's size and interactive three times sooner. The charts
are drawn empty of station data; the page's script (``templates/report.js``) fills their named data sources
from the page's JSON when a station is selected, so one chart serves every station. Colours are the
Okabe-Ito set, told apart by colour-blind readers; every series also differs by line style or marker.
"""

from __future__ import annotations

import math

import numpy as np
from bokeh.models import ColumnDataSource, CustomJS, HoverTool, LinearAxis, Range1d, TapTool
from bokeh.models.annotations.geometry import BoxAnnotation, Span
from bokeh.models.annotations.labels import LabelSet
from bokeh.models.annotations.legends import Legend, LegendItem
from bokeh.models.renderers.glyph_renderer import GlyphRenderer
from bokeh.plotting import figure

OBSERVED, FORECAST, BAND, PREVIOUS = "#000000", "#0072B2", "#56B4E9", "#E69F00"
THRESHOLD_COLOURS = ("#D55E00", "#CC79A7", "#882255", "#009E73")
SKILL_LINES = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#000000")  # one per lead of a week
LINE_DASHES = ("solid", "dashed", "dotted")  # more leads than colours: the colours again, dashed, then dotted
TOOLS = "pan,wheel_zoom,box_zoom,reset"
EARTH_RADIUS_M = 6_378_137.0
# the map's source: position (Web Mercator metres), fill colour, marker, outline colour, and the hover's texts
MAP_COLUMNS = ("x", "y", "colour", "marker", "line", "station", "name", "summary")


def web_mercator(lon: np.ndarray, lat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Longitudes and latitudes (degrees) as Web Mercator metres, the projection of bokeh's map axes."""
    lon, lat = np.asarray(lon, dtype=np.float64), np.clip(np.asarray(lat, dtype=np.float64), -85.0, 85.0)
    return EARTH_RADIUS_M * np.radians(lon), EARTH_RADIUS_M * np.log(np.tan(np.pi / 4 + np.radians(lat) / 2))


def station_map(outlines: dict[str, list] | None = None) -> figure:
    """Stations as markers on Web Mercator axes (longitude and latitude ticks); a tap selects one.

    The markers' source (``stations``) is empty here: the page's script fills it from the page's data
    (:data:`MAP_COLUMNS`), so that no text of the data passes through bokeh's document. ``outlines``
    (``xs``, ``ys``, metres) are lines drawn under the markers.
    """
    plot = figure(x_axis_type="mercator", y_axis_type="mercator", tools=TOOLS, match_aspect=True,
                  sizing_mode="stretch_width", height=420, name="map", toolbar_location="above")
    if outlines is not None:
        plot.multi_line("xs", "ys", source=ColumnDataSource(outlines), line_color="#9e9e9e", line_width=0.8)
    source = ColumnDataSource({column: [] for column in MAP_COLUMNS}, name="stations")
    markers = plot.scatter("x", "y", source=source, marker="marker", size=11, fill_color="colour",
                           line_color="line", line_width=1.2, name="markers")
    markers.selection_glyph = markers.glyph.clone(line_width=3.5, line_color="#000000", size=17)
    markers.nonselection_glyph = markers.glyph.clone()
    plot.add_tools(TapTool(renderers=[markers]),
                   HoverTool(renderers=[markers], tooltips=[("", "@name"), ("id", "@station"), ("", "@summary")]))
    source.selected.js_on_change("indices", CustomJS(code="window.hydroseq && hydroseq.fromMap(cb_obj.indices)"))
    plot.xaxis.axis_label, plot.yaxis.axis_label = "longitude", "latitude"
    _quiet(plot)
    return plot


def hydrograph(issue_ms: float | None, x_label: str, markers: bool = True) -> figure:
    """One station's hydrograph: observed, forecast median with its bands (or members), the previous forecast
    and the flood thresholds, in m³/s with the depth rate on the right-hand axis; filled by the page's script."""
    plot = figure(x_axis_type="datetime", tools=TOOLS, sizing_mode="stretch_width", height=380,
                  name="hydrograph", x_range=Range1d(start=0, end=1, name="x_range"),
                  y_range=Range1d(start=0, end=1, name="y_range"),
                  toolbar_location="above")
    for end in ("start", "end"):  # the depth-rate axis follows the discharge axis when zooming
        plot.y_range.js_on_change(end, CustomJS(code="window.hydroseq && hydroseq.syncDepth()"))
    plot.extra_y_ranges = {"depth": Range1d(start=0, end=1, name="depth_range")}
    plot.add_layout(LinearAxis(y_range_name="depth", name="depth_axis", axis_label="mm/d"), "right")
    plot.yaxis[0].name = "y_axis"
    forecast = ColumnDataSource({name: [] for name in ("x", "median", "low90", "high90", "low50", "high50")},
                                name="forecast_data")
    observed = ColumnDataSource({"x": [], "y": []}, name="observed_data")
    previous = ColumnDataSource({"x": [], "y": []}, name="previous_data")
    members = ColumnDataSource({"xs": [], "ys": []}, name="members_data")
    thresholds = ColumnDataSource({"y": [], "label": [], "colour": []}, name="thresholds_data")
    items: dict[str, GlyphRenderer] = {
        "90 % band": plot.varea("x", "low90", "high90", source=forecast, fill_color=BAND, fill_alpha=0.35),
        "50 % band": plot.varea("x", "low50", "high50", source=forecast, fill_color=FORECAST, fill_alpha=0.35),
        "members": plot.multi_line("xs", "ys", source=members, line_color=FORECAST, line_alpha=0.45, line_width=1),
        "thresholds": plot.hspan("y", source=thresholds, line_color="colour", line_dash="dashed", line_width=1.5),
        "previous forecast": plot.line("x", "y", source=previous, line_color=PREVIOUS, line_width=2,
                                       line_dash="dotdash"),
        "observed": plot.line("x", "y", source=observed, line_color=OBSERVED, line_width=1.6),
        "forecast median": plot.line("x", "median", source=forecast, line_color=FORECAST, line_width=2.5),
    }
    dots = plot.scatter("x", "median", source=forecast, size=7, fill_color=FORECAST, line_color="white",
                        visible=markers)
    plot.scatter("x", "y", source=previous, size=6, marker="diamond", fill_color=PREVIOUS, line_color=PREVIOUS)
    plot.add_layout(LabelSet(x=4, x_units="screen", y="y", text="label", source=thresholds, text_font_size="11px",
                             text_color="colour", y_offset=2, text_baseline="bottom"))
    if issue_ms is not None:  # the forecast's part of the chart, shaded from the issue time on
        plot.add_layout(BoxAnnotation(left=issue_ms, fill_color=PREVIOUS, fill_alpha=0.10, line_alpha=0))
        plot.add_layout(Span(location=issue_ms, dimension="height", line_color="#555555", line_dash="dotted",
                             line_width=1.5, name="issue_line"))
    plot.add_layout(Legend(items=[LegendItem(label=label, renderers=[renderer], name=f"legend {label}")
                                  for label, renderer in items.items()], name="legend", orientation="horizontal",
                           label_text_font_size="11px", spacing=8, margin=4, border_line_alpha=0), "below")
    plot.add_tools(HoverTool(renderers=[items["observed"], dots, items["previous forecast"]],
                             tooltips=[("", "$name"), ("time", "@x{%F %H:%M}"), ("value", "$y{0.000}")],
                             formatters={"@x": "datetime"}))
    items["observed"].name, dots.name, items["previous forecast"].name = "observed", "forecast", "previous forecast"
    plot.xaxis.axis_label = x_label
    _quiet(plot)
    return plot


def reliability_diagram(curves: dict[str, dict[str, list]]) -> figure:
    """Observed frequency against forecast probability, one line per lead (``curves[lead text]``: ``forecast``,
    ``observed``, ``count``), the diagonal a reliable forecast follows."""
    plot = figure(tools=TOOLS, x_range=Range1d(start=0, end=1), y_range=Range1d(start=0, end=1),
                  sizing_mode="stretch_width", height=330, name="reliability")
    plot.line([0, 1], [0, 1], line_color="#999999", line_dash="dashed", legend_label="perfectly reliable")
    for k, (lead, curve) in enumerate(curves.items()):  # every lead, however many
        colour, dash = SKILL_LINES[k % len(SKILL_LINES)], LINE_DASHES[k // len(SKILL_LINES) % len(LINE_DASHES)]
        source = ColumnDataSource(curve)
        plot.line("forecast", "observed", source=source, line_color=colour, line_width=2, line_dash=dash,
                  legend_label=lead)
        plot.scatter("forecast", "observed", source=source, fill_color=colour, line_color=colour, size=7,
                     legend_label=lead)
    plot.add_tools(HoverTool(tooltips=[("forecast", "@forecast{0.00}"), ("observed", "@observed{0.00}"),
                                       ("forecasts", "@count")]))
    plot.xaxis.axis_label, plot.yaxis.axis_label = "forecast probability", "observed frequency"
    plot.legend.location = "top_left"
    plot.legend[0].name = "reliability_legend"
    _quiet(plot)
    return plot


def pit_histogram(counts: list[int]) -> figure:
    """The PIT histogram of one lead (the page's lead selector refills ``pit``); flat for a calibrated forecast."""
    n_bins = len(counts)
    edges = np.linspace(0, 1, n_bins + 1)
    source = ColumnDataSource({"left": edges[:-1], "right": edges[1:], "count": counts}, name="pit")
    plot = figure(tools=TOOLS, x_range=Range1d(start=0, end=1), sizing_mode="stretch_width", height=330,
                  name="pit_plot")
    plot.quad(left="left", right="right", top="count", bottom=0, source=source, fill_color=BAND, line_color=FORECAST)
    flat = sum(counts) / n_bins if n_bins else math.nan
    plot.add_layout(Span(location=flat, dimension="width", line_color="#555555", line_dash="dashed", name="pit_flat"))
    plot.xaxis.axis_label, plot.yaxis.axis_label = "PIT (the forecast's probability of the observed value)", "count"
    _quiet(plot)
    return plot


def _quiet(plot: figure) -> None:
    """No scroll-zoom (the page scrolls), no bokeh logo. Titles are the page's headings (HTML wraps them on a
    phone, a chart's title would widen it)."""
    plot.toolbar.logo = None
    plot.toolbar.active_scroll = None
