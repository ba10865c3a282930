"""The flood thresholds the served model carries, so that it returns the forecast CSV's ``p_exceed_<level>``.

``hydroseq forecast`` derives each station's thresholds from the model's training period in the
data file it reads (2- and 5-year flows, flow percentiles 95 and 99:
:func:`hydroseq.forecast.probabilistic.training_record`). The served model gets a few weeks of rows,
not the training period, so the thresholds are derived when the model is logged, with the same
function on the ingested file it was trained on (every station of that file), and stored as its
artifact ``flood_thresholds`` (JSON: ``levels``, ``stations``, ``values[station][level]`` with
``null`` where unknown, ``source``; floats written exactly). For a forecast from that file at the
same issue time the served probabilities equal the CSV's. A station not in the table gets NaN
probabilities, as one without enough training-period data does in the CSV.
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
    None for a model without quantiles (it publishes no exceedance probability)."""
    if not metadata.quantiles:
        return None
    with IngestedFile(data_path, metadata) as source:
        return training_record(source, tuple(metadata.quantiles), None, with_climatology=False).thresholds


def write_thresholds(thresholds: StationThresholds, path: Path) -> Path:
    """``thresholds`` as JSON at ``path`` (read back exactly by :func:`read_thresholds`)."""
    values = [[float(value) if math.isfinite(value) else None for value in row] for row in thresholds.values.tolist()]
    path.write_text(json.dumps({"levels": list(thresholds.levels), "stations": list(thresholds.stations),
                                "values": values, "source": thresholds.source}, indent=1))
    return path


def read_thresholds(path: str | Path) -> StationThresholds:
    """The thresholds :func:`write_thresholds` wrote."""
    table = json.loads(Path(path).read_text())
    values = np.array([[np.nan if value is None else value for value in row] for row in table["values"]],
                      dtype=np.float64).reshape(len(table["stations"]), len(table["levels"]))
    return StationThresholds(tuple(table["levels"]), tuple(table["stations"]), values, table["source"])
