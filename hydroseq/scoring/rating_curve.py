"""Rating curves: each station's stage-discharge pairs, so that a threshold an agency states as a stage
(a flood stage on the gauge board) becomes the discharge a forecast is compared with.

Between its pairs a curve is interpolated with a monotone cubic (``scipy.interpolate.PchipInterpolator``:
it passes through every pair and never turns back, so a higher stage always gives more discharge). A stage
outside the pairs of its station is refused rather than extrapolated: a rating is only known where it was
gauged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from hydroseq.errors import InputDataError
from hydroseq.scoring.station_tables import known_station, table_number, table_rows

RATING_COLUMNS = ("station", "stage", "discharge")


@dataclass(frozen=True)
class RatingCurve:
    """One station's pairs, stage strictly increasing, discharge strictly increasing with it."""

    stages: NDArray[np.float64]
    discharges: NDArray[np.float64]

    def discharge(self, stage: float) -> float:
        """The discharge at ``stage``.

        Raises
        ------
        ValueError
            If ``stage`` is outside the curve's stages.
        """
        if not self.stages[0] <= stage <= self.stages[-1]:
            raise ValueError(f"stage {stage:g} is outside the rating curve's stages {self.stages[0]:g} to "
                             f"{self.stages[-1]:g}")
        from scipy.interpolate import PchipInterpolator

        return float(PchipInterpolator(self.stages, self.discharges)(stage))


@dataclass(frozen=True)
class RatingCurves:
    """The rating curves of a file, by station."""

    path: Path
    curves: dict[str, RatingCurve]


def read_rating_curves(path: str | Path, station_ids: Sequence[str]) -> RatingCurves:
    """Read a CSV of ``station``, ``stage``, ``discharge`` rows (discharge in the target's units).

    Station ids are read as text; the rows of a station may come in any order. Other columns are ignored.

    Raises
    ------
    InputDataError
        One line naming the file, the line and the problem: unreadable or empty file, a missing column, a
        station not among ``station_ids``, a stage or discharge that is not a finite number (discharge also
        not negative), a stage given twice, a discharge that does not increase with the stage, or a station
        with a single pair.
    """
    path = Path(path)
    pairs: dict[str, list[tuple[float, float, int]]] = {}
    for line, row in table_rows(path, RATING_COLUMNS):
        station = known_station(row["station"], station_ids, path, line)
        stage = table_number(row["stage"], "stage", path, line, non_negative=False)
        pairs.setdefault(station, []).append((stage, table_number(row["discharge"], "discharge", path, line), line))
    curves = {}
    for station, rows in pairs.items():
        rows.sort()
        if len(rows) < 2:
            raise InputDataError(path, f"station {station} has a single stage-discharge pair; a rating curve needs "
                                       "two or more", f"line {rows[0][2]}")
        for (stage, discharge, line), (next_stage, next_discharge, next_line) in pairwise(rows):
            if next_stage == stage:
                raise InputDataError(path, f"station {station} stage {stage:g} is already given on line {line}",
                                     f"line {next_line}")
            if next_discharge <= discharge:
                raise InputDataError(path, f"station {station}: discharge {next_discharge:g} at stage {next_stage:g} "
                                           f"is not above {discharge:g} at the lower stage {stage:g} (line {line})",
                                     f"line {next_line}")
        stages, discharges = (np.array(column, dtype=np.float64) for column in list(zip(*rows, strict=True))[:2])
        curves[station] = RatingCurve(stages, discharges)
    if not curves:
        raise InputDataError(path, "holds no stage-discharge pair")
    return RatingCurves(path, curves)
