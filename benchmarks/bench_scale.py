"""Growth of cost with the number of stations: ingest, train, export, forecast on replicated basins.

Run from the project root::

    .venv/bin/python -m benchmarks.bench_scale [--stations 31 300 3000] [--steps 50] [--workers N]

For each station count N the 31 real Caravan CAMELS-US basins (``data/daily_caravan_camels_us/``)
are replicated cyclically: station k is basin k mod 31 under the id ``<basin>_r<k // 31:03d>``,
its CSV the real file unchanged (a hard link, or a copy where links are not possible) and its row
of the station table the real row with the new id. Every figure is thus for real records
replicated, not for N different basins: the values, gaps and lengths repeat every 31 stations.
The ingest config is ``configs/ingest_caravan_daily.yaml`` with its two paths pointed at the
replicas, everything else identical. Then, each stage a process of its own whose peak resident
memory is the kernel's ``ru_maxrss`` of that child (``os.wait4``; this process stays small, about
20 MiB, because a child's figure starts from its parent's, see :func:`run_stage`):

* ``ingest``: ``hydroseq ingest`` (serial, or on ``--workers`` dask workers: their memory is then
  in the figure only as far as the largest process the ingest reaped, never summed); output size
  is the NetCDF file's;
* ``first batch``: ``benchmarks.first_batch``: load the training data (dataset, scalers, sample
  index) and draw the loader's first batch, timed from after the imports, with its own empty
  sample-index cache (what a first training run pays before its first step);
* ``train``: ``hydroseq train`` of ``configs/train_caravan_forecast.yaml`` shortened to one epoch
  of ``--steps`` batches, one member (validation over every station, the final validation report
  and the logged model included), its MLflow store, caches and outputs in the work folder; the
  epoch's training-loop and validation seconds are those the run logged to MLflow;
* ``export``: ``hydroseq export`` of that run at the training ``seq_len``;
* ``forecast``: ``hydroseq forecast`` of every station for one issue time.

Seconds are wall seconds of the whole child (Python and torch imports included). Also reported:
the float32 size of the arrays the model reads (stations x steps x (per-step features + 1 target)
x 4 bytes; the features are the dynamic inputs, the observed discharge and its flag, and the static
attributes written on each step) and of the ingested variables (stations x steps x variables x 4
bytes), and the training peak RSS over each. A stage grows "linearly or better" when its log-log
slope between the two largest sizes is at most 1.1.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import math
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table

from benchmarks.child import log_tail

REPO_ROOT = Path(__file__).resolve().parents[1]
INGEST_CONFIG = REPO_ROOT / "configs" / "ingest_caravan_daily.yaml"
TRAIN_CONFIG = REPO_ROOT / "configs" / "train_caravan_forecast.yaml"
CARAVAN = REPO_ROOT / "data" / "daily_caravan_camels_us"
STATION_TABLE = REPO_ROOT / "data" / "stations" / "caravan_camels_us.csv"
ISSUE_TIME = "2014-09-30"
STAGES = ("ingest", "first batch", "train", "export", "forecast")
LINEAR_SLOPE = 1.1
FLOOR_MARGIN = 1.2
MIB = 2**20


def replicate_stations(folder: Path, count: int) -> tuple[Path, Path]:
    """``count`` station CSVs (station k: basin k mod 31, real values) and their station table."""
    with STATION_TABLE.open(newline="") as source:
        table = {row["station_id"]: row for row in csv.DictReader(source)}
    basins = sorted(path.stem for path in CARAVAN.glob("[0-9]*.csv"))
    csv_folder = folder / "csv"
    csv_folder.mkdir(parents=True, exist_ok=True)
    station_table = folder / "stations.csv"
    with station_table.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(next(iter(table.values()))))
        writer.writeheader()
        for k in range(count):
            basin = basins[k % len(basins)]
            station_id = f"{basin}_r{k // len(basins):03d}"
            target = csv_folder / f"{station_id}.csv"
            try:
                os.link(CARAVAN / f"{basin}.csv", target)
            except OSError:
                target.write_bytes((CARAVAN / f"{basin}.csv").read_bytes())
            writer.writerow({**table[basin], "station_id": station_id})
    return csv_folder, station_table


def write_configs(folder: Path, csv_folder: Path, station_table: Path, steps: int) -> tuple[Path, Path, Path, str]:
    """The ingest config (two paths rewritten), the shortened train config and its first-batch twin
    (own sample-index cache); returns their paths and the MLflow tracking URI."""
    ingest = yaml.safe_load(INGEST_CONFIG.read_text())
    ingest["stations"]["path"] = str(station_table)
    (source,) = ingest["sources"]
    source["path"] = str(csv_folder / Path(source["path"]).name)
    ingest_path = folder / "ingest.yaml"
    ingest_path.write_text(yaml.safe_dump(ingest, sort_keys=False))
    train = yaml.safe_load(TRAIN_CONFIG.read_text())
    tracking_uri = f"sqlite:///{folder / 'mlruns.db'}"
    train["data"]["cache_dir"] = str(folder / "cache")
    train["training"].update(epochs=1, ensemble=1, max_batches_per_epoch=steps, output_dir=str(folder / "train"))
    train["tracking"].update(tracking_uri=tracking_uri, artifact_root=str(folder / "mlartifacts"))
    train_path = folder / "train.yaml"
    train_path.write_text(yaml.safe_dump(train, sort_keys=False))
    train["data"]["cache_dir"] = str(folder / "cache_first_batch")
    first_batch_path = folder / "train_first_batch.yaml"
    first_batch_path.write_text(yaml.safe_dump(train, sort_keys=False))
    return ingest_path, train_path, first_batch_path, tracking_uri


def run_stage(command: list[str], log_path: Path) -> tuple[float, float, float, str]:
    """Run one stage; (wall seconds, its peak RSS MiB from ``os.wait4``, the floor of that figure, its
    stdout). Raises if it fails.

    Linux carries a process's peak RSS over ``execve``, so a child's ``ru_maxrss`` is at least this
    process's peak when it was started: the floor returned. This process therefore imports neither
    pandas nor torch; a stage whose peak is near the floor is flagged.
    """
    floor = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with log_path.open("w") as log:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True, cwd=REPO_ROOT)
        assert child.stdout is not None
        stdout = child.stdout.read()  # until the child closes it; then reap it with its resource usage
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {child.returncode}:\n{stdout[-2000:]}\n{log_tail(log_path)}")
    return seconds, usage.ru_maxrss / 1024, floor, stdout


def measure(count: int, folder: Path, steps: int, workers: int | None) -> dict[str, Any]:
    """Every stage for ``count`` replicated stations in ``folder``; the figures of that size."""
    folder.mkdir(parents=True, exist_ok=True)
    csv_folder, station_table = replicate_stations(folder, count)
    ingest_path, train_path, first_batch_path, tracking_uri = write_configs(folder, csv_folder, station_table, steps)
    hydroseq = [sys.executable, "-m", "hydroseq", "--json"]
    data = folder / "ingested.nc"
    stages: dict[str, dict[str, float]] = {}

    def stage(name: str, command: list[str]) -> dict[str, Any]:
        seconds, peak, floor, stdout = run_stage(command, folder / f"{name.replace(' ', '_')}.log")
        stages[name] = {"seconds": seconds, "peak_rss_mib": peak, "peak_rss_floor_mib": floor}
        return dict(json.loads(stdout))

    stage("ingest", [*hydroseq, "ingest", "--config", str(ingest_path), "--out", str(data),
                     *(("--workers", str(workers)) if workers else ())])
    stages["ingest"]["output_mib"] = data.stat().st_size / MIB
    shape = stage("first batch", [sys.executable, "-m", "benchmarks.first_batch", "--config", str(first_batch_path),
                                  "--data", str(data)])
    stages["first batch"].update(load_s=shape["load_s"], first_batch_s=shape["first_batch_s"])
    run_id = stage("train", [*hydroseq, "train", "--config", str(train_path), "--data", str(data)])["run_id"]
    stages["train"].update(epoch_seconds(folder / "mlruns.db", run_id))
    seq_len = yaml.safe_load(train_path.read_text())["data"]["seq_len"]
    stage("export", [*hydroseq, "export", "--run", run_id, "--seq-len", str(seq_len), "--out", str(folder / "model"),
                     "--tracking-uri", tracking_uri])
    stage("forecast", [*hydroseq, "forecast", "--model", str(folder / "model"), "--data", str(data),
                       "--issue-time", ISSUE_TIME, "--out", str(folder / "forecast" / f"forecast_{ISSUE_TIME}.nc")])
    variables = len(yaml.safe_load(ingest_path.read_text())["sources"][0]["variables"])
    model_mib = shape["stations"] * shape["steps"] * (shape["features"] + 1) * 4 / MIB
    ingested_mib = shape["stations"] * shape["steps"] * variables * 4 / MIB
    peak = stages["train"]["peak_rss_mib"]
    return {"stations": count, "steps": shape["steps"], "features": shape["features"],
            "feature_names": shape["feature_names"], "ingested_variables": variables, "stages": stages,
            "model_arrays_float32_mib": model_mib, "ingested_float32_mib": ingested_mib,
            "train_peak_over_model_arrays": peak / model_mib, "train_peak_over_ingested": peak / ingested_mib}


def epoch_seconds(store: Path, run_id: str) -> dict[str, float]:
    """The training-loop and validation seconds of the run's one epoch, as the run logged them (read
    from the SQLite store directly: importing MLflow or torch here would raise the floor of every
    later child's peak RSS, see :func:`run_stage`)."""
    with contextlib.closing(sqlite3.connect(store)) as connection:
        rows = dict(connection.execute("SELECT key, value FROM metrics WHERE run_uuid = ? AND key IN "
                                       "('epoch_seconds', 'val_seconds')", (run_id,)).fetchall())
    return {"epoch_train_s": rows["epoch_seconds"], "epoch_validation_s": rows["val_seconds"]}


def slopes(runs: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per stage, the log-log slope of seconds and of peak RSS between the two largest sizes."""
    if len(runs) < 2:
        return {}
    small, large = sorted(runs, key=lambda run: run["stations"])[-2:]
    ratio = math.log(large["stations"] / small["stations"])
    return {name: {key: math.log(large["stages"][name][key] / small["stages"][name][key]) / ratio
                   for key in ("seconds", "peak_rss_mib")} for name in STAGES}


def print_run(run: dict[str, Any], console: Console) -> None:
    """The table of one size: a row per stage."""
    count = run["stations"]
    table = Table(title=f"{count} stations ({count / 31:g} x the 31 real basins), {run['steps']} daily steps")
    for column in ("stage", "seconds", "peak RSS MiB", "ms / station", "notes"):
        table.add_column(column, justify="left" if column in ("stage", "notes") else "right")
    for name in STAGES:
        figures = run["stages"][name]
        notes = {"ingest": f"output {figures.get('output_mib', 0):.0f} MiB",
                 "first batch": f"load {figures.get('load_s', 0):.1f} s, first batch "
                                f"{figures.get('first_batch_s', 0):.1f} s after imports",
                 "train": f"epoch: loop {figures.get('epoch_train_s', 0):.1f} s, validation "
                          f"{figures.get('epoch_validation_s', 0):.1f} s"}.get(name, "")
        if figures["peak_rss_mib"] < FLOOR_MARGIN * figures["peak_rss_floor_mib"]:
            notes += f" (peak RSS near this process's {figures['peak_rss_floor_mib']:.0f} MiB: an upper bound)"
        table.add_row(name, f"{figures['seconds']:.1f}", f"{figures['peak_rss_mib']:,.0f}",
                      f"{1000 * figures['seconds'] / count:.1f}", notes)
    console.print(table)
    console.print(f"model arrays (float32, {run['features']} features + target): "
                  f"{run['model_arrays_float32_mib']:,.0f} MiB; ingested variables (float32, "
                  f"{run['ingested_variables']}): {run['ingested_float32_mib']:,.0f} MiB; train peak RSS / model "
                  f"arrays = {run['train_peak_over_model_arrays']:.2f}, / ingested = "
                  f"{run['train_peak_over_ingested']:.2f}", highlight=False)


def plot(runs: list[dict[str, Any]], path: Path) -> None:
    """Log-log seconds and peak RSS against stations, one line per stage, a dashed slope-1 reference."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    counts = [run["stations"] for run in runs]
    figure, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    for axis, key, label in ((axes[0], "seconds", "wall seconds"), (axes[1], "peak_rss_mib", "peak RSS (MiB)")):
        for name in STAGES:
            axis.plot(counts, [run["stages"][name][key] for run in runs], marker="o", label=name)
        top = max(run["stages"][name][key] for run in runs[:1] for name in STAGES)
        axis.plot(counts, [top * count / counts[0] for count in counts], "k--", label="linear (slope 1)")
        axis.set(xscale="log", yscale="log", xlabel="stations (replicated real basins)", ylabel=label)
        axis.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    figure.suptitle("hydroseq: cost against stations (31 real Caravan basins replicated)")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


def main(argv: list[str] | None = None) -> int:
    """Run every size, print the tables and the growth, write the JSON and the plot."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stations", type=int, nargs="+", default=[31, 300, 3000])
    parser.add_argument("--steps", type=int, default=50, help="training batches (one epoch, one member)")
    parser.add_argument("--out-dir", type=Path, default=None, help="work folder, kept (default: a temporary one)")
    parser.add_argument("--workers", type=int, default=None, help="ingest on a local dask cluster of N workers")
    parser.add_argument("--json", type=Path, default=REPO_ROOT / "benchmarks" / "results" / "scale.json")
    parser.add_argument("--plot", type=Path, default=REPO_ROOT / "docs" / "images" / "scale.png")
    args = parser.parse_args(argv)
    console = Console(width=max(Console().width, 130))
    with tempfile.TemporaryDirectory(prefix="bench_scale_") as temporary:
        work = (args.out_dir or Path(temporary)).absolute()
        runs = []
        for count in sorted(set(args.stations)):
            runs.append(measure(count, work / f"n{count}", args.steps, args.workers))
            print_run(runs[-1], console)
    growth = slopes(runs)
    for name, slope in growth.items():
        verdict = "linear or better" if max(slope.values()) <= LINEAR_SLOPE else "worse than linear"
        console.print(f"{name}: log-log slope {slope['seconds']:.2f} (seconds), {slope['peak_rss_mib']:.2f} "
                      f"(peak RSS) between the two largest sizes: {verdict}", highlight=False)
    figures = {"what": "31 real Caravan CAMELS-US basins replicated cyclically (values unchanged)",
               "train_steps": args.steps, "workers": args.workers, "issue_time": ISSUE_TIME, "runs": runs,
               "slopes_two_largest": growth, "linear_if_slope_at_most": LINEAR_SLOPE}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(figures, indent=1))
    plot(runs, args.plot)
    console.print(f"figures: {args.json}; plot: {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
