"""Stations without a gauge are forecast by a model that reads the observed discharge with its "observed" flag.

The model: per-step, leads 1-3, observed discharge and its flag as inputs, the skip from the newest
observation, one target scaling for all stations, as a regional model has (untrained weights; what
matters is which stations are forecast and how the outputs report them), exported from the ingested
bundled data.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import torch
import xarray as xr

from hydroseq.cli import main
from hydroseq.cli.forecast import forecast_summary
from hydroseq.dataset import FeatureLayout, Scalers, load_station_data
from hydroseq.errors import InputDataError
from hydroseq.export.exporter import export_trained_model
from hydroseq.export.source import read_provenance
from hydroseq.forecast import run_forecast
from hydroseq.model import get_model
from hydroseq.training.checkpoint import Checkpoint

ISSUE = "2014-06-30"  # its grid label is 2014-07-01T08:00Z
ISSUE_LABEL = "2014-07-01T08:00"
UNGAUGED = "01052500"  # not one of the training stations
LATE = "02011460"  # observed until 40 steps before the issue step: gauged, but nothing in the 30-step window
UNGAUGED_REASON = "no observed streamflow in the data file (ungauged)"


@pytest.fixture(scope="module")
def gauge_model(trained, ingested: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    config = trained.config.model_copy(deep=True)
    config.data = config.data.model_copy(update={"leads": [1, 2, 3], "lagged_target": True})
    config.model = config.model.model_copy(update={"observed_skip": True})
    scalers = Scalers.fit(load_station_data(ingested, config.data), config.data)
    names = FeatureLayout.from_config(config.data).names
    torch.manual_seed(4)
    model = get_model(config.model, len(names), 3, "per_step", data=config.data).eval()
    out = tmp_path_factory.mktemp("gauge_model") / "model"
    export_trained_model(Checkpoint(model.state_dict(), config, names, 3, scalers, "untrained"), config.data.seq_len,
                         out, read_provenance(ingested), pt2=False)
    return out


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def test_a_station_without_any_observed_discharge_is_forecast_and_reported_ungauged(
        gauge_model: Path, ingested: Path, tmp_path: Path, edited_copy, grid_index, capsys) -> None:
    end = grid_index(ingested, ISSUE_LABEL)

    def remove_gauges(dataset: xr.Dataset) -> None:
        stations = list(dataset["station"].values)
        dataset["streamflow"].values[stations.index(UNGAUGED), :] = np.nan
        dataset["streamflow"].values[stations.index(LATE), end - 39:] = np.nan

    data = edited_copy(ingested, tmp_path / "ungauged.nc", remove_gauges)
    out = tmp_path / "f.nc"
    run = run_forecast(gauge_model, data, ISSUE, out=out)
    assert run.stations_forecast == 31 and not run.result.skipped
    row = run.result.stations.index(UNGAUGED)
    assert run.result.values.shape == (1, 31, 3) and np.isfinite(run.result.values[0, row]).all()
    assert run.result.ungauged == (UNGAUGED,)
    late = forecast_summary(run)["without_newest_observation"]
    assert late[UNGAUGED] == UNGAUGED_REASON
    assert late[LATE] == "no observation in the model's input window"
    with xr.open_dataset(out) as forecast:
        assert json.loads(forecast.attrs["ungauged_stations"]) == [UNGAUGED]
        assert np.isnan(forecast["observation_age"].sel(station=UNGAUGED))
        assert forecast["streamflow"].sel(station=UNGAUGED).notnull().all()
    rows = _rows(out.with_suffix(".csv"))
    assert [(r["lead"], r["ungauged"], r["observation_age_hours"]) for r in rows if r["station"] == UNGAUGED] == [
        ("1", "1", ""), ("2", "1", ""), ("3", "1", "")]
    assert {r["ungauged"] for r in rows if r["station"] != UNGAUGED} == {"0"}

    assert main(["-q", "--json", "forecast", "--model", str(gauge_model), "--data", str(data), "--issue-time", ISSUE,
                 "--out", str(tmp_path / "cli.nc")]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["without_newest_observation"][UNGAUGED] == UNGAUGED_REASON


def test_a_file_without_the_target_variable_is_forecast_with_every_station_ungauged(
        gauge_model: Path, ingested: Path, tmp_path: Path, edited_copy) -> None:
    def forcing_and_attributes_only(dataset: xr.Dataset) -> None:
        del dataset["streamflow"]

    data = edited_copy(ingested, tmp_path / "ungauged_basins.nc", forcing_and_attributes_only)
    out = tmp_path / "f.nc"
    run = run_forecast(gauge_model, data, ISSUE, out=out)
    assert run.stations_forecast == 31 and np.isfinite(run.result.values).all()
    assert set(run.result.ungauged) == set(run.result.stations)
    assert set(forecast_summary(run)["without_newest_observation"].values()) == {UNGAUGED_REASON}
    with xr.open_dataset(out) as forecast:
        assert forecast["streamflow"].attrs["units"] == "mm d-1"  # the units the model was trained on
    with pytest.raises(InputDataError, match="a hindcast is scored against the observed streamflow, a variable the "
                                             "file lacks"):
        run_forecast(gauge_model, data, "2014-06-01..2014-06-30", out=tmp_path / "h.nc")


def test_observations_after_the_issue_time_neither_make_a_station_gauged_nor_move_its_forecast(
        gauge_model: Path, ingested: Path, tmp_path: Path, edited_copy, grid_index) -> None:
    """Perturb the future: a station observed only after the issue step is ungauged at the issue time,
    and its forecast is bit-identical to that of a station never observed."""
    end = grid_index(ingested, ISSUE_LABEL)

    def never_observed(dataset: xr.Dataset) -> None:
        dataset["streamflow"].values[list(dataset["station"].values).index(UNGAUGED), :] = np.nan

    def observed_only_after_the_issue(dataset: xr.Dataset) -> None:
        row = list(dataset["station"].values).index(UNGAUGED)
        dataset["streamflow"].values[row, : end + 1] = np.nan
        dataset["streamflow"].values[row, end + 1:] = 1e3  # a flood right after the issue time

    runs = [run_forecast(gauge_model, edited_copy(ingested, tmp_path / f"{edit.__name__}.nc", edit), ISSUE,
                         out=tmp_path / f"{edit.__name__}_f.nc", show_progress=False).result
            for edit in (never_observed, observed_only_after_the_issue)]
    assert runs[0].ungauged == runs[1].ungauged == (UNGAUGED,)
    np.testing.assert_array_equal(runs[0].values, runs[1].values)
