"""hydroseq's hydrological signatures give NeuralHydrology's own values on 300 real series (within 1e-6).

The reference ``data/nh_signatures_reference.csv`` was computed by ``neuralhydrology.evaluation.signatures``
(release 1.13.0) itself, with ``experiments/nh_signatures_reference.py``, on three series of the 100
CAMELS-US basins of the metrics' parity test (``test_nh_parity.py``): Caravan's observed streamflow and the
shipped regional model's day-1 forecasts over water year 2014, and the observed streamflow of 1989-10-01 ..
2009-10-01 (20 water years: the signatures computed per year are NaN on a one-year series starting on
2 October, in both). Precipitation: Caravan's ``total_precipitation_sum`` of the same basin and days.

Deliberate differences (:mod:`hydroseq.scoring.signatures`), listed in :data:`OBSERVED_STEPS`:
``zero_q_freq``, ``slope_fdc`` and ``runoff_ratio`` use the observed steps only, where NeuralHydrology
counts the missing ones in the series' length or averages precipitation over them too. For them the
reference holds NeuralHydrology's value of the series without its missing steps as well; hydroseq must
equal that on every series, and NeuralHydrology's plain value on every series without a gap. On the one
basin without any flow in water year 2014 NeuralHydrology's baseflow index raises ZeroDivisionError (the
reference holds NaN there); hydroseq's is NaN.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hydroseq.scoring import baseflow, hydrological_years, signatures

DATA = Path(__file__).with_name("data")
REFERENCE = DATA / "nh_signatures_reference.csv"
SIMULATIONS = DATA / "nh_parity_sim_wy2014.csv.gz"
CARAVAN_SERIES = Path(__file__).resolve().parents[3] / "shared" / "data" / "caravan_camels_us" / "timeseries" / "csv" \
    / "camels"
LONG_DAYS = pd.date_range("1989-10-01", "2009-10-01", freq="D")
TOLERANCE = 1e-6
OBSERVED_STEPS = ("zero_q_freq", "slope_fdc", "runoff_ratio")
PER_YEAR = ("high_q_freq", "low_q_freq", "hfd_mean", "stream_elas")
NO_FLOW_BASIN = "11274500"  # Orestimba Creek: 0 mm/d on every observed day of water year 2014

pytestmark = pytest.mark.skipif(not CARAVAN_SERIES.is_dir(),
                                reason="the observed series come from ../shared/data/caravan_camels_us, not beside "
                                       "the repository")

Series = dict[tuple[str, str], tuple[np.ndarray, np.ndarray, pd.DatetimeIndex]]


@pytest.fixture(scope="module")
def reference() -> pd.DataFrame:
    return pd.read_csv(REFERENCE, comment="#", dtype={"station": str}).set_index(["station", "series"])


@pytest.fixture(scope="module")
def series() -> Series:
    """``(station, series name) -> (flow, precipitation, local days)`` of the reference's 300 series."""
    simulations = pd.read_csv(SIMULATIONS, index_col="date", dtype={"date": str}).astype(np.float64)
    short = pd.DatetimeIndex(pd.to_datetime(simulations.index, format="%Y-%m-%d"))
    found: Series = {}
    for station in simulations.columns:
        table = pd.read_csv(CARAVAN_SERIES / f"camels_{station}.csv", usecols=["date", "total_precipitation_sum",
                                                                               "streamflow"], index_col="date",
                            parse_dates=["date"]).astype(np.float64)
        year, long = table.reindex(short), table.reindex(LONG_DAYS)
        rain = year["total_precipitation_sum"].to_numpy()
        found[station, "observed_wy2014"] = (year["streamflow"].to_numpy(), rain, short)
        found[station, "simulated_wy2014"] = (simulations[station].to_numpy(), rain, short)
        found[station, "observed_1989_2009"] = (long["streamflow"].to_numpy(),
                                                long["total_precipitation_sum"].to_numpy(), LONG_DAYS)
    return found


@pytest.fixture(scope="module")
def hydroseq_signatures(series: Series) -> pd.DataFrame:
    rows = {key: signatures.all_signatures(flow, days, rain) for key, (flow, rain, days) in series.items()}
    return pd.DataFrame.from_dict(rows, orient="index")


def test_the_series_are_300_real_ones_with_gaps_zero_flows_and_full_years(reference: pd.DataFrame,
                                                                          series: Series) -> None:
    assert list(reference.index) == list(series) and len(series) == 300
    n_valid = [int(np.isfinite(flow).sum()) for flow, _, _ in series.values()]
    assert n_valid == reference["n_valid"].tolist()
    observed_year = reference.xs("observed_wy2014", level="series")
    assert (observed_year["n_valid"] < observed_year["n_steps"]).sum() >= 10  # gaps: runs, missing steps
    assert (reference["zero_q_freq"] > 0).sum() >= 50 and (reference["n_steps"] == len(LONG_DAYS)).sum() == 100
    long = reference.xs("observed_1989_2009", level="series")
    assert long[list(PER_YEAR)].notna().all().all()  # 20 water years, 19 calendar years each
    assert reference.xs("observed_wy2014", level="series")[list(PER_YEAR)].isna().all().all()


@pytest.mark.parametrize("name", signatures.SIGNATURES)
def test_hydroseq_equals_neuralhydrology_within_1e_6(name: str, reference: pd.DataFrame,
                                                    hydroseq_signatures: pd.DataFrame) -> None:
    column = f"{name}_observed_steps" if name in OBSERVED_STEPS else name
    theirs = reference[column].to_numpy(dtype=np.float64)
    ours = hydroseq_signatures.loc[reference.index, name].to_numpy(dtype=np.float64)
    compared = ~(np.isnan(theirs) & np.isnan(ours))
    assert compared.sum() >= (95 if name in PER_YEAR else 250)
    difference = np.abs(ours[compared] - theirs[compared])  # NaN (one side only) fails the comparison below
    worst = int(np.argmax(np.where(np.isfinite(difference), difference, np.inf)))
    assert np.all(difference <= TOLERANCE), (
        f"{name}: {reference.index[compared][worst]} hydroseq {float(ours[compared][worst])!r} vs "
        f"NeuralHydrology {float(theirs[compared][worst])!r}")


@pytest.mark.parametrize("name", OBSERVED_STEPS)
def test_only_the_missing_steps_make_the_deliberate_differences(name: str, reference: pd.DataFrame,
                                                                hydroseq_signatures: pd.DataFrame) -> None:
    theirs = reference[name].to_numpy(dtype=np.float64)
    ours = hydroseq_signatures.loc[reference.index, name].to_numpy(dtype=np.float64)
    gaps = (reference["n_valid"] < reference["n_steps"]).to_numpy()
    np.testing.assert_allclose(ours[~gaps], theirs[~gaps], rtol=TOLERANCE, atol=TOLERANCE)
    assert np.sum(np.abs(ours[gaps] - theirs[gaps]) > TOLERANCE) >= 3  # NeuralHydrology's plain value differs there


def test_where_neuralhydrology_divides_by_zero_hydroseq_says_undefined(reference: pd.DataFrame, series: Series,
                                                                       hydroseq_signatures: pd.DataFrame) -> None:
    flow, _, _ = series[NO_FLOW_BASIN, "observed_wy2014"]
    assert np.nanmax(flow) == 0.0 and np.isnan(reference.loc[(NO_FLOW_BASIN, "observed_wy2014"), "baseflow_index"])
    assert np.isnan(hydroseq_signatures.loc[(NO_FLOW_BASIN, "observed_wy2014"), "baseflow_index"])
    assert hydroseq_signatures.loc[(NO_FLOW_BASIN, "observed_wy2014"), "zero_q_freq"] == 1.0


def test_a_water_year_ending_on_the_last_day_of_the_series_counts(reference: pd.DataFrame, series: Series) -> None:
    """NeuralHydrology needs the day after a water year to count it (its ``end_date < last_date``); hydroseq does
    not: cut at 2009-09-30, the 20 water years give NeuralHydrology's half-flow date of the series to 2009-10-01."""
    for station in ("01031500", "02479155", "08013000"):
        flow, _, days = series[station, "observed_1989_2009"]
        nh = reference.loc[(station, "observed_1989_2009")]
        assert signatures.hfd_mean(flow[:-1], days[:-1]) == pytest.approx(nh["hfd_mean"], abs=TOLERANCE)
        assert signatures.hfd_mean(flow[:-366], days[:-366]) != pytest.approx(nh["hfd_mean"], abs=TOLERANCE)
        assert len(hydrological_years.full_years(days[:-1], signatures.WATER_YEAR)) == 20
        assert len(hydrological_years.full_years(days[:-2], signatures.WATER_YEAR)) == 19


def test_baseflow_is_below_the_flow_in_time_order_and_filtered_per_run(series: Series) -> None:
    flow, _, days = series["01031500", "observed_wy2014"]  # one missing day splits the year in two runs
    assert np.isnan(flow).sum() == 1
    separated = baseflow.baseflow(flow, baseflow.baseflow_passes(days[1] - days[0]))
    assert np.array_equal(np.isnan(separated), np.isnan(flow))
    finite = np.isfinite(flow)
    assert np.all(separated[finite] <= flow[finite] + 1e-12) and np.all(separated[finite] >= 0.0)
    # time order: the baseflow follows the recession, so it correlates with the flow much better than reversed
    assert np.corrcoef(separated[finite], flow[finite])[0, 1] > np.corrcoef(separated[finite][::-1],
                                                                            flow[finite])[0, 1] + 0.3
    assert baseflow.baseflow_index(flow, 3) == pytest.approx(np.nansum(separated) / np.nansum(flow))


def test_definitions_on_a_real_year(series: Series) -> None:
    flow, rain, days = series["01031500", "observed_1989_2009"]
    year = slice(0, 365)  # water year 1990 (1989-10-01 .. 1990-09-30), no missing day
    assert hydrological_years.full_years(days, signatures.WATER_YEAR)[0] == year
    cumulative = np.cumsum(flow[year])
    assert signatures.hfd_mean(flow[year], days[year]) == np.argmax(cumulative > cumulative[-1] / 2)
    assert signatures.q_mean(flow) == pytest.approx(np.mean(flow))
    assert signatures.runoff_ratio(flow, rain) == pytest.approx(np.mean(flow) / np.mean(rain))
    high = flow > 9.0 * np.median(flow)
    runs = np.count_nonzero(np.diff(high.astype(int)) == 1) + int(high[0])
    assert signatures.high_q_dur(flow) == pytest.approx(high.sum() / runs)
    ordered = np.sort(flow)[::-1]
    slope = (np.log(ordered[round(0.33 * flow.size)] + 1e-8) - np.log(ordered[round(0.66 * flow.size)] + 1e-8)) / 0.33
    assert signatures.slope_fdc(flow) == pytest.approx(slope)


def test_bad_series_and_settings_are_refused() -> None:
    days = pd.date_range("2000-01-01", periods=5, freq="D")
    with pytest.raises(ValueError, match="flow has 4 values but times has 5"):
        signatures.hfd_mean(np.ones(4), days)
    with pytest.raises(ValueError, match="regular"):
        hydrological_years.grid_step(days.delete(2))
    with pytest.raises(ValueError, match="daily and hourly"):
        baseflow.baseflow_passes(pd.Timedelta(hours=3))
    with pytest.raises(ValueError, match="lower < upper"):
        signatures.slope_fdc(np.ones(5), 0.7, 0.3)
    with pytest.raises(ValueError, match="precipitation has shape"):
        signatures.runoff_ratio(np.ones(5), np.ones(4))
    years = pd.date_range("2000-10-01", "2002-10-01", freq="D")  # two water years
    assert np.isnan(signatures.stream_elas(np.zeros(years.size), np.ones(years.size), years))  # 0/0, not an error
    three = pd.date_range("2000-10-01", "2003-10-01", freq="D")
    wet_end = np.where(three >= "2002-10-01", 10.0, 1.0)  # the years' elasticities: -inf, -inf, +inf (constant rain)
    assert np.isnan(signatures.stream_elas(wet_end, np.ones(three.size), three))  # NaN, not NeuralHydrology's -inf
    assert np.isnan(signatures.runoff_ratio(np.ones(5), np.zeros(5)))
    hourly = pd.date_range("2000-01-01", periods=48, freq="h")
    assert np.isnan(signatures.all_signatures(np.ones(48), hourly)["runoff_ratio"])  # no precipitation given
    assert np.isfinite(signatures.all_signatures(np.ones(48), hourly)["baseflow_index"])  # 9 passes on an hourly grid
    assert np.isnan(signatures.all_signatures(np.ones(10), hourly[:10])["baseflow_index"])  # no run over the warm-up
