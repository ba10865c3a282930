"""The forecast page's first line, its answer to "will a river flood?", and how it names its thresholds.

Only flood thresholds count: the return-period flows and an agency's own levels
(:attr:`hydroseq.scoring.thresholds.StationThresholds.flood`). The high flows derived beside them (the flows exceeded
5 % and 1 % of the time, ``q95``, ``q99``) are passed on ordinary days of every wet season, so a forecast above them
is no flood warning: they have columns of their own and a clause of their own in the line. A probability is
counted as the page shows it (:func:`hydroseq.report.content.at_least`): 0.0479 is shown "5 %" and counts as "at
5 % or more".
"""

from __future__ import annotations

import numpy as np

from hydroseq.report.content import at_least, percent
from hydroseq.report.stations import RISK_CLASSES, StationRow

LIKELY = 0.5  # "at 50 % or more"
NAMED = RISK_CLASSES[-2][0]  # the likeliest stations named: 5 % or more (the lowest coloured class)


def outlook(rows: list[StationRow], probabilistic: bool, depth_unit: str) -> str:
    """How many stations may exceed a flood threshold and the likeliest three at 5 % or more (a deterministic
    model: the three highest peaks as a depth rate); then the stations likely to exceed a high flow."""
    if not probabilistic:
        ranked = sorted((row for row in rows if np.isfinite(row.peak_depth)), key=lambda row: -row.peak_depth)
        top = ", ".join(f"{row.name or row.station} {row.peak_depth:.3g} {depth_unit}" for row in ranked[:3])
        return f"no threshold probabilities (deterministic model); highest forecast peaks: {top or 'none'}"
    ranked = sorted((row for row in rows if np.isfinite(row.highest_probability)),
                    key=lambda row: -row.highest_probability)
    named = [row for row in ranked if at_least(row.highest_probability, NAMED)][:3]
    likely = sum(1 for row in ranked if at_least(row.highest_probability, LIKELY))
    if not ranked:
        text = (f"none of the {len(rows)} stations has a flood threshold (a return-period flow or a table's level) "
                "to give a probability for")
    elif named:
        top = ", ".join(f"{row.name or row.station} {percent(row.highest_probability)}" for row in named)
        text = (f"{likely} of {len(rows)} stations at {percent(LIKELY)} or more of exceeding a flood threshold in "
                f"the lead window; likeliest: {top}")
    else:
        text = (f"no flood threshold is likely: none of the {len(ranked)} stations with one is at {percent(NAMED)} "
                "or more in the lead window")
    high = sum(1 for row in rows if at_least(row.high_flow_probability, LIKELY))
    if high:
        text += (f"; high flows (not flood thresholds): {high} station{'s' if high > 1 else ''} at "
                 f"{percent(LIKELY)} or more")
    return text


def threshold_heading(label: str, flood: bool) -> str:
    """A threshold column's heading: ``P > 2-year daily-mean flow``, or ``high flow: P > daily-mean flow exceeded
    5 % of the time`` for a high flow."""
    return f"P > {label}" if flood else f"high flow: P > {label}"


def thresholds_note(source: str, labels: tuple[str, ...], flood: tuple[bool, ...]) -> str:
    """What the page's thresholds are and which of them the outlook and the map count."""
    floods = [label for label, is_flood in zip(labels, flood, strict=True) if is_flood]
    highs = [label for label, is_flood in zip(labels, flood, strict=True) if not is_flood]
    text = (f"Thresholds: {source}. A probability is the model's chance that the flow of a lead exceeds the "
            "threshold, the highest over the leads. ")
    text += (f"The outlook and the map count the flood thresholds ({', '.join(floods)})" if floods
             else "No threshold is a flood threshold, so the outlook and the map have none to count")
    if highs:
        text += (f"; the high flows ({', '.join(highs)}) are passed in most years and have their own columns, "
                 "headed \"high flow\"")
    return text + "."
