"""How closely 2 DDP ranks with batch B follow 1 process with batch 2B (the figures behind the
tolerance of ``tests/scaleout/test_ddp_training.py``).

Run from the project root (about 3 minutes on 2 CPU cores)::

    .venv/bin/python -m experiments.ddp_curves [--json runs/ddp_curves.json]

Three real Caravan basins (1981-1986, ingested here) train for 3 epochs, once under
``torchrun --nproc_per_node 2`` (gloo, per-rank batch 8) and once in one process (batch 16), same
seed, through ``tests/scaleout/ddp_probe.py`` (per-step losses and valid-step counts). Variants:

* ``variable lengths, tail drop``: the test's setup; every step sees the same samples in both runs;
* ``variable lengths, tail keep``: the last, short batch of each epoch is split unevenly between ranks;
* ``equal lengths, tail drop``: ``min_len = seq_len`` so every sample has 60 valid steps.

Reported per variant: the largest relative difference, over all steps, between the 1-process loss
and the 2-rank loss taken as DDP optimises it (mean of the two ranks' means) and as the mean over all
valid steps of both ranks; and the largest relative difference of the per-epoch validation loss.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from hydroseq.config import IngestConfig, TrainConfig, dump_config, load_config
from hydroseq.ingest import ingest

REPO_ROOT = Path(__file__).resolve().parents[1]
PROBE = REPO_ROOT / "tests" / "scaleout" / "ddp_probe.py"
STATIONS = ["01022500", "02064000", "03015500"]
VARIANTS = {
    "variable lengths, tail drop": ({"tail": "drop"}, {}),
    "variable lengths, tail keep": ({"tail": "keep"}, {}),
    "equal lengths, tail drop": ({"tail": "drop"}, {"min_len": 60}),
}


def ingest_small(folder: Path) -> Path:
    """The three basins, 1981-1986, through the bundled Caravan ingest config."""
    config = load_config(REPO_ROOT / "configs" / "ingest_caravan_daily.yaml", IngestConfig)
    config = config.model_copy(update={
        "stations": config.stations.model_copy(update={"path": REPO_ROOT / config.stations.path, "ids": STATIONS}),
        "sources": [source.model_copy(update={"path": str(REPO_ROOT / source.path)}) for source in config.sources],
        "grid": config.grid.model_copy(update={"end": dt.date(1986, 12, 31)})})
    return ingest(config, folder / "small.nc", show_progress=False).output


def train_config(folder: Path, data: Path, batch_size: int, batching: dict, data_changes: dict) -> Path:
    """A 3-epoch config (hidden 8, 60-day chunks, no dropout) written as YAML into ``folder``."""
    config = TrainConfig.model_validate({
        "data": {"path": str(data), "dynamic_inputs": ["total_precipitation_sum", "temperature_2m_mean"],
                 "static_inputs": ["p_mean", "aridity"], "seq_len": 60, "min_len": 10,
                 "cache_dir": str(folder / "cache"), **data_changes,
                 "splits": {"train": {"start": "1981-01-01", "end": "1984-12-31"},
                            "validation": {"start": "1985-01-01", "end": "1985-12-31"},
                            "test": {"start": "1986-01-01", "end": "1986-12-31"}}},
        "batching": {"strategy": "random", "batch_size": batch_size, **batching},
        "model": {"hidden_size": 8, "dropout": 0.0},
        "training": {"epochs": 3, "learning_rate": 0.01, "seed": 5, "device": "cpu", "threads": 1,
                     "output_dir": str(folder / "out")},
        "tracking": {"tracking_uri": f"sqlite:///{folder / 'mlruns.db'}", "artifact_root": str(folder / "artifacts")},
    })
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.yaml").write_text(dump_config(config))
    return folder / "train.yaml"


def run_probe(config: Path, nproc: int) -> list[dict]:
    """The probe's per-rank records (under torchrun when ``nproc > 1``)."""
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}"]
    command = [*(launcher if nproc > 1 else [sys.executable]), str(PROBE), str(config), str(config.parent)]
    subprocess.run(command, check=True, capture_output=True)
    return [json.loads((config.parent / f"rank{rank}.json").read_text()) for rank in range(nproc)]


def compare(two: list[dict], one: dict) -> dict[str, float]:
    """Largest relative differences between the 2-rank and the 1-process curves."""
    losses = np.array([rank["losses"] for rank in two])
    counts = np.array([rank["valid_steps"] for rank in two], dtype=float)
    reference = np.array(one["losses"])
    pooled = (losses * counts).sum(axis=0) / counts.sum(axis=0)
    val_two = np.array([row["val_loss"] for row in two[0]["history"]])
    val_one = np.array([row["val_loss"] for row in one["history"]])
    return {"steps": len(reference),
            "step_loss_mean_of_rank_means": float(np.max(np.abs(losses.mean(axis=0) - reference) / reference)),
            "step_loss_pooled": float(np.max(np.abs(pooled - reference) / reference)),
            "first_step_pooled": float(abs(pooled[0] - reference[0]) / reference[0]),
            "val_loss": float(np.max(np.abs(val_two - val_one) / val_one))}


def main() -> None:
    """Run the three variants and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    figures = {}
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        data = ingest_small(folder)
        for index, (variant, (batching, data_changes)) in enumerate(VARIANTS.items()):
            two = run_probe(train_config(folder / f"v{index}_two", data, 8, batching, data_changes), 2)
            one = run_probe(train_config(folder / f"v{index}_one", data, 16, batching, data_changes), 1)[0]
            figures[variant] = compare(two, one)
    table = Table(title="2 ranks x batch 8 vs 1 process x batch 16: largest relative difference")
    for column in ("variant", "steps", "step loss (DDP mean)", "step loss (pooled)", "first step", "val loss"):
        table.add_column(column, justify="right")
    for variant, row in figures.items():
        table.add_row(variant, str(row["steps"]), f"{row['step_loss_mean_of_rank_means']:.2e}",
                      f"{row['step_loss_pooled']:.2e}", f"{row['first_step_pooled']:.2e}", f"{row['val_loss']:.2e}")
    Console().print(table)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
