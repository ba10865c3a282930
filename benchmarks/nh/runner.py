"""Run NeuralHydrology in its own venv as a child process and collect what it measured.

The child is ``benchmarks/nh/driver.py`` under the NeuralHydrology interpreter. Peak memory is the
child's maximum resident set size as the kernel reports it when the child is reaped
(``os.wait4``), so it covers the whole run including data loading and testing.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from benchmarks.nh.config import nh_config, write_nh_config
from benchmarks.nh.convert import convert_caravan
from benchmarks.protocol import CARAVAN_DIR, Protocol

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


def prepare(protocol: Protocol, work_dir: Path, caravan_dir: Path = CARAVAN_DIR) -> Path:
    """Convert the data and write the run config under ``work_dir``; return the config's path."""
    data_dir = work_dir / "nh_data"
    basin_file = convert_caravan(caravan_dir, data_dir, protocol.basins, protocol.dynamic_inputs,
                                 protocol.static_inputs, protocol.target)
    runs = work_dir / "nh_runs"
    runs.mkdir(parents=True, exist_ok=True)
    config = nh_config(protocol, data_dir=data_dir, basin_file=basin_file, run_dir=runs)
    return write_nh_config(config, work_dir / "nh_config.yml")


def thread_environment(threads: int) -> dict[str, str]:
    """The current environment with every thread pool limited to ``threads``."""
    env = dict(os.environ)
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
        env[name] = str(threads)
    return env


def run_child(command: list[str], env: dict[str, str], log_path: Path, timeout_s: float | None) -> tuple[int, float]:
    """Run ``command`` with output to ``log_path``; return (exit status, peak RSS in MiB).

    Raises
    ------
    NHRunError
        If the child runs past ``timeout_s`` (it is killed).
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as log:
        child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                child.returncode = os.waitstatus_to_exitcode(status)
                return child.returncode, usage.ru_maxrss / 1024
            if deadline is not None and time.monotonic() > deadline:
                child.kill()
                child.wait()
                raise NHRunError(f"NeuralHydrology ran past {timeout_s:.0f} s; log: {log_path}")
            time.sleep(0.05)


def run_nh(protocol: Protocol, work_dir: Path, python: Path, timeout_s: float | None = None,
           caravan_dir: Path = CARAVAN_DIR) -> NHResult:
    """Convert, configure, train, validate and test NeuralHydrology; parse its outputs.

    Raises
    ------
    NHRunError
        If NeuralHydrology fails (the message ends with its log's tail) or writes no metrics.
    """
    config_path = prepare(protocol, work_dir, caravan_dir)
    out = work_dir / "nh_out"
    command = [str(python), str(DRIVER), "--config", str(config_path),
               "--threads", str(protocol.threads), "--out", str(out)]
    start = time.perf_counter()
    status, peak_mib = run_child(command, thread_environment(protocol.threads), work_dir / "nh.log", timeout_s)
    wall = time.perf_counter() - start
    if status != 0:
        tail = (work_dir / "nh.log").read_text()[-3000:]
        raise NHRunError(f"NeuralHydrology exited with status {status}:\n{tail}")
    return collect(out, peak_mib, wall, protocol.seq_length)


def collect(out: Path, peak_rss_mib: float, wall_s: float, seq_length: int) -> NHResult:
    """Build an :class:`NHResult` from the driver's files and NeuralHydrology's run folder."""
    timings = json.loads((out / "timings.json").read_text())
    run_dir = Path(timings["run_dir"])
    epochs = tuple(
        EpochRecord(epoch=e["epoch"], train_s=e["train_s"], samples=e["samples"], validation_s=e["validation_s"],
                    **validation_medians(run_dir, e["epoch"]))
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
        peak_rss_mib=peak_rss_mib,
        wall_s=wall_s,
        threads=timings["threads"],
        versions={"torch": timings["torch_version"], "neuralhydrology": timings["neuralhydrology_version"]},
        seq_length=seq_length,
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
