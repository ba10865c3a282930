"""Exported network == in-memory training model, for every bundled station, short histories included.

The reference is what training computes: samples from the dataset stage's own index and
``SequenceDataset.gather`` (padded, sorted), run through ``LSTMModel`` on the packed path. The
forecast builds its inputs its own way (a window of the file, cut per station, with the feature
builder both stages share); the test checks the inputs are identical and the predictions agree
within 1e-5.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import xarray as xr

from hydroseq.cli.forecast import forecast_summary
from hydroseq.config import TrainConfig
from hydroseq.dataset import (
    FeatureLayout,
    Scalers,
    SequenceDataset,
    build_features,
    build_sample_index,
    load_station_data,
)
from hydroseq.dataset.window import gather_windows
from hydroseq.errors import InputDataError
from hydroseq.export import ExportedModel, ExportMetadata
from hydroseq.export.exporter import DataProvenance, export_trained_model
from hydroseq.export.network import reference_prediction
from hydroseq.export.source import read_provenance
from hydroseq.forecast import run_forecast
from hydroseq.forecast.core import history_lengths
from hydroseq.forecast.data_window import IngestedFile
from hydroseq.model import get_model
from hydroseq.training.checkpoint import Checkpoint
from tests.fixtures import add_forecast_variable

ISSUE_LABEL = "2014-06-01T08:00"  # inside the test period, with observed flow at every lead
SHORT = {"01052500": 1, "02011460": 4, "03144000": 9, "05057200": 17, "08066300": 29}  # valid steps at T
LATE_GAUGE = {"01022500": 1, "01547700": 7, "02064000": 40}  # discharge missing for the last k steps


@pytest.fixture(scope="module")
def short_histories(ingested: Path, tmp_path_factory, edited_copy, grid_index) -> Path:
    """All 31 basins; five of them have inputs only for the last k steps before the issue step."""
    end = grid_index(ingested, ISSUE_LABEL)

    def cut(dataset) -> None:
        stations = list(dataset["station"].values)
        for station, k in SHORT.items():
            for name in ("total_precipitation_sum", "temperature_2m_mean", "potential_evaporation_sum"):
                dataset[name].values[stations.index(station), : end - k + 1] = np.nan
    return edited_copy(ingested, tmp_path_factory.mktemp("short") / "short.nc", cut)


def _training_reference(model, config: TrainConfig, scalers: Scalers, path: Path, end: int):
    """Inputs and packed-model predictions of the training pipeline's samples ending at ``end``."""
    # every station, and histories down to one step (the forecast itself skips those below min_len)
    data_config = config.data.model_copy(update={"stations": None, "min_len": 1})
    station_data = load_station_data(path, data_config)
    index = build_sample_index(station_data, data_config, "test", cache_dir=None, mode="sequence")
    dataset = SequenceDataset(station_data, scalers, index, data_config)
    batch = dataset.gather(np.flatnonzero(index.end == end), pad_to=config.data.seq_len)
    with torch.no_grad():
        out = model(batch.x, batch.lengths, path="packed")
    if model.mode == "per_step":
        out = out[torch.arange(len(batch)), batch.lengths - 1]
    stations = [station_data.station_ids[s] for s in batch.station.numpy()]
    return batch, out.numpy(), stations


def _forecast_inputs(model_dir: Path, path: Path, end: int, stations: list[str]):
    metadata = ExportMetadata.read(model_dir)
    scalers = Scalers.from_dict(metadata.scalers)
    with IngestedFile(path, metadata) as source:
        start = end - metadata.seq_len + 1
        data = source.read(start, end + 1)
    features, valid = build_features(data, scalers, metadata.feature_layout())
    rows = np.array([data.station_ids.index(s) for s in stations])
    lengths = history_lengths(valid, np.array([end - start]), metadata.seq_len)[rows, 0]
    x = gather_windows(features, rows, np.full(len(rows), end - start), lengths, metadata.seq_len)
    return x, lengths


def _check_parity(model, config, scalers, model_dir: Path, path: Path, end: int) -> None:
    batch, expected, stations = _training_reference(model, config, scalers, path, end)
    assert len(stations) == 31, "every bundled station must be covered"
    assert sorted(batch.lengths.tolist())[:5] == sorted(SHORT.values())  # short histories are in
    x, lengths = _forecast_inputs(model_dir, path, end, stations)
    np.testing.assert_array_equal(lengths, batch.lengths.numpy())
    np.testing.assert_array_equal(x, batch.x.numpy())  # forecast features == training features
    exported = ExportedModel(model_dir).predict(x, lengths, batch_size=8)
    assert np.max(np.abs(exported - expected)) <= 1e-5
    unscaled = scalers.inverse_target(exported, stations) - scalers.inverse_target(expected, stations)
    assert np.max(np.abs(unscaled)) <= 1e-5


def test_trained_model_parity_on_every_station(trained, exported: Path, short_histories: Path, grid_index) -> None:
    checkpoint = Checkpoint.load(trained.output_dir / "best.pt")
    model, config, scalers = checkpoint.build_model(), checkpoint.config, checkpoint.scalers
    _check_parity(model, config, scalers, exported, short_histories, grid_index(short_histories, ISSUE_LABEL))


def test_sequence_model_with_lagged_target_parity(trained, short_histories: Path, tmp_path: Path, grid_index) -> None:
    """Sequence mode: leads 1 and 3, observed flow as an input, an embedding layer and 2 LSTM layers."""
    layers = 2
    config = trained.config.model_copy(deep=True)
    config.data = config.data.model_copy(update={"mode": "sequence", "leads": [1, 3], "lagged_target": True})
    config.model = config.model.model_copy(update={"num_layers": layers, "embedding_size": 6})
    station_data = load_station_data(short_histories, config.data)
    scalers = Scalers.fit(station_data, config.data)
    names = [*config.data.dynamic_inputs, "streamflow_lagged", *config.data.static_inputs]
    torch.manual_seed(layers)
    model = get_model(config.model, len(names), 2, "sequence").eval()
    untrained = Checkpoint(model.state_dict(), config, names, 2, scalers, "untrained")
    provenance: DataProvenance = read_provenance(short_histories)
    export_trained_model(untrained, config.data.seq_len, tmp_path / "model", provenance, pt2=False)
    _check_parity(model, config, scalers, tmp_path / "model", short_histories, grid_index(short_histories, ISSUE_LABEL))


@pytest.mark.parametrize("per_station", [False, True], ids=["global-target-scaling", "per-station-target-scaling"])
def test_per_step_forecast_model_parity_with_late_gauges(trained, short_histories: Path, tmp_path: Path,
                                                         edited_copy, grid_index, per_station: bool) -> None:
    """Per-step forecast model: leads 1-3, observed flow with its flag and the skip from it;
    gauges 1, 7 and 40 steps late; the target scaled over all stations or per station."""
    end = grid_index(short_histories, ISSUE_LABEL)

    def late(dataset) -> None:
        stations = list(dataset["station"].values)
        for station, k in LATE_GAUGE.items():
            dataset["streamflow"].values[stations.index(station), end - k + 1: end + 1] = np.nan
    path = edited_copy(short_histories, tmp_path / "late.nc", late)
    config = trained.config.model_copy(deep=True)
    config.data = config.data.model_copy(update={"leads": [1, 2, 3], "lagged_target": True,
                                                 "per_station_target_scaling": per_station,
                                                 # a per-basin scaling for every basin forecast
                                                 "stations": None if per_station else config.data.stations})
    config.model = config.model.model_copy(update={"observed_skip": True})
    station_data = load_station_data(path, config.data)
    scalers = Scalers.fit(station_data, config.data)
    names = [*config.data.dynamic_inputs, "streamflow_lagged", "streamflow_lagged_observed",
             *config.data.static_inputs]
    torch.manual_seed(3)
    model = get_model(config.model, len(names), 3, "per_step", data=config.data).eval()
    assert model.skip_columns == (3, 4)
    untrained = Checkpoint(model.state_dict(), config, names, 3, scalers, "untrained")
    export_trained_model(untrained, config.data.seq_len, tmp_path / "model", read_provenance(path), pt2=False)
    assert ExportMetadata.read(tmp_path / "model").leads == [1, 2, 3]
    _check_parity(model, config, scalers, tmp_path / "model", path, end)

    # `hydroseq forecast`: a late gauge is forecast (flag off for the missing steps), not skipped,
    # and the output says how old its newest observation was
    late = run_forecast(tmp_path / "model", path, "2014-05-31", out=tmp_path / "late_fc.nc")
    assert late.stations_forecast > 0
    with xr.open_dataset(tmp_path / "late_fc.nc") as forecast:
        ages = forecast["observation_age"].to_series()
        every_station = set(forecast["station"].values)
        forecast_stations = set(forecast["station"].values[forecast["streamflow"].notnull().all("lead").values])
    # every station is forecast except the histories shorter than min_len (by design, with a reason)
    assert len(every_station) == 31
    assert forecast_stations == every_station - {s for s, k in SHORT.items() if k < config.data.min_len}
    with xr.open_dataset(path) as late_file:
        observed_at_issue = late_file["streamflow"].isel(time=end).notnull().to_series()
    for station, k in LATE_GAUGE.items():  # NaN: no observation at all in the model's window
        assert ages[station] == 24.0 * k if k < config.data.seq_len else np.isnan(ages[station])
    on_time = [s for s in forecast_stations if observed_at_issue[s]]
    assert (ages[on_time] == 0.0).all() and len(on_time) >= 25
    # the published forecast is the training model's, back in the target's units (per station, if so scaled)
    _, expected, stations = _training_reference(model, config, scalers, path, end)
    published = late.result.values[0]
    rows = [list(late.result.stations).index(station) for station in stations]
    reference = np.maximum(scalers.inverse_target(expected, stations), 0.0)
    forecast_rows = np.isfinite(published[rows]).all(axis=1)
    np.testing.assert_allclose(published[rows][forecast_rows], reference[forecast_rows], atol=1e-4, rtol=1e-5)


def test_quantile_ensemble_parity_and_forecast_files(trained, short_histories: Path, tmp_path: Path,
                                                     grid_index) -> None:
    """Two per-step quantile members (leads 1-3, five levels, the gated skip): the exported network gives
    the training model's quantiles (the members' mean per level), and the forecast files carry them
    ordered and never negative, with each member's median as a CF realization."""
    levels = [0.05, 0.25, 0.5, 0.75, 0.95]
    end = grid_index(short_histories, ISSUE_LABEL)
    config = trained.config.model_copy(deep=True)
    config.data = config.data.model_copy(update={"leads": [1, 2, 3], "lagged_target": True})
    config = config.model_copy(update={  # model and loss change together (assigning one alone is refused)
        "model": config.model.model_copy(update={"observed_skip": True, "quantiles": levels}),
        "training": config.training.model_copy(update={"loss": "quantile"})})
    station_data = load_station_data(short_histories, config.data)
    scalers = Scalers.fit(station_data, config.data)
    names = FeatureLayout.from_config(config.data).names
    states = []
    for seed in (5, 6):
        torch.manual_seed(seed)
        states.append(get_model(config.model, len(names), 3, "per_step", data=config.data).state_dict())
    untrained = Checkpoint(states[0], config, names, 3, scalers, "untrained", member_states=states,
                           quantile_scale=[[0.6, 0.8, 1.0, 0.9, 1.3]] * 3)  # a calibration: exported with it
    model = untrained.build_model()
    export_trained_model(untrained, config.data.seq_len, tmp_path / "model", read_provenance(short_histories),
                         pt2=False)
    metadata = ExportMetadata.read(tmp_path / "model")
    assert metadata.quantiles == levels and metadata.members == 2
    _check_parity(model, config, scalers, tmp_path / "model", short_histories, end)

    run = run_forecast(tmp_path / "model", short_histories, "2014-05-31", out=tmp_path / "fc.nc")
    assert run.result.quantile_levels == tuple(levels)
    probabilities = forecast_summary(run)["exceedance_probability"]  # the --json summary
    assert set(probabilities["01022500"]) == {"2-year", "5-year", "q95", "q99"}
    assert len(probabilities["01022500"]["q95"]) == 3
    with xr.open_dataset(tmp_path / "fc.nc") as forecast:
        quantiles = forecast["streamflow_quantile"].transpose("station", "lead", "quantile").values
        median = forecast["streamflow"].transpose("station", "lead").values
        members = forecast["streamflow_member"].transpose("station", "lead", "realization").values
        assert list(forecast["quantile"].values) == levels
        assert forecast["realization"].attrs["standard_name"] == "realization"
    forecast_rows = np.isfinite(median).all(axis=1)
    assert forecast_rows.sum() >= 25
    assert np.all(np.diff(quantiles[forecast_rows], axis=-1) >= 0) and np.all(quantiles[forecast_rows] >= 0)
    np.testing.assert_array_equal(median[forecast_rows], quantiles[forecast_rows][..., levels.index(0.5)])
    assert np.isfinite(members[forecast_rows]).all() and not np.array_equal(members[..., 0], members[..., 1])
    positive = forecast_rows[:, None] & (members > 0).all(axis=-1)  # no member clipped at 0
    # the median of the members' mean distribution is the mean of their medians
    np.testing.assert_allclose(members[positive].mean(axis=-1), median[positive], rtol=1e-5, atol=1e-5)
    assert positive.sum() >= 50
    table = pd.read_csv(tmp_path / "fc.csv", dtype={"station": str})
    in_mm = ["value", "value_q05", "value_q25", "value_q50", "value_q75", "value_q95", "value_member0", "value_member1"]
    assert [c for c in table.columns if c.startswith("value")] == in_mm + [f"{c}_m3s" for c in in_mm]
    for column in in_mm:  # the same values in m3/s, through each station's catchment area
        np.testing.assert_allclose(table[f"{column}_m3s"], table[column] * table["area_km2"] * 1000 / 86400, rtol=1e-6)
    np.testing.assert_array_equal(table["value"].to_numpy(), table["value_q50"].to_numpy())
    csv_members = np.stack([table[f"value_member{m}"].to_numpy(np.float32) for m in range(2)], axis=-1)
    np.testing.assert_array_equal(csv_members, members[forecast_rows].reshape(-1, 2))  # the NetCDF's, exactly
    _check_thresholds_and_hindcast(tmp_path, short_histories, quantiles, forecast_rows, levels)


def _check_thresholds_and_hindcast(tmp_path: Path, data: Path, quantiles: np.ndarray, rows: np.ndarray,
                                   levels: list[float]) -> None:
    """Default thresholds come from the training period (one year here: percentiles, no return periods);
    a user table replaces them; a hindcast scores the distribution."""
    with xr.open_dataset(tmp_path / "fc.nc") as forecast:
        assert list(forecast["threshold"].values) == ["2-year", "5-year", "q95", "q99"]
        probability = forecast["streamflow_exceedance_probability"].transpose("station", "lead", "threshold").values
        discharge = forecast["threshold_discharge"].transpose("station", "threshold").values
    assert np.isnan(discharge[:, :2]).all()  # 2012 alone is too short for annual maxima
    p95 = probability[rows][..., 2]
    assert np.isfinite(p95).all() and ((p95 >= 0) & (p95 <= 1)).all()
    below_q05 = discharge[rows][:, None, 2] < quantiles[rows][..., 0]  # threshold under the 5 % quantile
    assert (p95[below_q05] >= 0.95 - 1e-6).all()
    above_q95 = discharge[rows][:, None, 2] > quantiles[rows][..., -1]
    assert (p95[above_q95] <= 0.05 + 1e-6).all() and levels[-1] == 0.95

    table = tmp_path / "thresholds.csv"
    table.write_text("station,level,discharge [mm/d]\n01022500,warning,0.5\n01022500,alarm,5\n02064000,warning,1\n")
    run_forecast(tmp_path / "model", data, "2014-05-31", out=tmp_path / "user.nc", thresholds=table)
    with xr.open_dataset(tmp_path / "user.nc") as forecast:
        assert sorted(forecast["threshold"].values) == ["alarm", "warning"]
        user = forecast["streamflow_exceedance_probability"].sel(threshold="warning").to_series()
    assert user.dropna().index.get_level_values("station").unique().tolist() == ["01022500", "02064000"]

    hindcast = run_forecast(tmp_path / "model", data, "2014-05-01..2014-05-31", out=tmp_path / "hc.nc")
    assert hindcast.published is not None and hindcast.published.distribution_scores is not None
    scores = pd.read_csv(tmp_path / "hc_probabilistic.csv", dtype={"station": str})
    assert sorted(scores["lead"].unique()) == [1, 2, 3]
    assert (scores["crps"].dropna() > 0).all() and scores["coverage90"].dropna().between(0, 1).all()
    for name in ("reliability", "pit", "plume"):
        assert (tmp_path / f"hc_{name}.png").stat().st_size > 0
    assert {"pod_q95", "far_q95", "csi_q95"} <= set(scores.columns)


@pytest.mark.parametrize("rollout", [True, False], ids=["rollout", "forecast-as-inputs"])
def test_forecast_input_model_parity_product_age_and_fallback(trained, short_histories: Path, tmp_path: Path,
                                                              grid_index, rollout: bool) -> None:
    """Per-step model with weather-forecast inputs: an ingested archive (no product valid at the
    issue step of the second run) and a perfect input with noise. Exported == in-memory; the
    forecast records each product's age, lists the stations forecast without one, or fails if asked."""
    end = grid_index(short_histories, ISSUE_LABEL)
    path = add_forecast_variable(short_histories, tmp_path / "products.nc", "rain_forecast",
                                 "total_precipitation_sum", 3, relative_noise=0.3, missing_issues=[end + 1])
    config = trained.config.model_copy(deep=True)
    config.data = config.data.model_validate({
        **config.data.model_dump(), "leads": [1, 2, 3], "lagged_target": True,
        "forecast_inputs": [{"variable": "rain_forecast", "source": "ingested"},
                            {"variable": "temperature_2m_mean", "source": "perfect", "noise_std": [0.2, 0.4, 0.8]}]})
    config.model = config.model.model_copy(update={"observed_skip": True, "forecast_rollout": rollout})
    station_data = load_station_data(path, config.data)
    scalers = Scalers.fit(station_data, config.data)
    layout = FeatureLayout.from_config(config.data)
    torch.manual_seed(4)
    model = get_model(config.model, len(layout.names), 3, "per_step", data=config.data).eval()
    untrained = Checkpoint(model.state_dict(), config, layout.names, 3, scalers, "untrained")
    export_trained_model(untrained, config.data.seq_len, tmp_path / "model", read_provenance(path), pt2=False)
    metadata = ExportMetadata.read(tmp_path / "model")
    assert metadata.forecast_horizon == 3 and metadata.perfect_forecast_inputs
    _check_parity(model, config, scalers, tmp_path / "model", path, end)

    on_time = run_forecast(tmp_path / "model", path, ISSUE_LABEL, out=tmp_path / "on_time.nc")
    assert on_time.result.fallback == {}
    np.testing.assert_array_equal(on_time.result.forecast_input_age_hours[0], 6.0)
    assert "upper bound" in on_time.result.attributes["forecast_inputs_source"]
    with xr.open_dataset(tmp_path / "on_time.nc") as written:
        assert (written["forecast_input_age"].values == 6.0).all()
        assert "upper bound" in written.attrs["forecast_inputs_source"]
    later = str(np.datetime64(ISSUE_LABEL) + np.timedelta64(1, "D"))
    missing = run_forecast(tmp_path / "model", path, later, out=tmp_path / "missing.nc")
    assert len(missing.result.fallback) == missing.stations_forecast > 0  # forecast without one, and said so
    assert np.isnan(missing.result.forecast_input_age_hours).all()
    with pytest.raises(InputDataError, match="no weather forecast is valid at the issue time") as error:
        run_forecast(tmp_path / "model", path, later, out=tmp_path / "fail.nc", missing_forecast_input="fail")
    assert "\n" not in str(error.value) and not (tmp_path / "fail.nc").exists()


def test_reference_prediction_is_order_independent(trained) -> None:
    model = Checkpoint.load(trained.output_dir / "best.pt").build_model()
    x = torch.randn(6, 10, model.lstm.input_size)
    lengths = torch.tensor([3, 10, 1, 7, 10, 2])
    forward = reference_prediction(model, x, lengths)
    backward = reference_prediction(model, x.flip(0), lengths.flip(0)).flip(0)
    torch.testing.assert_close(forward, backward)
