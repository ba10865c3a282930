"""The ingest report: per-station coverage, gaps and contiguous records; stations dropped and why.

Saved beside the output as ``<name>.report.csv`` (one row per station), ``<name>.report.json``
(the rows, the dropped stations and every record length) and ``<name>.records.png`` (histogram of
contiguous-record lengths). A "record" is a run of consecutive grid steps where every dynamic
variable is valid. ``marked_missing_<variable>`` counts the station's observations that were
implausible (not finite or outside the variable's bounds) and set missing under
``on_implausible: mark_missing``; ``marked_missing`` is their total.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr
from matplotlib.figure import Figure

from hydroseq.errors import InputDataError
from hydroseq.fileio import atomic_path, write_text_atomic


@dataclass(frozen=True)
class AppendSummary:
    """What ``ingest --append`` added to the existing file (:mod:`hydroseq.ingest.append`).

    Attributes
    ----------
    new_steps
        Grid steps appended after the file's former last step.
    without_data
        Labels (``datetime64[ns]``) of the config's grid after the file's last step that were not
        appended: no value at any station, and none after them (their raw files have not arrived).
    last_time
        The dataset's last grid label after the append.
    written
        False when the values stayed the file's (nothing appended, the overlap unchanged): the
        file and its report were left as they were.
    """

    new_steps: int
    without_data: np.ndarray
    last_time: np.datetime64
    written: bool

    @property
    def no_new_data(self) -> bool:
        """The config's grid went past the file's end and no step there had a value: nothing appended."""
        return self.new_steps == 0 and len(self.without_data) > 0


@dataclass
class IngestReport:
    """What :func:`hydroseq.ingest.ingest` returns.

    ``stations`` has one row per ingested station; ``dropped`` maps skipped station ids to the
    reason; ``records`` maps station ids to their contiguous-record lengths (grid steps);
    ``appended``, for ``append``, what was added (None otherwise).
    """

    output: Path
    stations: pd.DataFrame
    dropped: dict[str, str] = field(default_factory=dict)
    records: dict[str, list[int]] = field(default_factory=dict)
    appended: AppendSummary | None = None

    @property
    def paths(self) -> dict[str, Path]:
        """Where the report files are saved."""
        stem = self.output.with_suffix("")
        return {"csv": Path(f"{stem}.report.csv"), "json": Path(f"{stem}.report.json"),
                "png": Path(f"{stem}.records.png")}


def build_report(ds: xr.Dataset, output: Path, dropped: dict[str, str],
                 marked_missing: dict[str, dict[str, int]] | None = None) -> IngestReport:
    """Per-station statistics of the dynamic variables of ``ds``; ``marked_missing`` maps station
    ids to the count of implausible observations set missing per variable."""
    rows, records = report_rows(ds, marked_missing)
    return IngestReport(output, pd.DataFrame(rows), dict(dropped), records)


def report_rows(ds: xr.Dataset, marked_missing: dict[str, dict[str, int]] | None = None
                ) -> tuple[list[dict[str, object]], dict[str, list[int]]]:
    """The report's row of every station of ``ds`` and its contiguous-record lengths (see
    :func:`build_report`); each station's come from its own series only, so the rows of several
    datasets of different stations concatenate to those of one dataset holding them all."""
    dynamic = [str(name) for name in ds.data_vars if ds[name].attrs.get("hydroseq_role") == "dynamic"]
    valid = np.logical_and.reduce(np.stack([np.isfinite(ds[name].values) for name in dynamic]))  # (station, time)
    marked_missing = marked_missing or {}
    times = pd.DatetimeIndex(ds["time"].values)
    rows, records = [], {}
    for position, station_id in enumerate(ds["station"].values.tolist()):
        runs = run_lengths(valid[position])
        records[str(station_id)] = runs
        counts = marked_missing.get(str(station_id), {})
        row = _row(str(station_id), valid[position], times, runs,
                   {name: float(ds[f"coverage_{name}"].values[position]) for name in dynamic})
        row["marked_missing"] = int(sum(counts.values()))
        row.update({f"marked_missing_{name}": int(counts.get(name, 0)) for name in dynamic})
        rows.append(row)
    return rows, records


def nothing_ingested(output: Path, dropped: dict[str, str]) -> InputDataError:
    """The error of an ingest that dropped every station: each one with its reason."""
    return InputDataError(output, "no station could be ingested: " + "; ".join(f"{k}: {v}" for k, v in dropped.items()))


def run_lengths(valid: np.ndarray) -> list[int]:
    """Lengths of the runs of ``True`` in a boolean vector, in order."""
    padded = np.concatenate(([False], valid, [False])).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return (edges[1::2] - edges[::2]).tolist()


def _row(station_id: str, valid: np.ndarray, times: pd.DatetimeIndex, runs: list[int],
         coverage: dict[str, float]) -> dict[str, object]:
    indices = np.flatnonzero(valid)
    first, last = (times[indices[0]], times[indices[-1]]) if len(indices) else (pd.NaT, pd.NaT)
    span = valid[indices[0]:indices[-1] + 1] if len(indices) else valid[:0]
    gaps = run_lengths(~span)
    row: dict[str, object] = {
        "station": station_id,
        "first_valid": first, "last_valid": last,
        "coverage_all": float(valid.mean()) if len(valid) else 0.0,
        "gaps": len(gaps), "longest_gap": max(gaps, default=0),
        "records": len(runs), "longest_record": max(runs, default=0),
    }
    row.update({f"coverage_{name}": value for name, value in coverage.items()})
    return row


def save_report(report: IngestReport, paths: dict[str, Path] | None = None) -> None:
    """Write the CSV, JSON and PNG files of ``report`` (to ``paths``, default ``report.paths``), each atomically."""
    paths = paths or report.paths
    write_text_atomic(paths["csv"], report.stations.to_csv(index=False, date_format="%Y-%m-%dT%H:%M"))
    document = {
        "output": str(report.output),
        "stations": json.loads(report.stations.to_json(orient="records", date_format="iso")),
        "dropped": report.dropped,
        "record_lengths": report.records,
    }
    write_text_atomic(paths["json"], json.dumps(document, indent=1))
    _histogram(report, paths["png"])


def _histogram(report: IngestReport, path: Path) -> None:
    lengths = [length for runs in report.records.values() for length in runs]
    figure = Figure(figsize=(7, 4))
    axes = figure.subplots()
    if lengths:
        bins = np.unique(np.geomspace(1, max(lengths) + 1, 30).astype(int)).tolist()
        axes.hist(lengths, bins=bins, color="steelblue", edgecolor="white")
        axes.set_xscale("log")
    axes.set_xlabel("contiguous record length (grid steps, all variables valid)")
    axes.set_ylabel("number of records")
    axes.set_title(f"{report.output.name}: {len(lengths)} records in {len(report.records)} stations")
    figure.subplots_adjust(left=0.11, right=0.97, bottom=0.13, top=0.9)  # tight_layout costs ~0.5 s
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=100)
