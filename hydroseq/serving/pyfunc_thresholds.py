"""The thresholds the served model carries, so that it returns the forecast CSV's ``p_exceed_<level>``.

``hydroseq forecast`` derives each station's thresholds from the model's training period in the
data file it reads (2- and 5-year daily-mean flows fitted by L-moments to the water-year maxima,
flow percentiles 95 and 99: :func:`hydroseq.forecast.probabilistic.training_record`). The served
model gets a few weeks of rows, not the training period, so the thresholds are derived when the
model is logged, with the same function on the ingested file it was trained on (every station of
that file), and stored as its artifact ``flood_thresholds`` (JSON: ``levels``, ``stations``,
``values[station][level]`` with ``null`` where unknown, ``source``; and what a person reads:
``labels`` per level (``"2-year daily-mean flow"``), the ``confidence`` interval ``lower`` and
``upper`` and the water ``years`` per station and level, ``notes`` per station; floats written
exactly). For a forecast from that file at the same issue time the served probabilities equal the
CSV's. A station not in the table gets NaN probabilities, as one without enough training-period
data does in the CSV. A file written before the labels and intervals reads back without them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from hydroseq.export import ExportMetadata
from hydroseq.forecast.data_window import IngestedFile
from hydroseq.forecast.probabilistic import training_record
from hydroseq.scoring.thresholds import StationThresholds

FLOOD_THRESHOLDS_ARTIFACT = "flood_thresholds"  # the pyfunc's artifact key, a JSON file
FLOOD_THRESHOLDS_FILE = "flood_thresholds.json"


def derive_thresholds(data_path: str | Path, metadata: ExportMetadata) -> StationThresholds | None:
    """The thresholds ``hydroseq forecast`` derives from ``data_path`` for a model with ``metadata``;
    None for a model without quantiles, or a file without the model's training period (no exceedance probability
    is published then)."""
    if not metadata.quantiles:
        return None
    with IngestedFile(data_path, metadata) as source:
        record = training_record(source, tuple(metadata.quantiles), None, with_climatology=False)
    return record.thresholds if record is not None else None


def _table(values: np.ndarray) -> list[list[float | None]]:
    return [[float(value) if math.isfinite(value) else None for value in row] for row in values.tolist()]


def _array(rows: list[list[float | None]], shape: tuple[int, int]) -> np.ndarray:
    return np.array([[np.nan if value is None else value for value in row] for row in rows],
                    dtype=np.float64).reshape(shape)


def write_thresholds(thresholds: StationThresholds, path: Path) -> Path:
    """``thresholds`` as JSON at ``path`` (read back exactly by :func:`read_thresholds`)."""
    path.write_text(json.dumps({"levels": list(thresholds.levels), "stations": list(thresholds.stations),
                                "values": _table(thresholds.values), "source": thresholds.source,
                                "labels": list(thresholds.labels), "confidence": thresholds.confidence,
                                "lower": _table(thresholds.lower), "upper": _table(thresholds.upper),
                                "years": thresholds.years.tolist(), "notes": list(thresholds.notes)}, indent=1))
    return path


def read_thresholds(path: str | Path) -> StationThresholds:
    """The thresholds :func:`write_thresholds` wrote."""
    table = json.loads(Path(path).read_text())
    shape = (len(table["stations"]), len(table["levels"]))
    fit = {key: _array(table[key], shape) for key in ("lower", "upper") if key in table}
    return StationThresholds(tuple(table["levels"]), tuple(table["stations"]), _array(table["values"], shape),
                             table["source"], tuple(table.get("labels", ())), **fit,
                             years=np.array(table["years"], dtype=np.int64).reshape(shape) if "years" in table
                             else np.zeros(shape, dtype=np.int64),
                             notes=tuple(table.get("notes", ())), confidence=table.get("confidence"))
