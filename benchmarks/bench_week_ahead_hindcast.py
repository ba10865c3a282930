"""A week-ahead hindcast from GRIB2-ingested weather forecasts: 31 basins x 365 issue days x 7 leads.

Run from the project root, on one thread (as the figures in docs/benchmarks.md were measured)::

    OMP_NUM_THREADS=1 taskset -c 0 .venv/bin/python -m benchmarks.bench_week_ahead_hindcast [--model DIR]

Setup, not timed: one deterministic run a day at 00 UTC, 0-240 h by 6 h, for the ``--days`` issue days up to
2014-09-30 (365: water year 2014), written with ecCodes (:mod:`benchmarks.grib_runs`; the reanalysis laid
out as runs, not a forecast), and ingested with ``configs/ingest_grib2_hres.yaml`` (31 basins, outlines,
horizon 7) from 1981 on (the model's 365-day input window, and the training period whose day-of-year
climatology the hindcast's scores need). The model is
``--model``: by default the shipped ``models/caravan-camels-us-daily-week-ahead`` when it is there, else a
stand-in of its layout (``configs/finetune_caravan_week_ahead.yaml``'s data and model sections: hidden
128, roll-out 32, leads 1-7, 7 quantiles, 24 static attributes; one member) trained here for a few batches
and exported with N = 365: the hindcast's cost depends on the network's size and members, not on its weights.

Timed, median of ``--repeats``: :func:`hydroseq.forecast.run_forecast` over the issue range (every station's
365-step window at each issue scaled and run through the ONNX model, the quantiles, the scores against
persistence and climatology, the files written). Target: under 60 s. Figures: wall and CPU seconds,
forecasts (station x issue) per second, the load average (a shared machine's wall time varies with it).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import tempfile
import time
from pathlib import Path

import torch
import yaml

from benchmarks.grib_runs import REPO_ROOT, ingest_config, issue_days, publish, write_daily_runs
from hydroseq.config import TrainConfig, validate_config
from hydroseq.export import ExportMetadata
from hydroseq.export.exporter import export_trained_model
from hydroseq.export.source import read_provenance
from hydroseq.forecast import run_forecast
from hydroseq.ingest import ingest
from hydroseq.training import train
from hydroseq.training.checkpoint import BEST_CHECKPOINT, Checkpoint

SHIPPED = REPO_ROOT / "models" / "caravan-camels-us-daily-week-ahead"
HISTORY_DAYS = 400
RECORD_START = dt.date(1981, 1, 1)  # the hindcast's climatology comes from the model's training period
TARGET_S = 60.0


def stand_in_model(data: Path, work: Path, first_issue: dt.date) -> Path:
    """A model of the week-ahead layout trained for a few batches on ``data`` (its scalers see the runs)."""
    config = yaml.safe_load((REPO_ROOT / "configs" / "finetune_caravan_week_ahead.yaml").read_text())
    del config["training"]["init_from"]
    # the training period holds the runs (the forecast inputs' scalers need them); the model is a stand-in
    day = lambda after: str(first_issue + dt.timedelta(days=after - HISTORY_DAYS))  # noqa: E731
    config["data"].update(path=str(data), cache_dir=str(work / "cache"), splits={
        "test": {"start": day(0), "end": day(29)}, "validation": {"start": day(30), "end": day(150)},
        "train": {"start": day(151), "end": str(issue_days(1)[1])}})
    config["training"].update(epochs=1, max_batches_per_epoch=2, ensemble=1, patience=None, threads=1,
                              output_dir=str(work / "train"))
    config["tracking"].update(tracking_uri=f"sqlite:///{work / 'mlruns.db'}", artifact_root=str(work / "mlartifacts"),
                              example_issue_time=str(issue_days(1)[1]))
    result = train(validate_config(config, TrainConfig), show_progress=False)
    out = work / "model"
    export_trained_model(Checkpoint.load(result.output_dir / BEST_CHECKPOINT), 365, out, read_provenance(data),
                         pt2=False)
    return out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365, help="issue days (one run each)")
    parser.add_argument("--model", type=Path, default=None,
                        help=f"an exported 7-lead model reading the forecast inputs (default: {SHIPPED.name} if "
                             "models/ holds it, else a stand-in trained here)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    first, last = issue_days(args.days)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        write_daily_runs(work / "runs", args.days)
        data = work / "ingested.nc"
        ingest(ingest_config(work / "runs", RECORD_START, last), data, show_progress=False)
        model = args.model or (SHIPPED if (SHIPPED / "metadata.json").exists() else None)
        model_kind = "stand-in of the week-ahead layout, trained 2 batches"
        if model is not None:  # named as in the repository, never by this machine's path
            model_kind = os.path.relpath(model.resolve(), REPO_ROOT) if model.resolve().is_relative_to(REPO_ROOT) \
                else str(model)
        if model is None:
            model = stand_in_model(data, work, first)
        metadata = ExportMetadata.read(model)
        issues = f"{first}..{last}"
        seconds, cpu = [], []
        for repeat in range(args.repeats):
            started, started_cpu = time.perf_counter(), time.process_time()
            run = run_forecast(model, data, issues, out=work / f"hindcast_{repeat}.nc", batch_size=args.batch_size,
                               show_progress=False)
            seconds.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
        values = run.result.values
        figures = {"model": model_kind, "stations": int(values.shape[1]), "issues": int(values.shape[0]),
                   "leads": list(metadata.leads), "members": metadata.members, "quantiles": len(metadata.quantiles),
                   "seq_len": metadata.seq_len,
                   "forecast_inputs": [item["variable"] for item in metadata.forecast_inputs],
                   "forecasts": int(values.shape[0] * values.shape[1]), "repeats": args.repeats,
                   "hindcast_s": sorted(seconds)[len(seconds) // 2], "hindcast_s_all": seconds,
                   "hindcast_cpu_s": sorted(cpu)[len(cpu) // 2], "load_average": os.getloadavg()[0],
                   "torch_threads": torch.get_num_threads(), "target_s": TARGET_S}
    figures["forecasts_per_s"] = figures["forecasts"] / figures["hindcast_s"]
    rows = [("hydroseq forecast (s, median)", f"{figures['hindcast_s']:.1f}"),
            ("its CPU time (s)", f"{figures['hindcast_cpu_s']:.1f}"),
            ("forecasts (station x issue) / s", f"{figures['forecasts_per_s']:,.0f}"),
            ("model members, quantile levels", f"{max(figures['members'], 1)}, {figures['quantiles']}")]
    title = (f"hindcast of {figures['stations']} basins x {figures['issues']} issue days x {len(figures['leads'])} "
             f"leads ({figures['model']})")
    return publish(figures, title, rows, "hindcast_s", args.json)


if __name__ == "__main__":
    main()
