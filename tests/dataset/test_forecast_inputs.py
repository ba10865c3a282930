"""Weather-forecast inputs: perfect (observed lead window) and ingested (issued products), with no leak."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hydroseq.config import DataConfig
from hydroseq.config.train import ForecastInput
from hydroseq.dataset import FeatureLayout, Scalers, SequenceDataset, build_features, build_sample_index
from hydroseq.dataset import load_station_data as load
from hydroseq.dataset.forecast_inputs import forecast_noise, lead_span, partial_leads
from hydroseq.errors import InputDataError
from tests.fixtures import add_forecast_variable

RAIN = "total_precipitation_sum"
HORIZON = 3
TRAIN_END = "1995-12-31"


def perfect_config(make_config, **overrides) -> DataConfig:
    fields = {"leads": [1, 2, 3], "lagged_target": True, "seq_len": 120, "min_len": 10, "spin_up": 5,
              "forecast_inputs": [{"variable": RAIN, "source": "perfect"}]}
    return make_config(**{**fields, **overrides})


@pytest.fixture(scope="module")
def ingested_nc(small_nc: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("forecast") / "with_forecast.nc"
    return add_forecast_variable(small_nc, path, "rain_forecast", RAIN, HORIZON, relative_noise=0.3,
                                 missing_issues=[100, 101, 5000])


def test_perfect_input_is_the_observed_value_at_t_plus_lead(small_nc: Path, make_config) -> None:
    config = perfect_config(make_config)
    data = load(small_nc, config)
    rain = data.dynamic[..., 0]
    assert data.forecast.shape == (data.n_stations, data.n_times, 1, HORIZON)
    for lead in range(1, HORIZON + 1):
        assert np.array_equal(data.forecast[:, :-lead, 0, lead - 1], rain[:, lead:], equal_nan=True)
        assert np.isnan(data.forecast[:, -lead:, 0, lead - 1]).all()  # nothing invented past the end


def test_feature_columns_hold_scaled_values_then_present_flags(small_nc: Path, make_config) -> None:
    config = perfect_config(make_config)
    data = load(small_nc, config)
    scalers = Scalers.fit(data, config)
    layout = FeatureLayout.from_config(config)
    values = [f"{RAIN}_forecast_lead{lead}" for lead in (1, 2, 3)]
    assert layout.names[3:11] == ["streamflow_lagged", "streamflow_lagged_observed", *values,
                                  *(f"{name}_present" for name in values)]
    until = 9000
    features, valid = build_features(data, scalers, layout, forecast_until=until)
    block = features[..., layout.forecast_columns]
    for lead in (1, 2, 3):
        expected = scalers.transform_forecast(data.forecast)[:, :, 0, lead - 1]
        usable = np.isfinite(expected) & (np.arange(data.n_times) + lead <= until)[None, :]
        np.testing.assert_array_equal(block[..., lead - 1], np.where(usable, expected, 0))
        np.testing.assert_array_equal(block[..., HORIZON + lead - 1], usable.astype(np.float32))
    assert np.array_equal(valid, np.isfinite(data.dynamic).all(axis=-1))  # a missing forecast cuts no history


def test_the_train_split_never_reads_a_value_after_its_period(contract_writer, tmp_path: Path, make_config) -> None:
    """Every raw value after the train period changed: the training scalers, features and targets are
    bit-identical (the perfect forecast of the last train days would read the validation period)."""
    def change_after_train(frames: dict[str, pd.DataFrame]) -> None:
        for frame in frames.values():
            later = frame["date"] > pd.Timestamp(TRAIN_END)
            frame.loc[later, [RAIN, "temperature_2m_mean", "streamflow"]] *= 3.0
            frame.loc[later, RAIN] += 40.0

    config = perfect_config(make_config)
    built = []
    for name, edit in (("plain", None), ("changed", change_after_train)):
        data = load(contract_writer(tmp_path / f"{name}.nc", transform=edit), config)
        scalers = Scalers.fit(data, config)
        index = build_sample_index(data, config, "train", cache_dir=None)
        built.append((scalers.to_dict(), SequenceDataset(data, scalers, index, config).gather(np.arange(len(index)))))
    (scalers_a, batch_a), (scalers_b, batch_b) = built
    assert scalers_a == scalers_b
    assert np.array_equal(batch_a.x.numpy(), batch_b.x.numpy())
    assert np.array_equal(batch_a.y.numpy(), batch_b.y.numpy()) and np.array_equal(batch_a.mask, batch_b.mask)


@settings(max_examples=20, deadline=None)
@given(t=st.integers(20, 12000), bump=st.floats(0.5, 80, allow_nan=False))
def test_ingested_products_issued_after_t_never_move_a_feature_at_t(ingested_nc: Path, make_config, t: int,
                                                                    bump: float) -> None:
    """Forecast archive rows issued after t and observations after t changed: features up to t are
    bit-identical; with a perfect input, the same holds for observations after t + horizon."""
    config = perfect_config(make_config, forecast_inputs=[{"variable": "rain_forecast", "source": "ingested"}])
    data = load(ingested_nc, config)
    scalers = Scalers.fit(data, config)
    layout = FeatureLayout.from_config(config)
    future = data.forecast.copy()
    future[:, t + 1:] += bump
    dynamic = data.dynamic.copy()
    dynamic[:, t + 1:] += bump
    changed = type(data)(**{**data.__dict__, "forecast": future, "dynamic": dynamic})
    before, _ = build_features(data, scalers, layout)
    after, _ = build_features(changed, scalers, layout)
    assert np.array_equal(before[:, : t + 1], after[:, : t + 1])
    assert not np.array_equal(before[:, t + 1:], after[:, t + 1:])  # control: the change does reach later steps


def test_an_ingested_archive_is_read_as_written_and_a_missing_product_reads_absent(ingested_nc: Path,
                                                                                    make_config) -> None:
    config = perfect_config(make_config, forecast_inputs=[{"variable": "rain_forecast", "source": "ingested"}])
    data = load(ingested_nc, config)
    import xarray as xr
    with xr.open_dataset(ingested_nc) as file:
        written = file["rain_forecast"].transpose("station", "time", "lead").values
    assert np.array_equal(data.forecast[:, :, 0], written, equal_nan=True)
    scalers = Scalers.fit(data, config)
    layout = FeatureLayout.from_config(config)
    features, _ = build_features(data, scalers, layout)
    flags = features[..., layout.forecast_columns][..., HORIZON:]
    assert (flags[:, [100, 101, 5000]] == 0).all() and (flags[:, 102, 0] == 1).all()


def test_an_ingested_input_the_file_lacks_or_holds_short_is_a_clear_error(ingested_nc: Path, small_nc: Path,
                                                                         make_config) -> None:
    config = perfect_config(make_config, forecast_inputs=[{"variable": "rain_forecast", "source": "ingested"}])
    with pytest.raises(InputDataError, match="forecast variable 'rain_forecast' not found"):
        load(small_nc, config)
    longer = perfect_config(make_config, leads=[1, 2, 3, 4],
                            forecast_inputs=[{"variable": "rain_forecast", "source": "ingested"}])
    with pytest.raises(InputDataError, match=r"has leads \[1, 2, 3\], the model needs 1..4"):
        load(ingested_nc, longer)
    wrong_role = perfect_config(make_config, forecast_inputs=[{"variable": RAIN, "source": "ingested"}])
    with pytest.raises(InputDataError, match="expected a \\(station, time, lead\\) forecast variable"):
        load(ingested_nc, wrong_role)


def test_noise_is_keyed_by_station_label_and_lead_so_every_window_draws_the_same() -> None:
    item = ForecastInput(variable=RAIN, source="perfect", noise_std=[0.5, 1.0, 2.0], noise_seed=7)
    times = pd.date_range("1990-01-01", periods=4000, freq="D").values.astype("datetime64[ns]")
    stations = ("a", "b", "c")
    full = forecast_noise(item, stations, times)
    assert np.array_equal(forecast_noise(item, stations[1:], times[1000:1200]), full[1:, 1000:1200])
    np.testing.assert_allclose(full.std(axis=(0, 1)), [0.5, 1.0, 2.0], rtol=0.05)
    np.testing.assert_allclose(full.mean(axis=(0, 1)), 0.0, atol=0.05)
    other = forecast_noise(item.model_copy(update={"noise_seed": 8}), stations, times)
    assert abs(np.corrcoef(full.ravel(), other.ravel())[0, 1]) < 0.02
    other_input = forecast_noise(item.model_copy(update={"variable": "temperature_2m_mean"}), stations, times)
    assert abs(np.corrcoef(full.ravel(), other_input.ravel())[0, 1]) < 0.02  # inputs never share noise


def test_scalers_round_trip_their_forecast_part(small_nc: Path, make_config) -> None:
    config = perfect_config(make_config)
    scalers = Scalers.fit(load(small_nc, config), config)
    assert scalers.forecast_names == [RAIN]
    again = Scalers.from_dict(scalers.to_dict())
    assert again.to_dict() == scalers.to_dict()
    assert np.array_equal(again.forecast_std, scalers.forecast_std)


@pytest.mark.parametrize(("fields", "message"), [
    ({"mode": "sequence", "leads": [1]}, "forecast_inputs need per-step mode"),
    ({"forecast_inputs": [{"variable": RAIN, "source": "perfect", "noise_std": [0.1]}]}, "one value per lead"),
    ({"forecast_inputs": [{"variable": RAIN, "source": "ingested", "noise_std": [0.1, 0.1, 0.1]}]},
     "noise_std applies to source 'perfect' only"),
    ({"forecast_inputs": [{"variable": RAIN, "source": "perfect"}] * 2}, "name a variable twice"),
    ({"forecast_inputs": [], "forecast_hiding": {}}, "forecast_hiding needs forecast_inputs"),
])
def test_config_refuses_forecast_inputs_it_cannot_train(make_config, fields: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        perfect_config(make_config, **fields)


def test_a_forecast_covers_every_lead_or_none_else_it_is_partial():
    """The one lead-coverage mask of ``hydroseq forecast`` and the served model: the lead axis is the last."""
    nan = np.nan
    forecast = np.array([[[1.0, 2.0, 3.0], [nan, nan, nan]],  # station 0: every lead, no forecast
                         [[1.0, 2.0, nan], [nan, 0.0, nan]]])  # station 1: a short run, a lone lead
    np.testing.assert_array_equal(partial_leads(forecast), [[False, False], [True, True]])
    np.testing.assert_array_equal(partial_leads(forecast[None]), [[[False, False], [True, True]]])  # any axes before
    assert lead_span([4, 5, 6, 7]) == "4-7" and lead_span(np.array([7, 2, 5, 6])) == "2, 5-7"
