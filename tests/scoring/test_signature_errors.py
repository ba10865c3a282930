"""The signature table compares the observed and forecast flows of real basins on the steps both have."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hydroseq.scoring import signatures
from hydroseq.scoring.signature_errors import TABLE_COLUMNS, median_errors, signature_table

DATA = Path(__file__).resolve().parents[2] / "data" / "daily_caravan_camels_us"
STATIONS = ("01022500", "02064000", "08189500")
DAYS = pd.date_range("2010-10-01", "2014-09-30", freq="D")  # four water years


@pytest.fixture(scope="module")
def basins() -> tuple[np.ndarray, np.ndarray]:
    """Observed streamflow and precipitation ``[station, day]`` (mm/d) of three bundled basins."""
    tables = [pd.read_csv(DATA / f"{station}.csv", index_col="date", parse_dates=["date"]).reindex(DAYS)
              for station in STATIONS]
    return (np.stack([table["streamflow"].to_numpy(np.float64) for table in tables]),
            np.stack([table["total_precipitation_sum"].to_numpy(np.float64) for table in tables]))


def test_each_forecast_is_compared_on_the_steps_it_shares_with_the_observation(basins) -> None:
    observed, rain = basins
    shifted = np.roll(observed, 1, axis=1)  # persistence of one day
    gappy = observed * 1.1
    gappy[0, 200:300] = np.nan  # a forecast missing in the high-flow season of the first basin
    table = signature_table(observed, {"perfect": observed, "persistence": shifted, "gappy": gappy}, DAYS, STATIONS,
                            rain, "mm/d")
    assert tuple(table.columns) == TABLE_COLUMNS and len(table) == 3 * 3 * len(signatures.SIGNATURES)
    perfect = table.query("forecast == 'perfect'")
    assert perfect["error"].fillna(0.0).eq(0.0).all() and perfect["observed"].notna().sum() >= 3 * 12
    first = table.query("station == '01022500' and forecast == 'gappy'").set_index("signature")
    masked = np.where(np.isfinite(gappy[0]), observed[0], np.nan)
    assert first.loc["q_mean", "observed"] == pytest.approx(np.nanmean(masked))  # the observed series masked too
    assert first.loc["q_mean", "relative_error"] == pytest.approx(10.0)
    assert first.loc["runoff_ratio", "error"] == pytest.approx(0.1 * first.loc["runoff_ratio", "observed"])
    assert first.loc["hfd_mean", "unit"] == "steps after 1 Oct" and first.loc["q95", "unit"] == "mm/d"
    expected = signatures.all_signatures(observed[2], DAYS, rain[2])
    last = table.query("station == '08189500' and forecast == 'persistence'").set_index("signature")
    both = np.isfinite(observed[2]) & np.isfinite(shifted[2])
    assert both.all()  # this basin has no gap: its observed signatures are those of the whole series
    np.testing.assert_allclose(last["observed"].to_numpy(), [expected[name] for name in signatures.SIGNATURES])
    assert last.loc["hfd_mean", "observed"] > 0 and last.loc["stream_elas", "observed"] != 0  # four water years


def test_without_precipitation_the_runoff_signatures_are_empty_and_medians_skip_them(basins) -> None:
    observed, _ = basins
    table = signature_table(observed, {"model": observed * 0.9}, DAYS, STATIONS)
    runoff = table[table["signature"].isin(signatures.NEED_PRECIPITATION)]
    assert runoff[["observed", "simulated", "error"]].isna().all().all()
    medians = median_errors(table)
    assert medians["median_q_mean_error"] == pytest.approx(np.median(-0.1 * np.nanmean(observed, axis=1)))
    assert np.isnan(medians["median_runoff_ratio_error"]) and set(medians) == {
        f"median_{name}_error" for name in signatures.SIGNATURES}
