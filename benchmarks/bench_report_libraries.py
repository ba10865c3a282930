"""Which plotting library the forecast page is built on: page size, time to write and time to interactive.

Run from the project root (the libraries not installed are left out)::

    pip install plotly bokeh altair vl-convert-python
    .venv/bin/python -m benchmarks.bench_report_libraries [--stations 31 1000] [--repeats 3]

Each library writes the same minimal page as one self-contained HTML file (its JavaScript inline,
no network): a map of ``N`` stations coloured by a probability, and the hydrograph of the selected
station (60 observed days, the median and the 50 % and 90 % bands of 3 leads); clicking a marker
redraws the hydrograph from data embedded for every station. The stations are synthetic (positions
over the conterminous US, random flows): only the amount of data matters here.

Measured, medians of ``--repeats``: the seconds to build and write the page, its size, and the
milliseconds from the start of the navigation until the map's markers are drawn in headless
Chromium (:mod:`benchmarks.browser`), then until a click on a marker has redrawn the hydrograph.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from benchmarks.browser import chromium, file_url, page_session

LEADS, LEVELS, HISTORY = 3, (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95), 60


def synthetic_stations(n: int, seed: int = 0) -> list[dict]:
    """``n`` stations: id, lon/lat, a probability, 60 observed days and ``[lead][level]`` quantiles."""
    rng = np.random.default_rng(seed)
    stations = []
    for s in range(n):
        observed = np.round(np.exp(rng.normal(1.0, 0.8) + np.cumsum(rng.normal(0, 0.1, HISTORY))), 3)
        median = observed[-1] * np.exp(rng.normal(0, 0.2, LEADS))
        spread = np.asarray([-1.64, -1.28, -0.67, 0.0, 0.67, 1.28, 1.64])
        widening = np.sqrt(np.arange(1, LEADS + 1))[:, None]
        quantiles = np.round(median[:, None] * np.exp(0.3 * spread[None, :] * widening), 3)
        stations.append({"id": f"{s:08d}", "lon": round(float(rng.uniform(-124, -67)), 4),
                         "lat": round(float(rng.uniform(25, 49)), 4), "p": round(float(rng.uniform()), 3),
                         "observed": observed.tolist(), "quantiles": quantiles.tolist()})
    return stations


DAYS = [str(np.datetime64("2014-10-01") - np.timedelta64(HISTORY - d, "D")) for d in range(HISTORY)]
LEAD_DAYS = ["2014-10-02", "2014-10-03", "2014-10-04"]

PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>bench</title>{head}</head>
<body><div id="map" style="width:600px;height:400px"></div><div id="hydrograph" style="width:600px;height:300px"></div>
<script type="application/json" id="data">{data}</script>{body}</body></html>"""


def plotly_page(stations: list[dict], path: Path) -> None:
    """plotly.js inline; the page's own script draws both charts with ``Plotly.newPlot``."""
    from plotly.offline import get_plotlyjs

    script = """<script>
const S = JSON.parse(document.getElementById('data').textContent), D = DAYS_JSON, L = LEADS_JSON;
function traces(s) {
  const q = k => s.quantiles.map(row => row[k]);
  return [{x: D, y: s.observed, name: 'observed', mode: 'lines'},
          {x: L, y: q(0), mode: 'lines', line: {width: 0}, showlegend: false},
          {x: L, y: q(6), mode: 'lines', fill: 'tonexty', name: '90 %', line: {width: 0}},
          {x: L, y: q(2), mode: 'lines', line: {width: 0}, showlegend: false},
          {x: L, y: q(4), mode: 'lines', fill: 'tonexty', name: '50 %', line: {width: 0}},
          {x: L, y: q(3), mode: 'lines+markers', name: 'median'}];
}
Plotly.newPlot('map', [{type: 'scatter', mode: 'markers', x: S.map(s => s.lon), y: S.map(s => s.lat),
  marker: {color: S.map(s => s.p), colorscale: 'Viridis', size: 9}}],
  {xaxis: {title: 'lon'}, yaxis: {title: 'lat', scaleanchor: 'x'}, margin: {t: 10}}, {responsive: true})
  .then(() => Plotly.newPlot('hydrograph', traces(S[0]), {margin: {t: 10}}))
  .then(() => { window.hydroseqReady = performance.now(); });
document.getElementById('map').on('plotly_click', event => {
  Plotly.react('hydrograph', traces(S[event.points[0].pointIndex]), {margin: {t: 10}})
    .then(() => { window.clicked = performance.now(); });
});
</script>""".replace("DAYS_JSON", json.dumps(DAYS)).replace("LEADS_JSON", json.dumps(LEAD_DAYS))
    path.write_text(PAGE.format(head=f"<script>{get_plotlyjs()}</script>", data=json.dumps(stations), body=script))


def bokeh_page(stations: list[dict], path: Path) -> None:
    """bokeh with its resources inline; a ``CustomJS`` on the map's selection refills the hydrograph's sources."""
    import pandas as pd
    from bokeh.embed import file_html
    from bokeh.layouts import column
    from bokeh.models import ColumnDataSource, CustomJS, LinearColorMapper, TapTool
    from bokeh.plotting import figure
    from bokeh.resources import INLINE

    days, lead_days = pd.to_datetime(DAYS), pd.to_datetime(LEAD_DAYS)
    positions = ColumnDataSource({"lon": [s["lon"] for s in stations], "lat": [s["lat"] for s in stations],
                                  "p": [s["p"] for s in stations]})
    mapper = LinearColorMapper(palette="Viridis256", low=0, high=1)
    site_map = figure(width=600, height=400, tools="tap", match_aspect=True, name="map")
    site_map.scatter("lon", "lat", source=positions, size=9, color={"field": "p", "transform": mapper})
    first = stations[0]
    observed = ColumnDataSource({"x": days, "y": first["observed"]})
    band = ColumnDataSource({"x": lead_days, **{f"q{k}": [row[k] for row in first["quantiles"]] for k in range(7)}})
    hydrograph = figure(width=600, height=300, x_axis_type="datetime")
    hydrograph.line("x", "y", source=observed)
    hydrograph.varea("x", "q0", "q6", source=band, alpha=0.3)
    hydrograph.varea("x", "q2", "q4", source=band, alpha=0.5)
    hydrograph.line("x", "q3", source=band)
    every = ColumnDataSource({"observed": [s["observed"] for s in stations],
                              "quantiles": [s["quantiles"] for s in stations]})
    redraw = {"every": every, "observed": observed, "band": band}
    positions.selected.js_on_change("indices", CustomJS(args=redraw, code="""
        const i = cb_obj.indices[0]; if (i === undefined) return;
        observed.data = {x: observed.data.x, y: every.data.observed[i]};
        const rows = every.data.quantiles[i], data = {x: band.data.x};
        for (let k = 0; k < 7; k++) data['q' + k] = rows.map(row => row[k]);
        band.data = data; window.clicked = performance.now();"""))
    site_map.select(TapTool)
    html = file_html(column(site_map, hydrograph), INLINE, "bench")
    ready = """<script>(function poll() {
      if (window.Bokeh && Bokeh.documents.length && Bokeh.documents[0].is_idle) {
        window.hydroseqReady = performance.now(); }
      else requestAnimationFrame(poll); })();</script>"""
    head, _, tail = html.rpartition("</body>")  # the last one: the inline JavaScript may hold the text too
    path.write_text(head + ready + "</body>" + tail)


def altair_page(stations: list[dict], path: Path) -> None:
    """vega-lite through altair, vega's JavaScript inline (vl-convert's bundle); a point selection on the
    map filters the hydrograph's rows (every station's, in long form)."""
    import altair as alt
    import pandas as pd

    alt.data_transformers.disable_max_rows()  # every station's rows are embedded (63,000 at 1,000 stations)
    positions = pd.DataFrame({"id": [s["id"] for s in stations], "lon": [s["lon"] for s in stations],
                              "lat": [s["lat"] for s in stations], "p": [s["p"] for s in stations]})
    rows = []
    for s in stations:
        rows += [{"id": s["id"], "time": day, "observed": value}
                 for day, value in zip(DAYS, s["observed"], strict=True)]
        rows += [{"id": s["id"], "time": day, **{f"q{k}": row[k] for k in range(7)}}
                 for day, row in zip(LEAD_DAYS, s["quantiles"], strict=True)]
    series = pd.DataFrame(rows)
    pick = alt.selection_point(fields=["id"], value=stations[0]["id"], name="pick")
    site_map = alt.Chart(positions).mark_circle(size=60).encode(
        longitude="lon:Q", latitude="lat:Q", color=alt.Color("p:Q", scale=alt.Scale(scheme="viridis"))
    ).project("albersUsa").add_params(pick).properties(width=600, height=400)
    base = alt.Chart(series).transform_filter(pick).encode(x="time:T")
    hydrograph = alt.layer(base.mark_line().encode(y="observed:Q"),
                           base.mark_area(opacity=0.3).encode(y="q0:Q", y2="q6"),
                           base.mark_area(opacity=0.5).encode(y="q2:Q", y2="q4"),
                           base.mark_line().encode(y="q3:Q")).properties(width=600, height=300)
    html = alt.vconcat(site_map, hydrograph).to_html(inline=True)
    ready = """<script>(function poll() {
      if (document.querySelector('canvas, svg.marks')) { window.hydroseqReady = performance.now(); }
      else requestAnimationFrame(poll); })();</script>"""
    head, _, tail = html.rpartition("</body>")  # the last one: the inline JavaScript may hold the text too
    path.write_text(head + ready + "</body>" + tail)


# name: (module, page builder, the element the map is drawn in: its top 400 px)
LIBRARIES: dict[str, tuple[str, Callable[[list[dict], Path], None], str]] = {
    "plotly": ("plotly", plotly_page, "#map"), "bokeh": ("bokeh", bokeh_page, "body"),
    "altair (vega-lite)": ("altair", altair_page, "body")}


def installed(module: str) -> str | None:
    """The version of ``module``, None if it is not installed."""
    try:
        imported = __import__(module)
    except ImportError:
        return None
    return str(getattr(imported, "__version__", "?"))


def measure(build: Callable[[list[dict], Path], None], map_selector: str, stations: list[dict], folder: Path,
            repeats: int, browser: object) -> dict[str, float]:
    """Median seconds to write, bytes, and median milliseconds to interactive and to a redrawn hydrograph."""
    path = folder / "page.html"
    write_s, ready_ms, click_ms = [], [], []
    for _ in range(repeats):
        start = time.perf_counter()
        build(stations, path)
        write_s.append(time.perf_counter() - start)
        with page_session(browser) as session:
            ready_ms.append(session.open(file_url(path)))
            click_ms.append(_click_marker(session, map_selector))
            assert not session.console_errors, session.console_errors
            assert session.requests == [file_url(path)], session.requests
    return {"write_s": statistics.median(write_s), "bytes": path.stat().st_size,
            "interactive_ms": statistics.median(ready_ms), "click_ms": statistics.median(click_ms)}


def _click_marker(session: object, map_selector: str) -> float:
    """Click around the middle of the map until the hydrograph is redrawn; milliseconds from the click
    (NaN: no marker hit, or the library's page does not report a redraw)."""
    page = session.page  # type: ignore[attr-defined]
    box = page.locator(map_selector).first.bounding_box()
    box["width"], box["height"] = min(box["width"], 600), min(box["height"], 400)
    for dx in range(-150, 151, 4):
        for dy in (-60, -30, 0, 30, 60):
            start = page.evaluate("performance.now()")
            page.mouse.click(box["x"] + box["width"] / 2 + dx, box["y"] + box["height"] / 2 + dy)
            if page.evaluate("window.clicked !== undefined"):
                return float(page.evaluate("window.clicked")) - float(start)
    return float("nan")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stations", type=int, nargs="+", default=[31, 1000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None, help="write the figures to this JSON file")
    args = parser.parse_args(argv)
    rows = []
    with chromium() as browser, tempfile.TemporaryDirectory() as folder:
        for name, (module, build, map_selector) in LIBRARIES.items():
            version = installed(module)
            if version is None:
                continue
            for n in args.stations:
                figures = measure(build, map_selector, synthetic_stations(n), Path(folder), args.repeats, browser)
                rows.append({"library": name, "version": version, "stations": n, **figures})
    table = Table(title="one self-contained page per library: map + click-through hydrograph (medians)")
    for column in ("library", "stations", "write (s)", "size (MB)", "interactive (ms)", "click -> redrawn (ms)"):
        table.add_column(column, justify="right" if column != "library" else "left")
    for row in rows:
        table.add_row(f"{row['library']} {row['version']}", str(row["stations"]), f"{row['write_s']:.2f}",
                      f"{row['bytes'] / 1e6:.2f}", f"{row['interactive_ms']:.0f}", f"{row['click_ms']:.0f}")
    Console().print(table)
    result = {"rows": rows}
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
