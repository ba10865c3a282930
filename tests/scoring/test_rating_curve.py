"""Rating curves: read per station, interpolated monotonically between the pairs, refused outside them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hydroseq.errors import InputDataError
from hydroseq.scoring.rating_curve import RatingCurve, read_rating_curves
from hydroseq.scoring.table_units import TargetUnits

STATIONS = ["01022500", "01547700"]
M3S = TargetUnits("m3 s-1", pd.Timedelta(days=1), {})  # a forecast in m³/s: the pairs as written


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def power_law(stage: np.ndarray) -> np.ndarray:
    """A control section's rating, Q = 12 (h - 0.3)^1.6 (m, m3/s): the shape gauged ratings have."""
    return 12.0 * (stage - 0.3) ** 1.6


def test_a_curve_passes_through_its_pairs_and_rises_between_them(tmp_path: Path) -> None:
    stages = np.array([0.5, 0.8, 1.2, 1.8, 2.6, 3.5])
    rows = "".join(f"01022500,{h},{q:.6f}\n" for h, q in zip(stages[::-1], power_law(stages[::-1]), strict=True))
    curves = read_rating_curves(write(tmp_path / "rating.csv", "station,stage [m],discharge [m3/s]\n" + rows),
                                STATIONS, M3S)
    curve = curves.curves["01022500"]
    assert list(curves.curves) == ["01022500"] and curves.path == tmp_path / "rating.csv"
    np.testing.assert_allclose([curve.discharge(h) for h in stages], power_law(stages), rtol=1e-6)  # 6 decimals
    dense = np.linspace(0.5, 3.5, 601)
    flows = np.array([curve.discharge(h) for h in dense])
    assert np.all(np.diff(flows) > 0)  # never turns back
    np.testing.assert_allclose(flows, power_law(dense), rtol=0.03)  # within 3 % of the rating it samples
    with pytest.raises(ValueError, match="stage 3.6 is outside the rating curve's stages 0.5 to 3.5"):
        curve.discharge(3.6)


@pytest.mark.parametrize(("text", "where", "problem"), [
    ("station,stage [m]\n01022500,1\n", "line 1", "missing column discharge"),
    ("station,stage [m],discharge [m3/s]\n01022500,1,2\n01022500,1,3\n", "line 3",
     "stage 1 is already given on line 2"),
    ("station,stage [m],discharge [m3/s]\n01022500,1,5\n01022500,2,4\n", "line 3",
     "discharge 4 at stage 2 is not above 5 at the lower stage 1 (line 2)"),
    ("station,stage [m],discharge [m3/s]\n01022500,1,5\n01547700,1,5\n01547700,2,6\n", "line 2",
     "a single stage-discharge pair"),
    ("station,stage [m],discharge [m3/s]\n1022500,1,5\n", "line 2", "station '1022500' is not one of the 2 stations"),
    ("station,stage [m],discharge [m3/s]\n01022500,high,5\n", "line 2", "stage 'high' is not a number"),
    ("station,stage [m],discharge [m3/s]\n01022500,1,-5\n", "line 2", "discharge -5 is negative"),
])
def test_bad_rating_tables_name_the_file_and_line(tmp_path: Path, text: str, where: str, problem: str) -> None:
    path = write(tmp_path / "rating.csv", text)
    with pytest.raises(InputDataError) as caught:
        read_rating_curves(path, STATIONS, M3S)
    assert str(caught.value).startswith(f"{path} ({where}): ") and problem in str(caught.value)


def test_a_stage_below_the_datum_is_a_stage_like_any_other() -> None:
    curve = RatingCurve(np.array([-0.4, 0.0, 0.6]), np.array([0.0, 1.0, 4.0]))
    assert curve.discharge(-0.4) == 0.0 and 0.0 < curve.discharge(-0.2) < 1.0


def test_the_pairs_name_their_units_and_discharges_become_the_forecasts(tmp_path: Path) -> None:
    """Discharges in ft³/s read into a forecast in mm/d through the station's area; a table without units, or
    with a units column, is refused in one line naming the file."""
    path = write(tmp_path / "rating.csv", "station,stage [ft],discharge [ft3/s]\n01022500,1,100\n01022500,2,400\n")
    mm_per_day = TargetUnits("mm d-1", pd.Timedelta(days=1), {"01022500": 619.1})
    curves = read_rating_curves(path, STATIONS, mm_per_day)
    assert curves.stage_units == "ft"
    np.testing.assert_allclose(curves.curves["01022500"].discharges,
                               np.array([100.0, 400.0]) * 0.028316846592 * 86.4 / 619.1, rtol=1e-12)
    for text, problem in (("station,stage,discharge\n01022500,1,2\n01022500,2,3\n",
                           "the stage column does not name its units: write them in its header, e.g. stage [m]"),
                          ("station,stage [m],discharge,units\n01022500,1,2,m3/s\n01022500,2,3,m3/s\n",
                           "has a 'units' column, which is not read: write the units in the header of each "
                           "number column instead, e.g. discharge [m3/s] or stage [m]"),
                          ("station,stage [m],discharge [m]\n01022500,1,2\n01022500,2,3\n",
                           "discharge [m]: these units are not a discharge")):
        bad = write(tmp_path / "bad.csv", text)
        with pytest.raises(InputDataError) as caught:
            read_rating_curves(bad, STATIONS, mm_per_day)
        assert str(caught.value).startswith(f"{bad} (line 1): ") and problem in str(caught.value)
    with pytest.raises(InputDataError, match=r"\(line 2\): station 01022500: a discharge in ft3/s .* no area_km2"):
        read_rating_curves(path, STATIONS, TargetUnits("mm d-1", pd.Timedelta(days=1), {}))
