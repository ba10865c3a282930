"""Score several tracked runs on one dataset and period, and print one markdown table side by side.

    python experiments/regional_side_by_side.py --data runs/demo/caravan_daily.nc --period test \\
        --run "(a) trained on the 31 alone=RUN_A" --run "(b) base model as it is=RUN_B" \\
        --run "(c) base fine-tuned on the 31=RUN_C" --out runs/results/side_by_side.csv

``--scores LABEL=CSV`` takes a run's scores from the ``metrics_<period>.csv`` that ``hydroseq evaluate
--run ID --period P --data F`` wrote (in the run's ``<output_dir>/evaluation/``), so several runs can
be scored in parallel first. Each run is scored with ``hydroseq.training.evaluate`` (the same scores
``hydroseq evaluate`` logs):
for models reading observed discharge, with the gauge on time, 1 and 7 days late and absent; a
simulation model has one row. Per lead: the median and mean NSE over stations and how many stations
beat persistence with the gauge equally late (absent gauge and simulation: climatology; a station whose
NSE is not finite does not beat it).
Persistence and climatology come from the first run's scores (they depend on the data only).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from hydroseq.training import evaluate

SCENARIOS = {"model": ("on time", "persistence"), "model_hidden1": ("1 day late", "persistence_hidden1"),
             "model_hidden7": ("7 days late", "persistence_hidden7"),
             "model_always_hidden": ("absent", "climatology")}
BASELINES = {"persistence": "persistence", "persistence_hidden1": "persistence, 1 day late",
             "persistence_hidden7": "persistence, 7 days late", "climatology": "climatology"}


def side_by_side(scores: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per run and gauge scenario (then the baselines), one column per lead: median / mean (beating)."""
    rows = []
    for label, table in scores.items():
        reads_observed = "model_hidden1" in set(table["forecast"])
        for forecast, (gauge, reference) in SCENARIOS.items():
            if forecast != "model" and not reads_observed:
                continue
            row = {"model": label, "gauge": gauge if reads_observed else "(no gauge input)"}
            for lead, at_lead in table.groupby("lead"):
                nse = at_lead.pivot(index="station", columns="forecast", values="nse")
                reference = reference if reads_observed else "climatology"
                beating = int((nse[forecast] > nse[reference]).sum())  # NaN never beats
                row[_column(lead)] = f"{nse[forecast].median():.3f} / {nse[forecast].mean():.3f} ({beating})"
            rows.append(row)
    first = next(iter(scores.values()))
    for forecast, name in BASELINES.items():
        if forecast not in set(first["forecast"]):
            continue
        row = {"model": name, "gauge": ""}
        for lead, at_lead in first[first["forecast"] == forecast].groupby("lead"):
            row[_column(lead)] = f"{at_lead['nse'].median():.3f} / {at_lead['nse'].mean():.3f}"
        rows.append(row)
    return pd.DataFrame(rows).fillna("")


def _column(lead: int) -> str:
    return "same day (simulation)" if lead == 0 else f"lead {lead}"


def markdown(table: pd.DataFrame) -> str:
    """``table`` as a markdown table (the docs' results page takes it as it is)."""
    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(str(value) for value in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, type=Path, help="ingested dataset to score every run on")
    parser.add_argument("--period", default="test", choices=("validation", "test"))
    parser.add_argument("--run", action="append", default=[], metavar="LABEL=RUN_ID")
    parser.add_argument("--scores", action="append", default=[], metavar="LABEL=CSV")
    parser.add_argument("--tracking-uri", default=None)
    parser.add_argument("--out", type=Path, default=None, help="also write the per-station scores here (CSV)")
    args = parser.parse_args()
    scores = {}
    for item in args.run:
        label, run_id = item.rsplit("=", 1)
        evaluation = evaluate(run_id, period=args.period, tracking_uri=args.tracking_uri, data_path=args.data)
        scores[label] = evaluation.report.scores
    for item in args.scores:
        label, path = item.rsplit("=", 1)
        scores[label] = pd.read_csv(path, dtype={"station": str})
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        pd.concat([table.assign(model=label) for label, table in scores.items()]).to_csv(args.out, index=False)
    print(f"{args.period} NSE over the stations of {args.data}: median / mean (stations beating persistence with "
          "the gauge equally late; with the gauge absent and for a simulation, stations beating climatology)\n")
    print(markdown(side_by_side(scores)))


if __name__ == "__main__":
    main()
