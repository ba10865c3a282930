"""Print the skill of several hindcasts side by side, from the ``<hindcast>_scores.csv`` files.

    python pipelines/compare_hindcasts.py "observed only=runs/demo/forecast/hindcast_wy2014_scores.csv" \\
        "with forecast inputs=runs/demo/forecast/hindcast_wy2014_forecast_inputs_scores.csv"

Per lead: each hindcast's median and mean NSE over stations and how many stations it beats
persistence at, then persistence and climatology (from the first file; the hindcasts must cover
the same issue times for the comparison to hold, which the table does not check).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import pandas as pd
from rich.console import Console
from rich.table import Table


def comparison_table(labelled: dict[str, pd.DataFrame]) -> Table:
    """A rich table: one row per lead and forecast (each hindcast's model, then the baselines)."""
    table = Table(title="hindcast NSE over stations, side by side")
    for column in ("lead", "forecast", "NSE median", "NSE mean", "beats persistence"):
        table.add_column(column, justify="left" if column == "forecast" else "right")
    baseline = next(iter(labelled.values()))
    for lead in sorted(baseline["lead"].unique()):
        rows = []
        for label, scores in labelled.items():
            at_lead = scores[scores["lead"] == lead].pivot(index="station", columns="forecast", values="nse")
            beats = int((at_lead["model"] > at_lead["persistence"]).sum())
            rows.append((label, at_lead["model"], f"{beats} of {len(at_lead)}"))
        reference = baseline[baseline["lead"] == lead].pivot(index="station", columns="forecast", values="nse")
        rows += [(name, reference[name], "") for name in ("persistence", "climatology") if name in reference]
        for position, (label, nse, beats) in enumerate(rows):
            table.add_row(str(lead) if position == 0 else "", label, f"{nse.median():.3f}", f"{nse.mean():.3f}",
                          beats, end_section=position == len(rows) - 1)
    return table


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hindcasts", nargs="+", help="LABEL=SCORES_CSV")
    args = parser.parse_args(argv)
    labelled = {}
    for item in args.hindcasts:
        label, _, path = item.partition("=")
        if not path:
            parser.error(f"expected LABEL=SCORES_CSV, got {item!r}")
        try:
            labelled[label] = pd.read_csv(path, dtype={"station": str})
        except (OSError, ValueError) as error:
            print(f"error: {path}: cannot read the scores ({error})", file=sys.stderr)
            return 2
    Console().print(comparison_table(labelled))
    return 0


if __name__ == "__main__":
    sys.exit(main())
