"""The hindcast's scores table reads back as it was written, on the stations and leads asked for."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hydroseq.forecast.hindcast import read_scores_csv, score_hindcast, write_scores_csv
from tests.forecast.test_figures import _hindcast


def test_a_scores_table_reads_back_on_any_stations_and_leads(tmp_path: Path) -> None:
    result, observed = _hindcast()
    persistence = np.roll(result.values, 1, axis=0)
    written = score_hindcast(result, observed, {"persistence": persistence})
    path = write_scores_csv(written, tmp_path / "scores.csv")
    read = read_scores_csv(path, written.stations, written.leads)
    assert read.forecasts == ("model", "persistence") and read.stations == written.stations
    np.testing.assert_allclose(read.nse, written.nse, atol=5e-5)  # the CSV keeps four decimals
    np.testing.assert_array_equal(read.n, written.n)
    assert read.summary()[0].beats_persistence == written.summary()[0].beats_persistence
    subset = read_scores_csv(path, ("02064000", "99999999"), np.array([3]))  # a station it lacks: NaN
    np.testing.assert_allclose(subset.nse[:, 0, 0], written.nse[:, 2, 2], atol=5e-5)
    assert np.isnan(subset.nse[:, 1]).all() and (subset.n[:, 1] == 0).all()
    (tmp_path / "other.csv").write_text("station,value\n01022500,1\n")
    with pytest.raises(ValueError, match="not a hindcast scores table"):
        read_scores_csv(tmp_path / "other.csv", written.stations, written.leads)
