"""What a page holds, before it is rendered: :class:`Page`, the one shape both page kinds hand to the renderer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class TableColumn:
    """A column of the station table: its key in each row's ``cells``, its heading, how it sorts and, on the
    verification page, the lead (its index) it belongs to: only the selected lead's columns are shown."""

    key: str
    heading: str
    sort: str  # "text" or "number"
    lead: int | None = None


@dataclass
class Page:
    """One page: texts (escaped when rendered), the station table, the charts and the data the script reads.

    Attributes
    ----------
    kind
        ``forecast`` or ``verification``.
    title, map_title, headline
        The page's heading, the map's, and the one line under the heading that answers the page's question
        (the forecast page: which stations may exceed a flood threshold, how likely).
    header
        ``(label, text)`` lines at the top.
    notes
        Sentences that say what the page does not show, or shows with a caveat.
    data
        The page's JSON (``templates/report.js`` reads it): per-station series and chart times.
    charts
        Bokeh models by the name of the place they go in the template.
    legend, states
        ``(colour, text)`` of the map's colour classes; ``(marker, text)`` of its marker shapes.
    columns, rows
        The station table: each row is ``{"index", "colour", "state", "cells": {key: (text, sort value)}}``.
    summary
        Verification page: the per-lead score table, ``{"columns": [...], "rows": [[...], ...]}``.
    """

    kind: str
    title: str
    map_title: str
    header: list[tuple[str, str]]
    notes: list[str]
    data: dict[str, Any]
    charts: dict[str, Any]
    legend: list[tuple[str, str]]
    states: list[tuple[str, str]]
    columns: list[TableColumn]
    rows: list[dict[str, Any]]
    summary: dict[str, list] = field(default_factory=dict)
    lead_choices: list[tuple[int, str]] = field(default_factory=list)
    headline: str = ""


def model_text(attributes: Mapping[str, str]) -> str:
    """``caravan-camels-us-daily, version 3 (alias champion), run 0f3c...``: what a forecast file says of its model."""
    parts = [attributes.get("model_name", "") or "exported model"]
    if attributes.get("model_version"):
        parts[0] += f", version {attributes['model_version']}"
    if attributes.get("model_alias"):
        parts[0] += f" (alias {attributes['model_alias']})"
    if attributes.get("model_run_id"):
        parts.append(f"run {attributes['model_run_id']}")
    return ", ".join(parts)


def percent_shown(probability: float) -> int:
    """The whole percent :func:`percent` writes for ``probability`` (0.0479: 5); what the page compares too, so that
    a count "at 5 % or more" and a table's "5 %" agree. Not for NaN."""
    return int(f"{probability * 100:.0f}")


def at_least(probability: float, lowest: float) -> bool:
    """``probability`` as the page shows it is ``lowest`` (a probability: 0.05) or more; False when unknown."""
    return bool(np.isfinite(probability)) and percent_shown(probability) >= round(lowest * 100)


def percent(probability: float) -> str:
    """``37 %``; ``under 1 %`` above zero, ``over 99 %`` below one (only a certain forecast shows 0 % or 100 %);
    ``-`` when unknown."""
    if not np.isfinite(probability):
        return "-"
    if 0 < probability < 0.005:
        return "under 1 %"
    if 0.995 <= probability < 1:
        return "over 99 %"
    return f"{percent_shown(probability)} %"


def quantity(value: float, unit: str) -> str:
    """``12.3 m³/s`` with three significant digits (``1,230 m³/s`` above 1,000); ``-`` when unknown."""
    if not np.isfinite(value):
        return "-"
    return f"{value:,.0f} {unit}" if abs(value) >= 1000 else f"{value:.3g} {unit}"
