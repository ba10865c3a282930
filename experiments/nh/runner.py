"""Run NeuralHydrology in its own venv as a child process and collect what it measured.

The child is ``experiments/nh/driver.py`` under the NeuralHydrology interpreter; its peak memory
comes from :func:`benchmarks.child.run_child`.
"""

from __future__ import annotations

import json
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from benchmarks.child import ChildTimeout, log_tail, run_child, thread_environment
from experiments.measures import EpochPoint, ToolRun, score_series
from experiments.nh.config import nh_config, write_nh_config
from experiments.nh.convert import convert_caravan
from experiments.protocol import CARAVAN_DIR, Protocol

DRIVER = Path(__file__).with_name("driver.py")


class NHRunError(RuntimeError):
    """NeuralHydrology exited with an error or left no results."""


@dataclass(frozen=True)
class EpochRecord:
    """One epoch: training time, samples seen, validation time and median NSE/KGE over basins."""

    epoch: int
    train_s: float
    samples: int
    validation_s: float
    validation_median_nse: float
    validation_median_kge: float


@dataclass(frozen=True)
class NHResult:
    """Everything the report needs from one NeuralHydrology run."""

    run_dir: Path
    data_loading_s: float
    setup_s: float
    import_s: float
    epochs: tuple[EpochRecord, ...]
    test_epoch: int
    test_s: float
    test_metrics: pd.DataFrame
    test_predictions: xr.Dataset
    peak_rss_mib: float
    wall_s: float
    threads: int
    versions: dict[str, str]
    seq_length: int
    updates_per_epoch: int | None = None
    stopped_early_after: int | None = None
    stopped_by: str | None = None
    resumed_after: tuple[int, ...] = ()


def prepare(protocol: Protocol, work_dir: Path, caravan_dir: Path = CARAVAN_DIR) -> Path:
    """Convert the data and write the run config under ``work_dir``; return the config's path."""
    data_dir = work_dir / "nh_data"
    basin_file = convert_caravan(caravan_dir, data_dir, protocol.basins, protocol.dynamic_inputs,
                                 protocol.static_inputs, protocol.target)
    runs = work_dir / "nh_runs"
    runs.mkdir(parents=True, exist_ok=True)
    config = nh_config(protocol, data_dir=data_dir, basin_file=basin_file, run_dir=runs)
    return write_nh_config(config, work_dir / "nh_config.yml")


def run_nh(protocol: Protocol, work_dir: Path, python: Path, timeout_s: float | None = None,
           caravan_dir: Path = CARAVAN_DIR, patience: int | None = None,
           max_minutes: float | None = None, resume: bool = False,
           files_lock: AbstractContextManager[Any] | None = None) -> NHResult:
    """Convert, configure, train, validate and test NeuralHydrology; parse its outputs.

    ``patience``: stop after that many epochs without a higher validation median NSE;
    ``max_minutes``: stop before an epoch and its validation would end past that many minutes of
    training and validation. The protocol's ``epochs`` stay the cap; None trains every epoch.
    ``resume``: continue the run that ``work_dir`` holds from its last check (see the driver).
    ``files_lock``: held while this process reads or writes NetCDF (the HDF5 library is not thread-safe), for
    callers that run several at once in threads.

    Raises
    ------
    NHRunError
        If NeuralHydrology fails (the message ends with its log's tail) or writes no metrics.
    """
    files_lock = files_lock or nullcontext()
    with files_lock:
        config_path = prepare(protocol, work_dir, caravan_dir)
    out = work_dir / "nh_out"
    command = [str(python), str(DRIVER), "--config", str(config_path),
               "--threads", str(protocol.threads), "--out", str(out)]
    if patience is not None:
        command += ["--patience", str(patience)]
    if max_minutes is not None:
        command += ["--max-minutes", f"{max_minutes:.2f}"]
    if resume:
        command.append("--resume")
    start = time.perf_counter()
    log = work_dir / ("nh_resumed.log" if resume else "nh.log")
    try:
        status, peak_mib = run_child(command, thread_environment(protocol.threads), log, timeout_s)
    except ChildTimeout as error:
        raise NHRunError(str(error)) from None
    wall = time.perf_counter() - start
    if status != 0:
        raise NHRunError(f"NeuralHydrology exited with status {status}:\n{log_tail(log)}")
    with files_lock:
        return collect(out, peak_mib, wall, protocol.seq_length)


def collect(out: Path, peak_rss_mib: float, wall_s: float, seq_length: int) -> NHResult:
    """Build an :class:`NHResult` from the driver's files and NeuralHydrology's run folder.

    A resumed run's wall time adds the earlier parts' (as the driver measured them) and its peak memory is the
    highest of all parts.
    """
    timings = json.loads((out / "timings.json").read_text())
    run_dir = Path(timings.get("test_run_dir", timings["run_dir"]))
    epochs = tuple(
        EpochRecord(epoch=e["epoch"], train_s=e["train_s"], samples=e["samples"], validation_s=e["validation_s"],
                    **validation_medians(Path(e.get("run_dir", timings["run_dir"])), e["epoch"]))
        for e in timings["epochs"]
    )
    with xr.open_dataset(out / "test_predictions.nc") as predictions:
        test_predictions = predictions.load()
    return NHResult(
        run_dir=run_dir,
        data_loading_s=timings["dataset_s"],
        setup_s=timings["setup_s"],
        import_s=timings["import_s"],
        epochs=epochs,
        test_epoch=timings["test_epoch"],
        test_s=timings["test_s"],
        test_metrics=read_metrics(run_dir, "test", timings["test_epoch"]),
        test_predictions=test_predictions,
        peak_rss_mib=max(peak_rss_mib, timings.get("earlier_maxrss_kib", 0) / 1024),
        wall_s=wall_s + timings.get("earlier_total_s", 0.0),
        threads=timings["threads"],
        versions={"torch": timings["torch_version"], "neuralhydrology": timings["neuralhydrology_version"]},
        seq_length=seq_length,
        updates_per_epoch=timings.get("updates_per_epoch"),
        stopped_early_after=timings.get("stopped_early_after"),
        stopped_by=timings.get("stopped_by"),
        resumed_after=tuple(timings.get("resumed_after", ())),
    )


def read_metrics(run_dir: Path, period: str, epoch: int) -> pd.DataFrame:
    """NeuralHydrology's per-basin metrics table of one period and epoch (index: basin id).

    Raises
    ------
    NHRunError
        If NeuralHydrology did not write the file.
    """
    path = run_dir / period / f"model_epoch{epoch:03d}" / f"{period}_metrics.csv"
    if not path.exists():
        raise NHRunError(f"NeuralHydrology wrote no {period} metrics for epoch {epoch} ({path} is missing)")
    return pd.read_csv(path, dtype={"basin": str}).set_index("basin")


def validation_medians(run_dir: Path, epoch: int) -> dict[str, float]:
    """Median validation NSE and KGE over basins for one epoch, from NeuralHydrology's CSV."""
    table = read_metrics(run_dir, "validation", epoch)
    return {"validation_median_nse": float(np.nanmedian(table["NSE"])),
            "validation_median_kge": float(np.nanmedian(table["KGE"]))}


def as_tool_run(result: NHResult) -> ToolRun:
    """The report's view of a NeuralHydrology run; test scores recomputed with hydroseq's metrics.

    NeuralHydrology's own per-basin NSE is kept in the notes as a cross-check of the recomputation.
    """
    epochs = tuple(
        EpochPoint(epoch=e.epoch, train_s=e.train_s, samples=e.samples, valid_steps=e.samples * result.seq_length,
                   target_steps=e.samples, validation_s=e.validation_s, validation_median_nse=e.validation_median_nse)
        for e in result.epochs
    )
    predictions = result.test_predictions
    scores = score_series(predictions["obs"].to_numpy(), predictions["sim"].to_numpy())
    own = float(np.nanmedian(result.test_metrics["NSE"]))
    notes = (f"NeuralHydrology {result.versions['neuralhydrology']}, torch {result.versions['torch']}",
             f"test median NSE as NeuralHydrology computes it: {own:.4f}",
             f"import of torch + neuralhydrology: {result.import_s:.1f} s (not counted as data loading)")
    return ToolRun(name="NeuralHydrology CudaLSTM", data_loading_s=result.data_loading_s, epochs=epochs,
                   peak_rss_mib=result.peak_rss_mib, test=scores, test_epoch=result.test_epoch,
                   wall_s=result.wall_s, notes=notes)
