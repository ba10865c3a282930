"""hydroseq's NeuralHydrology metric set gives NeuralHydrology's own values on 100 real series (within 1e-6).

The signatures of single series are compared with NeuralHydrology's in ``test_signatures.py``.

The reference ``data/nh_metrics_reference.csv`` was computed by ``neuralhydrology.evaluation.metrics``
(release 1.13.0) itself, with ``experiments/nh_metrics_reference.py``, on 100 CAMELS-US basins over
water year 2014: Caravan's observed streamflow from the shared data against the day-1 forecasts of
the shipped regional model (``data/nh_parity_sim_wy2014.csv.gz``). hydroseq's values come from
:func:`hydroseq.scoring.metrics.all_metrics` with the peak windows ``hydroseq evaluate`` uses on a
daily grid, i.e. what evaluation reports.

Where a metric is undefined hydroseq returns NaN by design (``hydroseq.scoring.metrics``): on the
one basin without any flow in the year NeuralHydrology's zero divisions give +-inf, and its missed
peaks give 0 without an observed peak. These cells are listed in :data:`DELIBERATE`; every other
cell must agree (or be NaN in both).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hydroseq.scoring import metrics
from hydroseq.scoring.peak_metrics import missed_window, timing_window

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).with_name("data")
REFERENCE = DATA / "nh_metrics_reference.csv"
SIMULATIONS = DATA / "nh_parity_sim_wy2014.csv.gz"
CARAVAN_SERIES = REPO_ROOT.parent / "shared" / "data" / "caravan_camels_us" / "timeseries" / "csv" / "camels"
TOLERANCE = 1e-6
# reference column (NeuralHydrology's function) -> key of hydroseq's all_metrics
COLUMNS = {"fhv": "fhv",  # fdc_fhv
           "fms": "fms",  # fdc_fms
           "flv": "flv",  # fdc_flv
           "peak_timing": "peak_timing",  # mean_peak_timing
           "missed_peaks": "missed_peaks",  # missed_peaks
           "alpha_nse": "alpha",  # alpha_nse
           "beta_nse": "beta_nse",  # beta_nse
           "r": "r",  # pearsonr
           "nse": "nse",  # nse
           "kge": "kge",  # kge
           "peak_mape": "peak_mape"}  # mean_absolute_percentage_peak_error
NO_FLOW_BASIN = "11274500"  # Orestimba Creek: 0 mm/d on every observed day of water year 2014
DELIBERATE = {(NO_FLOW_BASIN, column) for column in ("fhv", "alpha_nse", "beta_nse", "nse", "missed_peaks")}

pytestmark = pytest.mark.skipif(not CARAVAN_SERIES.is_dir(),
                                reason="the observed series come from ../shared/data/caravan_camels_us, not beside "
                                       "the repository")


@pytest.fixture(scope="module")
def reference() -> pd.DataFrame:
    return pd.read_csv(REFERENCE, comment="#", dtype={"station": str}).set_index("station")


@pytest.fixture(scope="module")
def simulations() -> pd.DataFrame:
    return pd.read_csv(SIMULATIONS, index_col="date", dtype={"date": str}).astype(np.float64)


@pytest.fixture(scope="module")
def observations(simulations: pd.DataFrame) -> pd.DataFrame:
    columns = {}
    for station in simulations.columns:
        table = pd.read_csv(CARAVAN_SERIES / f"camels_{station}.csv", usecols=["date", "streamflow"],
                            dtype={"date": str})
        columns[station] = table.set_index("date")["streamflow"].reindex(simulations.index).astype(np.float64)
    return pd.DataFrame(columns)


@pytest.fixture(scope="module")
def hydroseq_scores(observations: pd.DataFrame, simulations: pd.DataFrame) -> pd.DataFrame:
    day = dt.timedelta(days=1)
    rows = {station: metrics.all_metrics(observations[station].to_numpy(), simulations[station].to_numpy(),
                                         timing_window=timing_window(day), missed_window=missed_window(day))
            for station in simulations.columns}
    return pd.DataFrame.from_dict(rows, orient="index")


def test_the_series_are_100_real_basins_with_gaps_zero_flows_and_late_peaks(
        reference: pd.DataFrame, simulations: pd.DataFrame, observations: pd.DataFrame,
        hydroseq_scores: pd.DataFrame) -> None:
    assert simulations.shape == (365, 100) and list(reference.index) == list(simulations.columns)
    assert (simulations.index[0], simulations.index[-1]) == ("2013-10-02", "2014-10-01")
    assert observations.notna().sum().tolist() == reference["n_valid"].tolist() == hydroseq_scores["n"].tolist()
    # the special paths are exercised: gaps (peaks next to them are skipped), zero flows (the log floor)
    # and peaks whose timing is off by 1 to 3 days
    assert (reference["n_valid"] < 365).sum() >= 10
    assert (observations == 0).any().sum() >= 10 and (simulations == 0).any().sum() >= 10
    assert reference["peak_timing"].between(0.5, 3).sum() >= 20
    assert (reference["missed_peaks"] > 0).sum() >= 20
    assert reference["peak_mape"].between(10, 100).sum() >= 50


@pytest.mark.parametrize("column", list(COLUMNS))
def test_hydroseq_equals_neuralhydrology_within_1e_6(column: str, reference: pd.DataFrame,
                                                     hydroseq_scores: pd.DataFrame) -> None:
    theirs = reference[column].to_numpy(dtype=np.float64)
    ours = hydroseq_scores.loc[reference.index, COLUMNS[column]].to_numpy(dtype=np.float64)
    deliberate = np.array([(station, column) in DELIBERATE for station in reference.index])
    compared = ~deliberate & ~(np.isnan(theirs) & np.isnan(ours))
    assert compared.sum() >= 98
    difference = np.abs(ours[compared] - theirs[compared])  # NaN (one side only) fails the comparison below
    worst = int(np.argmax(np.where(np.isfinite(difference), difference, np.inf)))
    assert np.all(difference <= TOLERANCE), (
        f"{column}: basin {reference.index[compared][worst]} hydroseq {float(ours[compared][worst])!r} vs "
        f"NeuralHydrology {float(theirs[compared][worst])!r}")


def test_where_neuralhydrology_divides_by_zero_hydroseq_says_undefined(reference: pd.DataFrame,
                                                                       observations: pd.DataFrame,
                                                                       hydroseq_scores: pd.DataFrame) -> None:
    assert observations[NO_FLOW_BASIN].max() == 0.0
    no_flow = reference.loc[NO_FLOW_BASIN]
    assert np.isposinf(no_flow[["fhv", "alpha_nse", "beta_nse"]].to_numpy(dtype=np.float64)).all()
    assert np.isneginf(no_flow["nse"]) and no_flow["missed_peaks"] == 0.0
    ours = hydroseq_scores.loc[NO_FLOW_BASIN]
    assert np.isnan(ours[[COLUMNS[column] for _, column in sorted(DELIBERATE)]].to_numpy(dtype=np.float64)).all()
