"""pipelines/make_forecast_product.py: a generated product in the cfgrib layout that the ingest reads
back onto exactly the observed values of each lead (without noise), with noise growing with the lead."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from hydroseq.config import IngestConfig, validate_config
from hydroseq.ingest import ingest
from pipelines.make_forecast_product import FAMILY_CHUNK_DAYS, MAX_AMOUNT_MM, main, make_product
from tests.ingest.forecast_builders import caravan_window

VARIABLES = ["total_precipitation_sum", "temperature_2m_mean"]


def _config(folder, data_dir, product, rows=60):
    config = caravan_window(folder, data_dir, product, rows=rows)
    config["forecast_sources"][0]["variables"] = {
        "precipitation_forecast": {"source": "total_precipitation_sum", "units": "m", "aggregation": "sum",
                                   "accumulation": "since_reference"},
        "temperature_forecast": {"source": "temperature_2m_mean", "units": "K"}}
    return config


def _observed(folder, data_dir, rows=60):
    config = _config(folder, data_dir, folder / "unused.nc", rows)
    del config["forecast_sources"]
    return ingest(validate_config(config, IngestConfig), folder / "observed.nc", show_progress=False).output


def test_without_noise_each_lead_is_the_observation_it_covers(tmp_path, data_dir):
    observed = _observed(tmp_path, data_dir)
    product = tmp_path / "product.nc"
    assert main(["--data", str(observed), "--variables", *VARIABLES, "--out", str(product),
                 "--noise-std", "0", "0", "0", "--horizon", "3", "--latency", "6h", "--seed", "0"]) == 0
    with xr.open_dataset(product) as raw:
        assert raw["total_precipitation_sum"].dims == ("time", "step", "station")
        assert raw["total_precipitation_sum"].attrs["units"] == "m"
        assert raw["total_precipitation_sum"].attrs["GRIB_stepType"] == "accum"
        assert raw["temperature_2m_mean"].attrs["units"] == "K" and "valid_time" in raw.coords
        assert raw.attrs["hydroseq_generated"] == "true" and "not a real forecast" in raw.attrs["title"]
    report = ingest(validate_config(_config(tmp_path, data_dir, product), IngestConfig), tmp_path / "with.nc",
                    show_progress=False)
    with xr.open_dataset(report.output) as ds:
        for observed_name, forecast_name in zip(VARIABLES, ["precipitation_forecast", "temperature_forecast"],
                                                strict=True):
            forecast, truth = ds[forecast_name].values, ds[observed_name].values
            for lead in (1, 2, 3):
                np.testing.assert_allclose(forecast[:, :-lead, lead - 1], truth[:, lead:], atol=1e-4)
                assert np.isnan(forecast[:, -lead:, lead - 1]).all()  # past the data: missing, not invented


def test_noise_grows_with_the_lead(tmp_path, data_dir):
    observed = _observed(tmp_path, data_dir)
    product = make_product(observed, VARIABLES, tmp_path / "noisy.nc", [0.1, 0.4, 0.8], 3, "6h", seed=3)
    with xr.open_dataset(observed) as ds:
        truth = ds["temperature_2m_mean"].values.T + 273.15  # (time, station)
    errors = [np.nanstd(product["temperature_2m_mean"].values[:-3, lead, :] - truth[lead:-3 + lead or None])
              for lead in (1, 2, 3)]
    assert errors[0] < errors[1] < errors[2]


def _lead_errors(product, observed_path, variable):
    """Per lead 1..7: the product's values at that lead against the observation of the same valid time."""
    with xr.open_dataset(observed_path) as ds:
        truth = ds[variable].values.T  # (time, station)
    values = product[variable].values.astype(np.float64)
    if variable == "total_precipitation_sum":
        values = np.diff(values, axis=1) * 1000.0  # per-step amounts in mm, step 0 dropped
    else:
        values = values[:, 1:] - 273.15
    horizon = values.shape[1]
    return [(values[:-horizon, lead - 1], truth[lead:lead - horizon or None]) for lead in range(1, horizon + 1)]


def _correlation(forecast, truth):
    both = np.isfinite(forecast) & np.isfinite(truth)
    return np.corrcoef(forecast[both], truth[both])[0, 1]


def test_lead_growing_errors_grow_with_the_lead_and_keep_the_amount(tmp_path, data_dir):
    observed = _observed(tmp_path, data_dir, rows=1500)
    product = make_product(observed, VARIABLES, tmp_path / "p.nc", None, 7, "6h", seed=1,
                           error_model="lead_growing", error_scale=1.0)
    temperature = [np.nanstd(forecast - truth) for forecast, truth in _lead_errors(product, observed,
                                                                                    "temperature_2m_mean")]
    assert temperature[0] < temperature[3] < temperature[6]
    assert 0.4 < temperature[0] < 0.8 and 1.6 < temperature[6] < 2.6  # 0.6 K at lead 1, 2.1 K at lead 7
    pairs = _lead_errors(product, observed, "total_precipitation_sum")
    correlation = [_correlation(forecast, truth) for forecast, truth in pairs]
    assert correlation[0] > correlation[3] > correlation[6] > 0  # timing and amount errors both grow
    ratios = [np.nansum(forecast) / np.nansum(truth) for forecast, truth in pairs]
    assert all(0.8 < ratio < 1.2 for ratio in ratios)  # unbiased in the mean
    amounts = np.diff(product["total_precipitation_sum"].values, axis=1)
    assert (amounts[np.isfinite(amounts)] >= -1e-7).all()  # never negative (float32 accumulations in m)


def test_harsh_errors_are_drier_and_warmer_than_the_training_model(tmp_path, data_dir):
    observed = _observed(tmp_path, data_dir, rows=1500)
    growing = make_product(observed, VARIABLES, tmp_path / "g.nc", None, 7, "6h", seed=2,
                           error_model="lead_growing")
    harsh = make_product(observed, VARIABLES, tmp_path / "h.nc", None, 7, "6h", seed=2, error_model="harsh")
    assert harsh.attrs["hydroseq_error_model"] == "harsh"
    harsh_pairs = _lead_errors(harsh, observed, "total_precipitation_sum")
    ratio = sum(np.nansum(f) for f, _ in harsh_pairs) / sum(np.nansum(t) for _, t in harsh_pairs)
    assert 0.7 < ratio < 0.9  # 20 % too dry
    bias = np.nanmean([np.nanmean(f - t) for f, t in _lead_errors(harsh, observed, "temperature_2m_mean")])
    assert 0.7 < bias < 1.3  # 1 K too warm
    growing_pairs = _lead_errors(growing, observed, "total_precipitation_sum")
    for lead in (0, 6):
        assert _correlation(*harsh_pairs[lead]) < _correlation(*growing_pairs[lead])


def test_the_errors_do_not_depend_on_the_observations(tmp_path, data_dir):
    """The same seed gives the same errors whatever was observed: doubling every amount doubles the product."""
    observed = _observed(tmp_path, data_dir)
    doubled = tmp_path / "doubled.nc"
    with xr.open_dataset(observed) as ds:
        copy = ds.load()
    copy["total_precipitation_sum"] = copy["total_precipitation_sum"] * 2
    copy.to_netcdf(doubled)
    one = make_product(observed, VARIABLES, tmp_path / "a.nc", None, 7, "6h", seed=4, error_model="lead_growing")
    two = make_product(doubled, VARIABLES, tmp_path / "b.nc", None, 7, "6h", seed=4, error_model="lead_growing")
    np.testing.assert_allclose(two["total_precipitation_sum"].values, 2 * one["total_precipitation_sum"].values,
                               rtol=1e-5, equal_nan=True)
    np.testing.assert_array_equal(two["temperature_2m_mean"].values, one["temperature_2m_mean"].values)


def test_the_family_draws_one_error_model_per_station_and_chunk(tmp_path, data_dir):
    """Temperature bias and rain amount change from one 90-day chunk to the next and hold within one."""
    observed = _observed(tmp_path, data_dir, rows=1800)
    product = make_product(observed, VARIABLES, tmp_path / "f.nc", None, 7, "6h", seed=5, error_model="family")
    assert product.attrs["hydroseq_error_model"] == "family"
    forecast, truth = _lead_errors(product, observed, "temperature_2m_mean")[0]
    error = forecast - truth                                       # (time, station), lead 1
    chunks = [np.nanmean(error[start:start + FAMILY_CHUNK_DAYS], axis=0)
              for start in range(0, len(error) - FAMILY_CHUNK_DAYS, FAMILY_CHUNK_DAYS)]
    biases = np.array(chunks)                                      # (chunk, station)
    assert np.nanstd(biases) > 0.5                                 # biases drawn in -1.5..1.5 K
    assert np.nanmax(np.abs(biases)) < 1.9
    first = error[:FAMILY_CHUNK_DAYS, 0]                           # within one chunk: one bias, AR noise around it
    assert np.nanstd(first) < 1.5
    amounts = np.diff(product["total_precipitation_sum"].values, axis=1)
    assert (amounts[np.isfinite(amounts)] >= -1e-7).all()
    assert np.nanmax(amounts) * 1000 <= MAX_AMOUNT_MM + 1e-3
    pairs = _lead_errors(product, observed, "total_precipitation_sum")
    assert _correlation(*pairs[0]) > _correlation(*pairs[6]) > 0
    ratio = sum(np.nansum(f) for f, _ in pairs) / sum(np.nansum(t) for _, t in pairs)
    assert 0.85 < ratio < 1.3                                      # biases both ways, false alarms add a little


def test_the_held_out_family_has_another_form(tmp_path, data_dir):
    """nwp_like: storms too dry and light rain too wet (compressed intensities), a seasonal temperature bias."""
    observed = _observed(tmp_path, data_dir, rows=1800)
    product = make_product(observed, VARIABLES, tmp_path / "n.nc", None, 7, "6h", seed=6, error_model="nwp_like")
    forecast, truth = _lead_errors(product, observed, "total_precipitation_sum")[0]
    both = np.isfinite(forecast) & np.isfinite(truth)
    heavy = both & (truth > 20)
    light = both & (truth > 0.5) & (truth < 3)
    assert np.sum(forecast[heavy]) < 0.85 * np.sum(truth[heavy])
    assert np.sum(forecast[light]) > 1.1 * np.sum(truth[light])
    temperature, observed_t = _lead_errors(product, observed, "temperature_2m_mean")[0]
    with xr.open_dataset(observed) as ds:
        day = ds["time"].dt.dayofyear.values[1:1 - 7 or None]     # the valid day of lead 1
    summer, winter = (day > 60) & (day < 120), (day > 240) & (day < 300)
    assert np.nanmean((temperature - observed_t)[summer]) > 0.5 > -0.5 > np.nanmean((temperature - observed_t)[winter])


@pytest.mark.parametrize("error_model", ["family", "nwp_like"])
def test_a_product_never_reads_an_observation_after_its_last_valid_time(tmp_path, data_dir, error_model):
    """Perturb the future: changing every observation from day D on leaves the runs valid before D unchanged."""
    observed = _observed(tmp_path, data_dir, rows=400)
    changed = tmp_path / "changed.nc"
    with xr.open_dataset(observed) as ds:
        copy = ds.load()
    day = 300
    for name in VARIABLES:
        values = copy[name].values.copy()
        values[:, day:] = values[:, day:] * 3 + 5
        copy[name] = (copy[name].dims, values, copy[name].attrs)
    copy.to_netcdf(changed)
    one = make_product(observed, VARIABLES, tmp_path / "a.nc", None, 7, "6h", seed=7, error_model=error_model)
    two = make_product(changed, VARIABLES, tmp_path / "b.nc", None, 7, "6h", seed=7, error_model=error_model)
    last_unchanged = day - 7 - 2                                   # its lead 7, displaced by up to a day, precedes D
    for name in VARIABLES:
        np.testing.assert_array_equal(one[name].values[:last_unchanged], two[name].values[:last_unchanged])
        assert not np.array_equal(one[name].values[day:], two[name].values[day:])


def test_an_unknown_error_model_or_missing_noise_is_one_line(tmp_path, data_dir, capsys):
    observed = _observed(tmp_path, data_dir)
    out = tmp_path / "never.nc"
    assert main(["--data", str(observed), "--variables", *VARIABLES, "--out", str(out), "--horizon", "7"]) == 2
    message = capsys.readouterr().err.strip()
    assert "--noise-std needs one value per lead (7), got 0" in message and "\n" not in message
    assert not out.exists()
