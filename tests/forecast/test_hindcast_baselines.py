"""Hindcast scores: the model beside persistence and training-period climatology, on the real bundled data."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from hydroseq.cli import main
from hydroseq.dataset import Scalers, load_station_data
from hydroseq.export import ExportMetadata
from hydroseq.forecast import baselines as forecast_baselines
from hydroseq.forecast import run_forecast
from hydroseq.forecast.baselines import climatology_table, newest_observation_persistence
from hydroseq.forecast.data_window import IngestedFile
from hydroseq.scoring.baselines import doy_climatology
from hydroseq.scoring.metrics import nse

RANGE = "2014-05-01..2014-06-30"
LATE = {"01022500": 3, "01547700": 12}  # discharge missing for k days before 2014-06-10 (inclusive)
LATE_END = "2014-06-11T08:00"  # grid label of the local day 2014-06-10


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def forecast_model(trained, ingested: Path, tmp_path_factory) -> Path:
    """A per-step forecast model (leads 1-3, observed discharge as input) exported untrained."""
    import torch

    from hydroseq.export.exporter import export_trained_model
    from hydroseq.export.source import read_provenance
    from hydroseq.model import get_model
    from hydroseq.training.checkpoint import Checkpoint

    config = trained.config.model_copy(deep=True)
    config.data = config.data.model_copy(update={"leads": [1, 2, 3], "lagged_target": True})
    scalers = Scalers.fit(load_station_data(ingested, config.data), config.data)
    names = [*config.data.dynamic_inputs, "streamflow_lagged", "streamflow_lagged_observed",
             *config.data.static_inputs]
    torch.manual_seed(5)
    model = get_model(config.model, len(names), 3, "per_step").eval()
    untrained = Checkpoint(model.state_dict(), config, names, 3, scalers, "untrained")
    out = tmp_path_factory.mktemp("forecast_model") / "model"
    export_trained_model(untrained, config.data.seq_len, out, read_provenance(ingested), pt2=False)
    return out


@pytest.fixture(scope="module")
def late_gauges(ingested: Path, tmp_path_factory, edited_copy, grid_index) -> Path:
    """The real data with two gauges silent for the last days before 2014-06-10."""
    end = grid_index(ingested, LATE_END)

    def silence(dataset) -> None:
        stations = list(dataset["station"].values)
        for station, k in LATE.items():
            dataset["streamflow"].values[stations.index(station), end - k + 1: end + 1] = np.nan
    return edited_copy(ingested, tmp_path_factory.mktemp("late") / "late.nc", silence)


def test_scores_hold_model_persistence_and_climatology_for_every_station_and_lead(forecast_model, ingested,
                                                                                   tmp_path, capsys) -> None:
    out = tmp_path / "h.nc"
    assert main(["forecast", "--model", str(forecast_model), "--data", str(ingested), "--issue-time", RANGE,
                 "--out", str(out)]) == 0
    rows = _rows(tmp_path / "h_scores.csv")
    with xr.open_dataset(ingested) as data:
        stations = {str(s) for s in data["station"].values}
    keys = {(row["station"], row["lead"], row["forecast"]) for row in rows}
    assert keys == {(s, str(lead), f) for s in stations for lead in (1, 2, 3)
                    for f in ("model", "persistence", "climatology")}
    assert len(rows) == len(keys) == 31 * 3 * 3
    model_scored = {(row["station"], row["lead"]) for row in rows if row["forecast"] == "model" and row["nse"]}
    assert len(model_scored) >= 30 * 3  # one basin has a constant (zero) flow in May-June: NSE undefined
    baseline_scored = {(row["station"], row["lead"]) for row in rows if row["forecast"] != "model" and row["nse"]}
    assert baseline_scored == model_scored
    printed = capsys.readouterr().out
    assert "persistence" in printed and "climatology" in printed and "beats" in printed
    assert (tmp_path / "h_scores.png").stat().st_size > 0


def test_persistence_is_the_newest_observation_at_or_before_the_issue_time(forecast_model, late_gauges,
                                                                            tmp_path) -> None:
    out = tmp_path / "h.nc"
    assert run_forecast(forecast_model, late_gauges, RANGE, out=out).stations_forecast > 0
    with xr.open_dataset(out) as ds:
        issues = pd.DatetimeIndex(ds["forecast_reference_time"].values)
        valid = ds["time"].values
        model = ds["streamflow"].sel(station="01547700").values
    with xr.open_dataset(late_gauges) as data:
        q = data["streamflow"].sel(station="01547700").to_series()
    last_reading = q.ffill().reindex(issues).to_numpy()  # by hand: the gauge's last value so far
    assert np.isnan(q.reindex(issues)).sum() == LATE["01547700"]
    scores = {(row["lead"], row["forecast"]): row for row in _rows(tmp_path / "h_scores.csv")
              if row["station"] == "01547700"}
    for k, lead in enumerate((1, 2, 3)):
        obs = q.reindex(pd.DatetimeIndex(valid[:, k])).to_numpy()
        keep = np.isfinite(obs) & np.isfinite(model[:, k])
        assert int(scores[(str(lead), "persistence")]["n"]) == keep.sum()
        assert float(scores[(str(lead), "persistence")]["nse"]) == pytest.approx(
            nse(obs[keep], last_reading[keep]), abs=1e-4)


def test_persistence_forecast_never_reads_after_the_issue_step(ingested: Path) -> None:
    with xr.open_dataset(ingested) as data:
        target = data["streamflow"].transpose("station", "time").values[:, :400].astype(np.float32)
    ends = np.arange(300, 360)
    expected = target[:, ends].T
    values = newest_observation_persistence(target, ends, np.array([0, 1, 5]))
    future = target.copy()
    future[:, 360:] = 1e6
    np.testing.assert_array_equal(newest_observation_persistence(future, ends, np.array([0, 1, 5])), values)
    finite = np.isfinite(expected)
    np.testing.assert_array_equal(values[..., 1][finite], expected[finite])
    np.testing.assert_array_equal(values[..., 2][finite], expected[finite])
    before = target[:, ends - 1].T  # lead 0 (a simulation): the newest reading before the issue step
    np.testing.assert_array_equal(values[..., 0][np.isfinite(before)], before[np.isfinite(before)])


def test_climatology_is_fitted_on_the_training_period_only(exported: Path, ingested: Path, tmp_path, edited_copy,
                                                           monkeypatch) -> None:
    metadata = ExportMetadata.read(exported)
    period = metadata.training_period
    assert period is not None
    assert (period.start.isoformat(), period.end.isoformat()) == ("2012-01-01", "2012-12-31")
    with xr.open_dataset(ingested) as data:
        times = data["time"].values
        target = data["streamflow"].transpose("station", "time").values
    in_train = metadata.grid.period_mask(times, period)

    def perturb(dataset) -> None:
        dataset["streamflow"].values[:, ~in_train] *= 10.0
    perturbed = edited_copy(ingested, tmp_path / "perturbed.nc", perturb)
    monkeypatch.setattr(forecast_baselines, "CHUNK_STEPS", 50)  # many pieces: same table as in one
    with IngestedFile(ingested, metadata) as source:
        table = climatology_table(source, period)
    with IngestedFile(perturbed, metadata) as source:
        np.testing.assert_array_equal(climatology_table(source, period), table)
    days = metadata.grid.day_of_year(times)
    evaluate_style = doy_climatology(target, days, in_train)  # what ``hydroseq evaluate`` uses
    np.testing.assert_allclose(table[:, days], evaluate_style, rtol=1e-6, equal_nan=True)
