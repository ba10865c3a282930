"""Return-period flows: water years and their maxima, L-moment fits (against lmoments3 and published values),
the bootstrap interval, the earlier maximum-likelihood fit, and stations that cannot be fitted."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from lmoments3 import distr
from scipy import stats

from hydroseq.scoring import return_periods
from hydroseq.scoring.return_periods import FrequencyAnalysis, fit_return_periods

DATA = Path(__file__).resolve().parents[2] / "data" / "daily_caravan_camels_us"
REAL_STATIONS = ["01022500", "01547700", "02064000", "03015500"]
LOC, SCALE = 100.0, 30.0


def daily(start: str, end: str) -> np.ndarray:
    return np.arange(start, end, dtype="datetime64[D]")


def gumbel_series(stations: int, years: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Daily base flow below 10 with one Gumbel(LOC, SCALE) peak per water year and station."""
    rng = np.random.default_rng(seed)
    times = daily("1950-10-01", f"{1950 + years}-10-01")
    water_year = return_periods.water_years(times)
    values = rng.uniform(0.0, 10.0, size=(stations, times.size))
    for year in np.unique(water_year):
        steps = np.flatnonzero(water_year == year)
        peak_steps = steps[rng.integers(0, steps.size, size=stations)]
        values[np.arange(stations), peak_steps] = stats.gumbel_r.rvs(LOC, SCALE, size=stations, random_state=rng)
    return values, times


def series_with_maxima(maxima: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """One station's daily series whose water-year maxima are ``maxima`` (0 on every other day)."""
    times = daily("1950-10-01", f"{1950 + len(maxima)}-10-01")
    values = np.zeros((1, times.size))
    for year, peak in enumerate(maxima):
        values[0, np.flatnonzero(return_periods.water_years(times) == 1951 + year)[100]] = peak
    return values, times


@pytest.fixture(scope="module")
def caravan() -> tuple[np.ndarray, np.ndarray]:
    """Daily discharge (mm/d) of four bundled Caravan basins, water years 1982-2014 (33 years)."""
    frames = [pd.read_csv(DATA / f"{station}.csv", usecols=["date", "streamflow"], parse_dates=["date"])
              for station in REAL_STATIONS]
    times = frames[0]["date"].to_numpy().astype("datetime64[D]")
    keep = (times >= np.datetime64("1981-10-01")) & (times < np.datetime64("2014-10-01"))
    return np.stack([frame["streamflow"].to_numpy(np.float64)[keep] for frame in frames]), times[keep]


def test_water_years_are_named_by_the_year_they_end_in() -> None:
    times = np.array(["2000-09-30", "2000-10-01", "2001-09-30T23:00", "2001-10-01"], dtype="datetime64[s]")
    assert return_periods.water_years(times).tolist() == [2000, 2001, 2001, 2002]
    assert return_periods.water_years(times, 1).tolist() == [2000, 2000, 2001, 2001]
    with pytest.raises(ValueError, match="1..12"):
        return_periods.water_years(times, 13)


def test_annual_maxima_respect_the_water_year_boundary() -> None:
    times = daily("2000-10-01", "2002-10-01")
    values = np.ones((1, times.size))
    values[0, times == np.datetime64("2001-09-30")] = 50.0  # last day of water year 2001
    values[0, times == np.datetime64("2001-10-01")] = 80.0  # first day of water year 2002
    years, maxima = return_periods.annual_maxima(values, times)
    assert years.tolist() == [2001, 2002]
    assert maxima.tolist() == [[50.0, 80.0]]
    # calendar years: 2000 and 2002 hold 92 and 273 of 366 and 365 days, too few; 2001 holds both peaks
    years, maxima = return_periods.annual_maxima(values, times, water_year_start_month=1)
    assert years.tolist() == [2000, 2001, 2002]
    assert np.isnan(maxima[0, [0, 2]]).all() and maxima[0, 1] == 80.0


def test_annual_maxima_need_the_coverage_of_a_full_year() -> None:
    times = daily("2000-10-01", "2003-10-01")  # water years 2001 (365 days), 2002, 2003
    values = np.ones((2, times.size))
    water_year = return_periods.water_years(times)
    values[0, np.flatnonzero(water_year == 2001)[:92]] = np.nan  # 273 / 365 = 0.75 finite: below 0.8
    values[0, np.flatnonzero(water_year == 2002)[:55]] = np.nan  # 310 / 365 = 0.85 finite: kept
    values[1, :] = np.nan
    _, maxima = return_periods.annual_maxima(values, times, min_coverage=0.8)
    assert np.isnan(maxima[0, 0]) and maxima[0, 1:].tolist() == [1.0, 1.0]
    assert np.isnan(maxima[1]).all()
    _, lenient = return_periods.annual_maxima(values, times, min_coverage=0.7)
    assert lenient[0].tolist() == [1.0, 1.0, 1.0]


def test_annual_maxima_of_hourly_steps_and_bad_times() -> None:
    times = np.arange("2000-10-01T00", "2001-10-01T00", dtype="datetime64[h]")  # 8,760 hours
    values = np.ones((1, times.size))
    values[0, 100] = 9.0
    assert return_periods.annual_maxima(values, times)[1].tolist() == [[9.0]]
    _, partial = return_periods.annual_maxima(values[:, : 8760 // 2], times[: 8760 // 2])  # half a year only
    assert np.isnan(partial).all()
    with pytest.raises(ValueError, match="increasing"):
        return_periods.annual_maxima(values[:, :3], times[[0, 2, 1]])


@pytest.mark.parametrize("distribution", ["gumbel", "gev"])
def test_lmoment_fits_equal_lmoments3_on_real_water_year_maxima(caravan: tuple[np.ndarray, np.ndarray],
                                                                 distribution: str) -> None:
    values, times = caravan
    _, maxima = return_periods.annual_maxima(values, times)
    assert np.isfinite(maxima).sum(axis=1).tolist() == [33, 33, 33, 33]
    fit = fit_return_periods(values, times, (2, 5, 10), FrequencyAnalysis(distribution=distribution,
                                                                          bootstrap_samples=0))
    library = distr.gum if distribution == "gumbel" else distr.gev
    for s, row in enumerate(maxima):
        parameters = library.lmom_fit(row)  # lmoments3's own estimate from the data
        expected = library.isf(1.0 / np.array([2.0, 5.0, 10.0]), **parameters)
        # Gumbel is closed-form; lmoments3 iterates a GEV's shape until the L-skewness is within about 1e-7
        # (ours: 1e-15), which moves its flows by up to 1e-7 of their value
        np.testing.assert_allclose(fit.flows[s], expected, rtol=1e-10 if distribution == "gumbel" else 1e-6)
    assert fit.years.tolist() == [33, 33, 33, 33] and fit.notes == ("",) * 4
    assert np.all(np.diff(fit.flows, axis=1) > 0)


@pytest.mark.parametrize(("distribution", "two_year", "five_year"), [("gumbel", 2.889274, 4.756363),
                                                                       ("gev", 2.705672, 4.537048)])
def test_lmoment_fits_reproduce_the_published_quantiles(distribution: str, two_year: float,
                                                        five_year: float) -> None:
    """The expected values of lmoments3's own test-suite (lmoments3 1.0.8, ``lmoments3/tests/test_lmoments.py``,
    classes ``TestGum`` and ``TestGev``: sample ``[2.0, 3.0, 4.0, 2.4, 5.5, 1.2, 5.4, 2.2, 7.1, 1.3, 1.5]``, fitted
    parameters Gumbel loc 2.285519 / scale 1.647295 and GEV loc 2.1792884 / scale 1.3956404 / shape -0.1555609,
    ``correct_qua`` at non-exceedance 0.5 and 0.8): the 2- and 5-year flows of that record."""
    values, times = series_with_maxima([2.0, 3.0, 4.0, 2.4, 5.5, 1.2, 5.4, 2.2, 7.1, 1.3, 1.5])
    fit = fit_return_periods(values, times, (2, 5), FrequencyAnalysis(distribution=distribution))
    np.testing.assert_allclose(fit.flows[0], [two_year, five_year], atol=2e-6)
    assert fit.years.tolist() == [11]


def test_the_interval_holds_the_estimate_and_narrows_with_more_years(caravan: tuple[np.ndarray, np.ndarray]
                                                                     ) -> None:
    values, times = caravan
    short = times < np.datetime64("1989-10-01")  # water years 1982-1989
    full = fit_return_periods(values, times)
    first = fit_return_periods(values[:, short], times[short])
    assert first.years.tolist() == [8] * 4 and full.years.tolist() == [33] * 4
    for fit in (full, first):
        assert np.all((fit.lower < fit.flows) & (fit.flows < fit.upper))
    # a Gumbel's bootstrap interval is its fitted scale times that of the standard Gumbel for the record's
    # length: per unit of scale, 33 years give a narrower interval than 8 (about sqrt(8 / 33) = 0.49 times)

    def width_per_scale(fit: return_periods.ReturnPeriodFlows, keep: slice | np.ndarray) -> np.ndarray:
        _, maxima = return_periods.annual_maxima(values[:, keep], times[keep])
        scale = np.array([distr.gum.lmom_fit(row)["scale"] for row in maxima])
        return (fit.upper - fit.lower) / scale[:, None]

    assert np.all(width_per_scale(full, slice(None)) < 0.6 * width_per_scale(first, short))
    assert np.all(full.upper - full.lower < first.upper - first.lower)  # and here in m3/s too


def test_the_interval_is_seeded_and_each_stations_own(caravan: tuple[np.ndarray, np.ndarray]) -> None:
    values, times = caravan
    fit = fit_return_periods(values, times)
    again = fit_return_periods(values[::-1], times)  # other order: the same interval per station
    np.testing.assert_array_equal(again.lower[::-1], fit.lower)
    np.testing.assert_array_equal(again.upper[::-1], fit.upper)
    other = fit_return_periods(values, times, analysis=FrequencyAnalysis(seed=1))
    np.testing.assert_array_equal(other.flows, fit.flows)
    assert not np.array_equal(other.lower, fit.lower)
    np.testing.assert_allclose(other.lower, fit.lower, rtol=0.05)  # 1000 samples: the seed moves it little


def test_a_gumbel_interval_is_the_bootstrap_of_the_station_itself(caravan: tuple[np.ndarray, np.ndarray]) -> None:
    """The Gumbel interval is drawn once per record length for the standard Gumbel and scaled per station; it
    equals drawing the station's own records from its fitted distribution."""
    values, times = caravan
    fit = fit_return_periods(values, times, (2, 5, 100))
    _, maxima = return_periods.annual_maxima(values, times)
    analysis = FrequencyAnalysis()
    for s, row in enumerate(maxima):
        parameters = distr.gum.lmom_fit(row)
        lower, upper = return_periods.bootstrap_interval(np.array([parameters["loc"], parameters["scale"]]), 33,
                                                         1.0 / np.array([2.0, 5.0, 100.0]), analysis)
        np.testing.assert_allclose(fit.lower[s], lower, rtol=1e-9)
        np.testing.assert_allclose(fit.upper[s], upper, rtol=1e-9)


def test_the_mle_option_is_the_earlier_fit(caravan: tuple[np.ndarray, np.ndarray]) -> None:
    values, times = caravan
    _, maxima = return_periods.annual_maxima(values, times)
    fit = fit_return_periods(values, times, (2, 5), FrequencyAnalysis(method="mle"))
    for s, row in enumerate(maxima):
        location, scale = stats.gumbel_r.fit(row)
        np.testing.assert_array_equal(fit.flows[s], stats.gumbel_r.isf([0.5, 0.2], location, scale))
    assert np.isnan(fit.lower).all() and np.isnan(fit.upper).all()  # no interval
    lmoments = return_periods.return_period_flows(values, times)
    difference = np.abs(fit.flows / lmoments - 1.0)  # measured: 2-year up to 3.8 %, 5-year up to 12.2 %
    assert np.all(difference > 0) and np.all(difference[:, 0] < 0.04) and np.all(difference[:, 1] < 0.13)


def test_a_synthetic_gumbel_record_gives_back_its_2_and_5_year_flows() -> None:
    values, times = gumbel_series(stations=20, years=60, seed=42)
    periods = np.array([2.0, 5.0])
    true = stats.gumbel_r.isf(1.0 / periods, LOC, SCALE)
    # standard error of a Gumbel maximum-likelihood quantile from n maxima (reduced variate y):
    # scale / sqrt(n) * sqrt(1.1087 + 0.5140 y + 0.6079 y^2); for n = 60 about 4.5 and 7.0 (L-moments: a little more)
    reduced = -np.log(-np.log(1.0 - 1.0 / periods))
    standard_error = SCALE / math.sqrt(60) * np.sqrt(1.1087 + 0.5140 * reduced + 0.6079 * reduced ** 2)
    for method in ("lmoments", "mle"):
        for distribution in ("gumbel", "gev"):
            flows = return_periods.return_period_flows(values, times, tuple(periods), distribution, method)
            assert flows.shape == (20, 2)
            assert np.all(np.abs(flows - true) < 3.5 * standard_error), (method, distribution)
            assert np.median(np.abs(flows / true - 1.0), axis=0) == pytest.approx([0.0, 0.0], abs=0.05)


def test_stations_that_cannot_be_fitted_are_nan_with_the_reason(caravan: tuple[np.ndarray, np.ndarray]) -> None:
    real, times = caravan
    values = np.stack([real[0], np.full(times.size, np.nan), real[1], np.zeros(times.size)])
    values[2, times >= np.datetime64("1985-10-01")] = np.nan  # 4 water years of a real record left
    fit = fit_return_periods(values, times)
    assert np.isfinite(fit.flows[0]).all() and fit.notes[0] == ""
    assert np.isnan(fit.flows[1:]).all() and np.isnan(fit.lower[1:]).all() and np.isnan(fit.upper[1:]).all()
    assert fit.notes[1] == "no finite discharge in the period"
    assert fit.notes[2] == "4 water years with enough days for an annual maximum, fewer than the 5 a fit needs"
    assert fit.notes[3] == "all 33 water-year maxima are 0: no spread to fit a distribution to"  # a dry channel
    assert fit.years.tolist() == [33, 0, 4, 33]
    earlier = fit_return_periods(values, times, analysis=FrequencyAnalysis(method="mle"))
    assert earlier.flows[3].tolist() == [0.0, 0.0]  # the earlier fit gave all-equal maxima as the flow
    with pytest.raises(ValueError, match="exceed 1 year"):
        fit_return_periods(values, times, periods=(1,))
    with pytest.raises(ValueError, match="method"):
        FrequencyAnalysis(method="moments")  # type: ignore[arg-type]
