"""Ingest of a year of daily 7-day GRIB2 weather-forecast runs for the 31 bundled basins.

Run from the project root, on one thread (as the figures in docs/benchmarks.md were measured)::

    OMP_NUM_THREADS=1 taskset -c 0 .venv/bin/python -m benchmarks.bench_grib_ingest [--days 365] [--repeats 1]

Setup, not timed: one run a day at 00 UTC for each of the ``--days`` local days up to 2014-09-30 (365: water
year 2014), 0-``--last-step`` h (240) by ``--step-hours`` (6), ``tp`` and ``2t``, written with ecCodes
(:mod:`benchmarks.grib_runs`; the reanalysis laid out as runs, not a forecast). Timed, median of
``--repeats``: :func:`hydroseq.ingest.ingest` with ``configs/ingest_grib2_hres.yaml`` (31 basins, their
static attributes and drawn outlines, ``extraction: polygons``, ``horizon: 7``) on those local days, reading
every run (each message decoded and checked), extracting the basin means and gridding leads 1-7 of the
newest run at every issue, then writing the NetCDF file with its report and manifest. Target: under 60 s.
The figures: wall and CPU seconds (on a shared machine the CPU time is the steadier one; the load average
says how shared it was), runs and GRIB messages per second, the output's size.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import xarray as xr

from benchmarks.grib_runs import ingest_config, issue_days, publish, write_daily_runs
from hydroseq.ingest import ingest

TARGET_S = 60.0


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365, help="issue days, one run each")
    parser.add_argument("--last-step", type=int, default=240, help="hours: each run's last step")
    parser.add_argument("--step-hours", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        started = time.perf_counter()
        files = write_daily_runs(work / "runs", args.days, args.last_step, args.step_hours)
        write_s = time.perf_counter() - started
        config = ingest_config(work / "runs", *issue_days(args.days), args.last_step, args.step_hours)
        seconds, cpu = [], []
        for repeat in range(args.repeats):
            out = work / f"ingested_{repeat}.nc"
            started, started_cpu = time.perf_counter(), time.process_time()
            ingest(config, out, show_progress=False)
            seconds.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
        with xr.open_dataset(out) as dataset:
            leads, stations = dataset.sizes["lead"], dataset.sizes["station"]
            issues = int(dataset["total_precipitation_sum_forecast"].notnull().any(dim=("station", "lead")).sum())
        steps = args.last_step // args.step_hours + 1
        figures = {"runs": len(files), "steps_per_run": steps, "messages": len(files) * steps * 2,
                   "grib_bytes": sum(path.stat().st_size for path in files), "stations": stations, "leads": leads,
                   "issues_with_a_forecast": issues, "write_runs_s": write_s, "repeats": args.repeats,
                   "ingest_s": sorted(seconds)[len(seconds) // 2], "ingest_s_all": seconds,
                   "ingest_cpu_s": sorted(cpu)[len(cpu) // 2], "load_average": os.getloadavg()[0],
                   "output_bytes": out.stat().st_size, "target_s": TARGET_S}
    figures["runs_per_s"] = figures["runs"] / figures["ingest_s"]
    figures["messages_per_s"] = figures["messages"] / figures["ingest_s"]
    rows = [("hydroseq ingest (s, median)", f"{figures['ingest_s']:.1f}"),
            ("its CPU time (s)", f"{figures['ingest_cpu_s']:.1f}"), ("runs / s", f"{figures['runs_per_s']:.1f}"),
            ("GRIB messages / s", f"{figures['messages_per_s']:,.0f}"),
            ("issues with a forecast", str(figures["issues_with_a_forecast"])),
            ("output (MB)", f"{figures['output_bytes'] / 1e6:.1f}"),
            ("writing the runs (setup, s)", f"{figures['write_runs_s']:.1f}")]
    title = (f"ingest of {figures['runs']} daily GRIB2 runs ({figures['steps_per_run']} steps, "
             f"{figures['grib_bytes'] / 1e6:.1f} MB) for {figures['stations']} basins, leads 1-{figures['leads']}")
    return publish(figures, title, rows, "ingest_s", args.json)


if __name__ == "__main__":
    main()
