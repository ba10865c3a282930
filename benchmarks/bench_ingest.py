"""Ingest throughput: hourly observations per second onto a daily grid, against pandas alone.

Run from the project root::

    .venv/bin/python -m benchmarks.bench_ingest [--stations 24] [--repeats 3]

The real hourly Ebnit rain gauge and Hoher Steg discharge series (10 years, 87,650 hours each,
``data/subdaily_ebnit_at/``) are written as one CSV per station (``time,precip,discharge``) and
replicated to ``--stations`` stations, each with its values shifted by a few hours so the files
are not identical. Measured in the same run, after one warm-up:

* ``pandas read``: ``pandas.read_csv`` of every file with its time column parsed (the floor:
  what reading the same files costs without any ingest logic);
* ``per-station gridding``: plan, read, validate, convert and grid every station (the work a
  dask cluster would share out), without writing anything;
* ``hydroseq ingest``: the whole :func:`hydroseq.ingest.ingest` (plan, read, validate, convert,
  grid with coverage, write NetCDF, report files) to a daily grid with a 09:00 day boundary.
* ``dask, N workers`` (``--workers``, default 1 and 2): the same ingest on a running local dask
  cluster of N single-threaded worker processes, started as ``hydroseq ingest --workers N``
  starts it (its start-up is reported apart, with the workers' peak resident memory).

Medians of ``--repeats`` runs; the ratio is ingest time / pandas time.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from benchmarks.timing import median_seconds
from hydroseq.config import IngestConfig, validate_config
from hydroseq.ingest import build_grid, dask_client, ingest, ingest_station, load_stations, plan_sources

REPO_ROOT = Path(__file__).resolve().parents[1]
EBNIT = REPO_ROOT / "data" / "subdaily_ebnit_at"
FIRST_HOUR = pd.Timestamp("1996-01-01 00:00")  # row 0 (see data/README.md, section 5)
TIME_FORMAT = "%Y-%m-%d %H:%M"


def write_stations(folder: Path, count: int) -> int:
    """One CSV per replicated station and the station table; returns the observations written."""
    rain = pd.read_csv(EBNIT / "p_ebni.csv", header=None)[0].to_numpy()
    flow = pd.read_csv(EBNIT / "q_host.csv", header=None)[0].to_numpy()
    # Interval-end stamps: row i covers hour i, ending at FIRST_HOUR + (i + 1) h.
    stamps = pd.date_range(FIRST_HOUR + pd.Timedelta("1h"), periods=len(rain), freq="1h").strftime(TIME_FORMAT)
    rows = []
    for index in range(count):
        shift = 7 * index
        frame = pd.DataFrame({"time": stamps, "precip": np.roll(rain, shift), "discharge": np.roll(flow, shift)})
        frame.to_csv(folder / f"st{index:04d}.csv", index=False)
        rows.append({"station_id": f"st{index:04d}", "name": f"Ebnit replica {index}", "lat": 47.35,
                     "lon": 9.8, "area_km2": 114.8})
    pd.DataFrame(rows).to_csv(folder / "table.csv", index=False)
    return 2 * len(rain) * count


def config_for(folder: Path) -> IngestConfig:
    """Daily rain days ending 09:00 CET (UTC+1, the gauges' probable zone) over the 10 years."""
    return validate_config({
        "stations": {"path": str(folder / "table.csv")},
        "sources": [{"path": str(folder / "st[0-9]*.csv"), "format": "csv", "station_from_filename": True,
                     "time_column": "time", "time_format": TIME_FORMAT, "frequency": "1h",
                     "timestamp": "interval_end", "timezone": "+01:00", "min_coverage": 0.9,
                     "variables": {"precip": {"source": "precip", "units": "mm", "aggregation": "sum"},
                                   "discharge": {"source": "discharge", "units": "m3/s", "aggregation": "mean"}}}],
        "grid": {"frequency": "1D", "timezone": "+01:00", "day_boundary": "09:00",
                 "start": "1996-01-01", "end": "2005-12-30"},
    }, IngestConfig, source="bench_ingest")


def pandas_read(folder: Path) -> None:
    """The baseline: read every station file with pandas, time column parsed."""
    for path in sorted(folder.glob("st[0-9]*.csv")):
        frame = pd.read_csv(path)
        frame["time"] = pd.to_datetime(frame["time"], format=TIME_FORMAT)


def grid_only(config: IngestConfig) -> None:
    """Plan, read, convert and grid every station; no NetCDF, no report (the per-station work)."""
    grid = build_grid(config.grid)
    stations = load_stations(config.stations)
    plans, _, _ = plan_sources(config, stations)
    for station in stations:
        ingest_station(station, plans[station.id], grid)


def dask_ingest(config: IngestConfig, folder: Path, workers: int, repeats: int) -> dict[str, float]:
    """Median ingest seconds on a local cluster of ``workers`` processes started as ``--workers``
    starts it, its start-up seconds, and the largest peak resident memory of a worker (MiB)."""
    import resource

    start = time.perf_counter()
    with dask_client(workers=workers) as client:
        startup = time.perf_counter() - start
        seconds = median_seconds(lambda: ingest(config, folder / "out" / f"dask{workers}.nc",
                                                scheduler=client.scheduler.address, show_progress=False), repeats)
        peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return {"seconds": seconds, "startup_s": startup, "worker_peak_rss_mib": max(peaks.values())}


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print (and optionally save) the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stations", type=int, default=24)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2], help="dask runs (none: --workers)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        observations = write_stations(folder, args.stations)
        config = config_for(folder)
        baseline = median_seconds(lambda: pandas_read(folder), args.repeats)
        core = median_seconds(lambda: grid_only(config), args.repeats)
        full = median_seconds(lambda: ingest(config, folder / "out" / "bench.nc", show_progress=False), args.repeats)
        on_dask = {n: dask_ingest(config, folder, n, args.repeats) for n in args.workers}
    figures = {"stations": args.stations, "hours_per_station": observations // (2 * args.stations),
               "observations": observations, "repeats": args.repeats,
               "pandas_read_s": round(baseline, 3), "grid_only_s": round(core, 3), "ingest_s": round(full, 3),
               "pandas_obs_per_s": round(observations / baseline), "ingest_obs_per_s": round(observations / full),
               "ingest_over_pandas": round(full / baseline, 2),
               "dask": {str(n): {key: round(value, 3) for key, value in run.items()} for n, run in on_dask.items()}}
    table = Table(title=f"ingest: {args.stations} stations x 10 years hourly -> daily (median of {args.repeats})")
    for column in ("what", "seconds", "observations / s"):
        table.add_column(column, justify="right")
    table.add_row("pandas read_csv + parse times", f"{baseline:.2f}", f"{observations / baseline:,.0f}")
    table.add_row("hydroseq per-station gridding", f"{core:.2f}", f"{observations / core:,.0f}")
    table.add_row("hydroseq ingest (all of it)", f"{full:.2f}", f"{observations / full:,.0f}")
    for n, run in on_dask.items():
        table.add_row(f"ingest on dask, {n} worker(s)", f"{run['seconds']:.2f}",
                      f"{observations / run['seconds']:,.0f}")
    Console().print(table)
    print(f"gridding / pandas = {core / baseline:.2f}, ingest / pandas = {full / baseline:.2f}")
    for n, run in on_dask.items():
        print(f"dask {n} worker(s): serial / dask = {full / run['seconds']:.2f}, cluster start-up "
              f"{run['startup_s']:.1f} s, worker peak RSS {run['worker_peak_rss_mib']:.0f} MiB")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
