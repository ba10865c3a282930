"""Forecast throughput: stations per second for one issue time, against the bare exported model.

Run from the project root::

    .venv/bin/python -m benchmarks.bench_forecast [--stations 10000] [--seq-len 365] [--repeats 3]

The 31 bundled Caravan basins are ingested (the project's ingest config, ``--days`` local days up
to 2014-09-30) and replicated to at least ``--stations`` stations, each copy's series rolled by a
few days so that the copies differ. The model is an LSTM of the size the bundled per-step config
trains (hidden 64, 3 forcings + 13 static attributes), freshly initialised with scalers fitted on
the real data, saved as a training checkpoint and exported from it with
:func:`hydroseq.export.export_model`, as ``hydroseq export`` does (throughput does not depend on
the weights).
Measured in the same run, after one warm-up, medians of ``--repeats``:

* ``hydroseq forecast``: the whole :func:`hydroseq.forecast.run_forecast` (open the file, read the
  last N steps of every station, scale, assemble windows, run the ONNX model in batches of
  ``--batch-size``, write CF-NetCDF and CSV);
* ``bare onnxruntime``: only ``ExportedModel.predict`` on the very same input batches;
* ``bare torch``: the in-memory model on the same batches, on its padded path and read at each
  row's last valid step (what the exported network computes).

The ratio is each time / the bare onnxruntime time.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import tempfile
from pathlib import Path

import numpy as np
import torch
import xarray as xr
from rich.console import Console
from rich.table import Table

from benchmarks.timing import median_seconds
from hydroseq.config import IngestConfig, TrainConfig, load_config, validate_config
from hydroseq.dataset import Scalers, build_features, load_station_data
from hydroseq.dataset.window import gather_windows
from hydroseq.export import ExportedModel, ExportMetadata, export_model
from hydroseq.forecast import IngestedFile, run_forecast
from hydroseq.forecast.core import history_lengths
from hydroseq.ingest import ingest
from hydroseq.model import LSTMModel, get_model, last_valid_step
from hydroseq.training.checkpoint import Checkpoint

REPO_ROOT = Path(__file__).resolve().parents[1]
ISSUE = "2014-09-30"
LAST_DAY = dt.date(2014, 9, 30)


def ingest_bundled(out: Path, days: int) -> Path:
    """The 31 Caravan basins on the project's daily grid, the last ``days`` local days."""
    config = load_config(REPO_ROOT / "configs" / "ingest_caravan_daily.yaml", IngestConfig)
    config.stations.path = REPO_ROOT / config.stations.path
    for source in config.sources:
        source.path = str(REPO_ROOT / source.path)
    config.grid.start, config.grid.end = LAST_DAY - dt.timedelta(days=days - 1), LAST_DAY
    ingest(config, out, show_progress=False)
    return out


def replicate(source: Path, out: Path, stations: int) -> int:
    """Write ``source`` with its stations repeated (series rolled by 3 days per copy); returns the count."""
    with xr.open_dataset(source) as dataset:
        base = dataset.load()
    copies = -(-stations // base.sizes["station"])
    parts = []
    for copy in range(copies):
        part = base.copy(deep=True)
        for name in part.data_vars:
            if part[name].dims == ("station", "time"):
                part[name].values[:] = np.roll(part[name].values, 3 * copy, axis=1)
        part["station"] = [f"{s}_{copy:03d}" for s in base["station"].values]
        parts.append(part)
    xr.concat(parts, dim="station").to_netcdf(out)
    return copies * base.sizes["station"]


def train_config(data: Path) -> TrainConfig:
    """The bundled per-step config's inputs and model size, on the benchmark's data."""
    config = load_config(REPO_ROOT / "configs" / "train_caravan_per_step.yaml", TrainConfig)
    dump = config.model_dump(mode="json")
    dump["data"].update(path=str(data), splits={"train": {"start": "2013-10-01", "end": "2014-03-31"},
                                                 "validation": {"start": "2014-04-01", "end": "2014-06-30"},
                                                 "test": {"start": "2014-07-01", "end": "2014-09-30"}})
    return validate_config(dump, TrainConfig)


def export_untrained(data: Path, out: Path, seq_len: int) -> tuple[Path, LSTMModel]:
    """A freshly initialised model of the configured size, exported with real scalers (checkpoint beside ``out``)."""
    config = train_config(data)
    station_data = load_station_data(data, config.data)
    scalers = Scalers.fit(station_data, config.data)
    names = [*config.data.dynamic_inputs, *config.data.static_inputs]
    torch.manual_seed(0)
    model = get_model(config.model, len(names), 1, "per_step").eval()
    untrained = Checkpoint(model.state_dict(), config, names, 1, scalers, "benchmark-untrained")
    export_model(untrained.save(out.with_name("untrained.pt")), seq_len, out, data_path=data)
    return out, model


def model_inputs(model_dir: Path, data: Path) -> tuple[np.ndarray, np.ndarray]:
    """The inputs the forecast builds for every station at the issue step (built once, outside timing)."""
    metadata = ExportMetadata.read(model_dir)
    scalers = Scalers.from_dict(metadata.scalers)
    with IngestedFile(data, metadata) as source:
        end = len(source.times) - 1
        window = source.read(end - metadata.seq_len + 1, end + 1)
    features, valid = build_features(window, scalers, metadata.feature_layout())
    lengths = history_lengths(valid, np.array([metadata.seq_len - 1]), metadata.seq_len)[:, 0]
    rows = np.arange(len(lengths))
    x = gather_windows(features, rows, np.full(len(rows), metadata.seq_len - 1), lengths, metadata.seq_len)
    return x, lengths


def torch_batches(model: LSTMModel, x: np.ndarray, lengths: np.ndarray, batch_size: int) -> None:
    """The torch model on the same batches as onnxruntime: padded path, output at each row's last valid step."""
    with torch.no_grad():
        for i in range(0, len(x), batch_size):
            rows = torch.from_numpy(lengths[i:i + batch_size])
            last_valid_step(model(torch.from_numpy(x[i:i + batch_size]), rows, path="padded"), rows)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print (and optionally save) the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stations", type=int, default=10_000)
    parser.add_argument("--days", type=int, default=400, help="local days of data per station")
    parser.add_argument("--seq-len", type=int, default=365)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = work / "replicated.nc"
        count = replicate(ingest_bundled(work / "bundled.nc", args.days), data, args.stations)
        model_dir, model = export_untrained(data, work / "model", args.seq_len)
        x, lengths = model_inputs(model_dir, data)
        runtime = ExportedModel(model_dir)
        seconds = {
            "hydroseq forecast": median_seconds(
                lambda: run_forecast(model_dir, data, ISSUE, out=work / "f.nc", batch_size=args.batch_size),
                args.repeats),
            "bare onnxruntime": median_seconds(lambda: runtime.predict(x, lengths, args.batch_size), args.repeats),
            "bare torch": median_seconds(lambda: torch_batches(model, x, lengths, args.batch_size), args.repeats),
        }
    report(seconds, count, args)


def report(seconds: dict[str, float], count: int, args: argparse.Namespace) -> None:
    """Print the table; save the figures as JSON if asked."""
    bare = seconds["bare onnxruntime"]
    table = Table(title=f"forecast of {count} stations, N={args.seq_len}, batches of {args.batch_size}, "
                        f"torch threads {torch.get_num_threads()}")
    for column in ("what", "seconds (median)", "stations/s", "x bare onnxruntime"):
        table.add_column(column, justify="right")
    for name, value in seconds.items():
        table.add_row(name, f"{value:.3f}", f"{count / value:,.0f}", f"{value / bare:.2f}")
    Console().print(table)
    if args.json:
        figures = {"stations": count, "seq_len": args.seq_len, "batch_size": args.batch_size,
                   "repeats": args.repeats, "seconds": seconds,
                   "stations_per_second": {k: count / v for k, v in seconds.items()}}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
