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
from hydroseq.scoring.table_units import TargetUnits, column_units, to_target

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
    """The rating curves of a file, by station: stages in ``stage_units``, discharges in the forecast target's."""

    path: Path
    curves: dict[str, RatingCurve]
    stage_units: str = "m"


def read_rating_curves(path: str | Path, station_ids: Sequence[str], target: TargetUnits) -> RatingCurves:
    """Read a CSV of ``station``, ``stage [UNITS]``, ``discharge [UNITS]`` rows, the units in the header
    (:mod:`.table_units`: ``station,stage [m],discharge [m3/s]``); each discharge is converted to the ``target``'s
    units (a volume rate to a depth rate through the station's catchment area).

    Station ids are read as text; the rows of a station may come in any order. Other columns are ignored, but
    not a ``units`` column.

    Raises
    ------
    InputDataError
        One line naming the file, the line and the problem: unreadable or empty file, a missing column, a
        column whose header names no units (or units of another quantity), a ``units`` column, a
        station not among ``station_ids``, a stage or discharge that is not a finite number (discharge also
        not negative), a stage given twice, a discharge that does not increase with the stage, or a station
        with a single pair, or a discharge that needs a catchment area its station lacks.
    """
    path = Path(path)
    pairs: dict[str, list[tuple[float, float, int]]] = {}
    units: dict[str, str] = {}
    table = list(table_rows(path, RATING_COLUMNS, units=units))
    stage_units = column_units(path, units, "stage", ("depth",))
    discharge_units = column_units(path, units, "discharge", ("depth_rate", "volume_rate"))
    for line, row in table:
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
        factor = to_target(1.0, discharge_units, station, target, path, rows[0][2])  # the same for every pair
        curves[station] = RatingCurve(stages, discharges * factor)
    if not curves:
        raise InputDataError(path, "holds no stage-discharge pair")
    return RatingCurves(path, curves, stage_units)
