"""The hindcast's scores table reads back as it was written, on the stations and leads asked for; its signature
table compares the observed and forecast flows of each lead."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hydroseq.forecast.hindcast import (
    SCORE_COLUMNS,
    hindcast_signatures,
    read_scores_csv,
    score_hindcast,
    write_scores_csv,
)
from hydroseq.grid import GridSpec
from hydroseq.scoring.peak_metrics import peak_mape
from hydroseq.scoring.signatures import SIGNATURES, all_signatures
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
    np.testing.assert_allclose(read.peak_mape, written.peak_mape, atol=5e-5)
    assert written.peak_mape[0, 0, 0] == pytest.approx(peak_mape(observed[:, 0, 0], result.values[:, 0, 0]))
    assert np.isfinite(written.peak_mape).all() and (written.peak_mape > 0).all()
    assert read.summary()[0].beats_persistence == written.summary()[0].beats_persistence
    subset = read_scores_csv(path, ("02064000", "99999999"), np.array([3]))  # a station it lacks: NaN
    np.testing.assert_allclose(subset.nse[:, 0, 0], written.nse[:, 2, 2], atol=5e-5)
    assert np.isnan(subset.nse[:, 1]).all() and (subset.n[:, 1] == 0).all()
    older = tmp_path / "older.csv"  # written before Peak-MAPE was scored
    older.write_text("".join(",".join(line.split(",")[:-1]) + "\n" for line in path.read_text().splitlines()))
    assert older.read_text().splitlines()[0] == ",".join(SCORE_COLUMNS[:-1])
    from_older = read_scores_csv(older, written.stations, written.leads)
    np.testing.assert_allclose(from_older.nse, read.nse)
    assert np.isnan(from_older.peak_mape).all()
    (tmp_path / "other.csv").write_text("station,value\n01022500,1\n")
    with pytest.raises(ValueError, match="not a hindcast scores table"):
        read_scores_csv(tmp_path / "other.csv", written.stations, written.leads)


def test_the_signature_table_holds_every_station_lead_forecast_and_signature() -> None:
    result, observed = _hindcast()
    persistence = np.roll(result.values, 1, axis=0)
    table = hindcast_signatures(result, observed, {"persistence": persistence}, GridSpec("1D", "Etc/GMT+8"))
    assert list(table.columns[:4]) == ["station", "lead", "forecast", "signature"]
    assert len(table) == 3 * 3 * 2 * len(SIGNATURES)
    row = table.query("station == '08189500' and lead == 2 and forecast == 'model'").set_index("signature")
    days = pd.date_range("2013-10-03", "2014-10-02", freq="D")  # lead 2 of the issues 2013-10-01 .. 2014-09-30
    both = np.isfinite(observed[:, 1, 1]) & np.isfinite(result.values[:, 1, 1])
    expected = all_signatures(np.where(both, observed[:, 1, 1], np.nan), days)
    np.testing.assert_allclose(row.loc[list(SIGNATURES), "observed"], [expected[name] for name in SIGNATURES])
    assert row.loc["q_mean", "unit"] == "mm d-1" and np.isnan(row.loc["runoff_ratio", "observed"])
