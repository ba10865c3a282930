"""The forecaster's page at scale: time to write it, its size, and how soon headless Chromium can use it.

Run from the project root::

    .venv/bin/python -m benchmarks.bench_report [--stations 31 1000] [--repeats 3] [--json FILE]

The 31 bundled Caravan basins are ingested (the last ``--days`` local days up to 2014-09-30) and
replicated to each ``--stations`` count (every copy's series rolled by 3 days, as in
``bench_forecast``). A per-step model of the bundled config's size with 7 quantile levels and leads
1-3, freshly initialised with real scalers, is exported and run by ``hydroseq forecast``'s API on
2014-09-29 and 2014-09-30 with two flood thresholds per station, so the page has everything a
forecast page shows: observations, quantile bands, thresholds, probabilities, the previous forecast.
Measured, medians of ``--repeats``:

* ``write``: :func:`hydroseq.report.write_report` (read the forecasts and 60 days of observations,
  build the charts, render, write);
* ``size``: the page's bytes;
* ``interactive``: from the start of the navigation (``file://``) until the page's script has filled
  the map and the table and drawn the first station (``window.hydroseqReady``, :mod:`benchmarks.browser`);
* ``select``: from selecting a station in the table until its hydrograph is redrawn (two frames);
* ``sort``: re-sorting the table by area and back by probability.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import xarray as xr
from rich.console import Console
from rich.table import Table

from benchmarks.bench_forecast import ingest_bundled, replicate, train_config
from benchmarks.browser import chromium, file_url, page_session
from hydroseq.dataset import FeatureLayout, Scalers, load_station_data
from hydroseq.export.exporter import export_trained_model
from hydroseq.export.source import read_provenance
from hydroseq.forecast import run_forecast
from hydroseq.model import get_model
from hydroseq.report import write_report
from hydroseq.training.checkpoint import Checkpoint

LEVELS = [0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95]
SELECT_AND_DRAW = """async (index) => {
  const start = performance.now();
  hydroseq.select(index, 'table');
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  return performance.now() - start;
}"""
SORT = """() => {
  const start = performance.now();
  hydroseq.sortBy('area', 'descending');
  hydroseq.sortBy('risk', 'descending');
  return performance.now() - start;
}"""


def stations_file(bundled: Path, out: Path, count: int) -> Path:
    """``bundled`` replicated to exactly ``count`` stations."""
    replicated = out.with_name(f"{out.stem}_all.nc")
    replicate(bundled, replicated, count)
    with xr.open_dataset(replicated) as dataset:
        dataset.isel(station=slice(0, count)).load().to_netcdf(out)
    replicated.unlink()
    return out


def quantile_model(data: Path, out: Path) -> Path:
    """An untrained per-step quantile model (7 levels, leads 1-3) with scalers fitted on ``data``, exported."""
    config = train_config(data)
    config.data = config.data.model_copy(update={"leads": [1, 2, 3], "lagged_target": True})
    config = config.model_copy(update={
        "model": config.model.model_copy(update={"observed_skip": True, "quantiles": LEVELS}),
        "training": config.training.model_copy(update={"loss": "quantile"})})
    names = FeatureLayout.from_config(config.data).names
    torch.manual_seed(0)
    network = get_model(config.model, len(names), 3, "per_step", data=config.data)
    checkpoint = Checkpoint(network.state_dict(), config, names, 3,
                            Scalers.fit(load_station_data(data, config.data), config.data), "benchmark-untrained")
    export_trained_model(checkpoint, config.data.seq_len, out, read_provenance(data), pt2=False)
    return out


def thresholds_table(data: Path, out: Path) -> Path:
    """Two thresholds per station, its 90th and 99th percentile flow."""
    with xr.open_dataset(data) as dataset:
        flows = dataset["streamflow"].load()
    levels = flows.quantile([0.9, 0.99], dim="time", skipna=True)
    column = f"discharge [{flows.attrs['units']}]"  # the table names its units
    rows = [{"station": str(station), "level": level, column: float(levels.sel(station=station, quantile=q))}
            for station in flows["station"].values for level, q in (("action", 0.9), ("flood", 0.99))]
    pd.DataFrame(rows).dropna().to_csv(out, index=False)
    return out


def measure(count: int, bundled: Path, work: Path, repeats: int, browser: object) -> dict[str, float]:
    """The figures of one station count (see the module docstring)."""
    data = stations_file(bundled, work / f"data_{count}.nc", count)
    model = quantile_model(data, work / f"model_{count}")
    thresholds = thresholds_table(data, work / f"thresholds_{count}.csv")
    forecast, previous = work / f"forecast_{count}.nc", work / f"previous_{count}.nc"
    run_forecast(model, data, "2014-09-30", out=forecast, thresholds=thresholds, show_progress=False)
    run_forecast(model, data, "2014-09-29", out=previous, thresholds=thresholds, show_progress=False)
    page = work / f"page_{count}.html"
    write_s, interactive_ms, select_ms, sort_ms = [], [], [], []
    for _ in range(repeats):
        start = time.perf_counter()
        write_report(page, forecast=forecast, data=data, previous=previous)
        write_s.append(time.perf_counter() - start)
        with page_session(browser) as session:
            interactive_ms.append(session.open(file_url(page), timeout_ms=120_000))
            select_ms.append(float(session.page.evaluate(SELECT_AND_DRAW, count // 2)))
            sort_ms.append(float(session.page.evaluate(SORT)))
            if session.console_errors or session.requests != [file_url(page)]:
                raise RuntimeError(f"{count} stations: {session.console_errors} {session.requests}")
    return {"stations": count, "write_s": statistics.median(write_s), "bytes": page.stat().st_size,
            "interactive_ms": statistics.median(interactive_ms), "select_ms": statistics.median(select_ms),
            "sort_ms": statistics.median(sort_ms)}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stations", type=int, nargs="+", default=[31, 1000])
    parser.add_argument("--days", type=int, default=400, help="local days of data per station")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rows = []
    with tempfile.TemporaryDirectory() as tmp, chromium() as browser:
        work = Path(tmp)
        bundled = ingest_bundled(work / "bundled.nc", args.days)
        for count in args.stations:
            rows.append(measure(count, bundled, work, args.repeats, browser))
    table = Table(title="the forecast page (3 leads, 7 quantiles, 2 thresholds, 60 observed days; medians of "
                        f"{args.repeats})")
    for column in ("stations", "write (s)", "size (MB)", "interactive (ms)", "select a station (ms)",
                   "sort the table twice (ms)"):
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(f"{row['stations']:,}", f"{row['write_s']:.2f}", f"{row['bytes'] / 1e6:.2f}",
                      f"{row['interactive_ms']:.0f}", f"{row['select_ms']:.0f}", f"{row['sort_ms']:.0f}")
    Console().print(table)
    figures = {"repeats": args.repeats, "days": args.days, "rows": rows, "levels": LEVELS,
               "numpy": np.__version__}
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    return figures


if __name__ == "__main__":
    main()
