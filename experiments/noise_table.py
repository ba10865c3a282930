"""Skill against the noise of perfect forecast inputs: the noise table of docs/experiments.md in one command.

Run from the project root::

    .venv/bin/python -m experiments.noise_table [--k 0 0.5 1 2 4 8] [--seeds 0 1 2] [--json FILE]
    .venv/bin/python -m experiments.noise_table --quick     # a smoke run: 3 basins, 1 year, seconds

The 31 bundled Caravan basins are ingested with the project's ingest config. For every noise level
``k`` and seed, one member of ``configs/train_caravan_forecast_perfect.yaml`` is trained with
``noise_std = k x [0.25, 0.5, 0.75]`` (leads 1, 2, 3, in training standard deviations) on each of
its forecast inputs, one thread, and scored on validation and test (``hydroseq.training.evaluate``).
The table holds, per level, the mean over seeds of the median / mean NSE over the basins at each
lead; the JSON holds every member's figures. About 4 minutes per member on one quiet core.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from experiments.bench_forecast_training import QUICK_SPLITS, QUICK_STATIONS
from experiments.compare import ingest_dataset
from hydroseq.config import TrainConfig, load_config, validate_config
from hydroseq.training import evaluate, train

REPO_ROOT = Path(__file__).resolve().parents[1]
RECIPE = REPO_ROOT / "configs" / "train_caravan_forecast_perfect.yaml"
NOISE_PER_LEAD = (0.25, 0.5, 0.75)  # x k: the noise grows with the lead
PERIODS = ("validation", "test")


def recipe(k: float, seed: int, data: Path, work: Path, quick: bool) -> TrainConfig:
    """One member of the perfect-input recipe with noise level ``k``."""
    dump = load_config(RECIPE, TrainConfig).model_dump(mode="json")
    for item in dump["data"]["forecast_inputs"]:
        item["noise_std"] = [k * step for step in NOISE_PER_LEAD] if k > 0 else None
    dump["data"].update(path=str(data), cache_dir=str(work / "cache"))
    dump["training"].update(seed=seed, ensemble=1, threads=1, output_dir=str(work / f"k{k}_seed{seed}"))
    dump["tracking"].update(tracking_uri=f"sqlite:///{work / 'mlruns.db'}", artifact_root=str(work / "mlartifacts"))
    if quick:
        dump["data"].update(stations=QUICK_STATIONS, splits=QUICK_SPLITS)
        dump["training"].update(epochs=1, max_batches_per_epoch=2)
    return validate_config(dump, TrainConfig)


def member_scores(config: TrainConfig) -> dict[str, float]:
    """Train one member and score it: ``{"<period>_lead<l>_median_nse": ..., "..._mean_nse": ...}``."""
    result = train(config, show_progress=False)
    summaries = {"validation": result.validation.summary if result.validation else {}}
    scored = evaluate(result.run_id, "test", config.tracking.tracking_uri, show_progress=False)
    summaries["test"] = scored.report.summary
    return {f"{period}_lead{lead}_{stat}_nse": summaries[period][f"{period}_model_lead{lead}_{stat}_nse"]
            for period in PERIODS for lead in config.data.lead_steps for stat in ("median", "mean")}


def noise_table(levels: list[float], seeds: list[int], quick: bool) -> dict[str, dict[str, dict[str, float]]]:
    """Every member's scores, ``{k: {seed: scores}}``."""
    figures: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data, _ = ingest_dataset(work)
        for k in levels:
            for seed in seeds:
                figures.setdefault(f"{k:g}", {})[str(seed)] = member_scores(recipe(k, seed, data, work, quick))
    return figures


def report(figures: dict[str, dict[str, dict[str, float]]], console: Console) -> None:
    """Per level, the mean over seeds of the median / mean NSE at each lead and period."""
    first = next(iter(next(iter(figures.values())).values()))
    columns = list(dict.fromkeys(name.rsplit("_", 2)[0] for name in first))  # "<period>_lead<l>", in order
    table = Table(title="skill against the noise of perfect forecast inputs (mean over seeds of median / mean NSE)")
    table.add_column("k", justify="right")
    for column in columns:
        table.add_column(column.replace("validation", "val").replace("_lead", " lead "), justify="right")
    for k, seeds in figures.items():
        cells = [f"{statistics.mean(s[f'{c}_median_nse'] for s in seeds.values()):.3f} / "
                 f"{statistics.mean(s[f'{c}_mean_nse'] for s in seeds.values()):.3f}" for c in columns]
        table.add_row(k, *cells)
    console.print(table)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the table and optionally save every member's figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=float, nargs="+", default=[0, 0.5, 1, 2, 4, 8], help="noise levels")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--quick", action="store_true", help="3 basins, 1 year, 1 epoch, k 0 and 8, seed 0")
    parser.add_argument("--json", type=Path, default=None, help="also write every member's figures here")
    args = parser.parse_args(argv)
    if args.quick:
        args.k, args.seeds = [0, 8], [0]
    figures = noise_table(args.k, args.seeds, args.quick)
    report(figures, Console())
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"quick": args.quick, "members": figures}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
