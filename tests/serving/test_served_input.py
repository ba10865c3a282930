"""The served (MLflow pyfunc) model checks what ``hydroseq forecast`` checks, through the real entry points.

Each test loads a really logged model with ``mlflow.pyfunc.load_model`` (the tiny run's registered
version, or a per-station-scaled quantile ensemble logged here as ``hydroseq train`` logs one) or
runs ``hydroseq forecast`` through ``hydroseq.cli.main``: the issue time is read as the CLI reads
it, ingest's plausibility bounds apply to the rows the model receives, times with an offset are
converted, a missing column is named, and "no station could be forecast" is NaN rows for the
served model and exit 1 for the CLI.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from mlflow.tracking import MlflowClient

from hydroseq.cli import main
from hydroseq.config.forecast_source import ForecastVariableSpec
from hydroseq.config.variables import VariableSpec
from hydroseq.dataset import Scalers, load_station_data
from hydroseq.errors import ConfigError, ExitCode, InputDataError
from hydroseq.export import ExportMetadata
from hydroseq.forecast import IngestedFile, run_forecast
from hydroseq.serving.input_bounds import grid_bounds
from hydroseq.serving.pyfunc_logging import log_forecast_model
from hydroseq.serving.pyfunc_model import frame_from_station_data
from hydroseq.training.tracking import use_tracking_uri
from tests.fixtures import store_uri, untrained_members

ISSUE_DAY = "2014-06-30"  # the local day whose end is ISSUE_LABEL (the grid's zone is Etc/GMT+8)
ISSUE_LABEL = np.datetime64("2014-07-01T08:00", "ns")
STEP = np.timedelta64(1, "D")
AT_ISSUE = {"issue_time": "2014-07-01T08:00Z"}


def _frame(path: Path, metadata: ExportMetadata, history: int = 45, after: int = 3) -> pd.DataFrame:
    """The model input of every station of ``path`` from ``history`` steps before the issue step to ``after``
    steps after it, as the forecast reads the file (times: naive UTC labels)."""
    with IngestedFile(path, metadata) as source:
        end = int(np.flatnonzero(source.times == ISSUE_LABEL)[0])
        data = source.read(end - history + 1, end + after + 1)
    return frame_from_station_data(data, metadata)


def _at_issue(frame: pd.DataFrame, station: str | None = None) -> pd.Series:
    """Rows at the issue step (of one station)."""
    rows = frame["time"] == ISSUE_LABEL
    return rows & (frame["station"] == station) if station is not None else rows


@pytest.fixture(scope="module")
def served(trained):
    """The tiny run's registered pyfunc model, loaded from the registry."""
    with use_tracking_uri(trained.tracking_uri):
        (registered,) = MlflowClient().search_model_versions(f"run_id = '{trained.run_id}'")
        return mlflow.pyfunc.load_model(f"models:/{registered.name}/{registered.version}")


@pytest.fixture(scope="module")
def quantile_ensemble(trained, ingested: Path, tmp_path_factory: pytest.TempPathFactory):
    """Two untrained quantile members reading the observed flow, with the target scaled per basin (every
    basin of ``ingested``), logged as ``hydroseq train`` logs a run's model, and loaded back."""
    config = trained.config.model_copy(deep=True)
    config.data = config.data.model_validate({**config.data.model_dump(), "stations": None, "leads": [1, 2, 3],
                                              "lagged_target": True, "per_station_target_scaling": True})
    config = config.model_copy(update={
        "model": config.model.model_copy(update={"observed_skip": True, "quantiles": [0.05, 0.5, 0.95]}),
        "training": config.training.model_copy(update={"loss": "quantile"})})
    station_data = load_station_data(ingested, config.data)
    untrained = untrained_members(config, station_data)
    folder = tmp_path_factory.mktemp("quantile_ensemble")
    uri = store_uri(folder)
    with use_tracking_uri(uri):
        experiment = mlflow.create_experiment("served", artifact_location=str(folder / "artifacts"))
        with mlflow.start_run(experiment_id=experiment) as run:
            log_forecast_model("model", untrained, station_data)
    with use_tracking_uri(uri):
        return mlflow.pyfunc.load_model(f"runs:/{run.info.run_id}/model")


def test_every_station_late_at_the_issue_step_is_nothing_produced(quantile_ensemble, ingested: Path, tmp_path: Path,
                                                                  edited_copy, grid_index, capsys) -> None:
    """No input at the issue step for any station: ``hydroseq forecast`` exits 1 naming every station and why,
    the served model gives NaN rows (also for one row per station); ``inf`` there is refused by name."""
    exported = quantile_ensemble.unwrap_python_model().exported
    assert exported.metadata.members == 2 and exported.metadata.quantiles
    assert Scalers.from_dict(exported.metadata.scalers).station_target  # per-basin target scaling
    end = grid_index(ingested, str(ISSUE_LABEL)[:16])

    def blank(dataset: xr.Dataset) -> None:
        dataset["temperature_2m_mean"].values[:, end] = np.nan

    late = edited_copy(ingested, tmp_path / "late.nc", blank)
    capsys.readouterr()
    status = main(["--json", "forecast", "--model", str(exported.model_dir), "--data", str(late),
                   "--issue-time", ISSUE_DAY, "--out", str(tmp_path / "f.nc")])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert status == ExitCode.NOTHING_PRODUCED == summary["exit_code"]
    assert summary["stations"] == {"total": 31, "forecast": 0, "skipped": 31, "stale": 0}
    assert all("no valid input at the issue step 2014-07-01T08:00:00Z (missing: temperature_2m_mean)" in why
               for why in summary["skipped"].values())
    assert not (tmp_path / "f.nc").exists()

    frame = _frame(late, exported.metadata)
    for rows in (frame, frame[_at_issue(frame)]):  # the history, or one row per station
        predicted = quantile_ensemble.predict(rows, params=AT_ISSUE)
        assert len(predicted) == 31 * 3 and (predicted["issue_time"] == ISSUE_LABEL).all()
        assert predicted.filter(like="value").isna().all().all()
    infinite = frame.assign(temperature_2m_mean=frame["temperature_2m_mean"].where(~_at_issue(frame, "01022500"),
                                                                                   np.inf))
    with pytest.raises(InputDataError, match=r"\(station 01022500, 2014-07-01T08:00:00Z\): temperature_2m_mean inf "
                                             "degC is not finite"):
        quantile_ensemble.predict(infinite, params=AT_ISSUE)


def test_the_issue_time_param_is_read_as_hydroseq_forecast_reads_it(served, exported: Path, ingested: Path,
                                                                    tmp_path: Path) -> None:
    """A date is the end of that local day of the grid, as ``--issue-time``; guessed forms are refused."""
    frame = _frame(ingested, ExportMetadata.read(exported))
    published = run_forecast(exported, ingested, ISSUE_DAY, out=tmp_path / "f.nc", show_progress=False).result
    assert published.issue_times[0] == ISSUE_LABEL
    predicted = served.predict(frame, params={"issue_time": ISSUE_DAY})
    assert (predicted["issue_time"] == ISSUE_LABEL).all()
    values = predicted.pivot(index="station", columns="lead", values="value").loc[list(published.stations)]
    np.testing.assert_allclose(values.to_numpy(), published.values[0], rtol=0, atol=1e-5)
    for guessed in ("06/30/2014", "Jun 30 2014", "now"):
        with pytest.raises(ConfigError, match=f"param issue_time: '{guessed}'"):
            served.predict(frame, params={"issue_time": guessed})


def test_values_outside_the_bounds_of_ingest_are_refused_by_station_time_and_variable(served, exported: Path,
                                                                                      ingested: Path) -> None:
    """1e30 mm or -50 mm of rain at the issue step is an error naming station, time and variable; negative
    evaporation within the configured ``valid_min`` (-20) is read; values after the issue time are never read."""
    frame = _frame(ingested, ExportMetadata.read(exported))
    at = _at_issue(frame, "01022500")
    for value in (1e30, -50.0):
        rain = frame.assign(total_precipitation_sum=frame["total_precipitation_sum"].where(~at, value))
        shown = re.escape(f"{value:g}")
        with pytest.raises(InputDataError, match=rf"\(station 01022500, 2014-07-01T08:00:00Z\): "
                                                 rf"total_precipitation_sum {shown} mm is outside 0 \.\. 50000 mm"):
            served.predict(rain, params=AT_ISSUE)
    evaporation = frame.assign(potential_evaporation_sum=frame["potential_evaporation_sum"].where(~at, -5.0))
    assert served.predict(evaporation, params=AT_ISSUE)["value"].notna().all()
    later = frame.assign(total_precipitation_sum=frame["total_precipitation_sum"].where(frame["time"] <= ISSUE_LABEL,
                                                                                        1e30))
    pd.testing.assert_frame_equal(served.predict(later, params=AT_ISSUE), served.predict(frame, params=AT_ISSUE))


def test_times_with_an_offset_are_converted_and_missing_columns_named(served, exported: Path, ingested: Path) -> None:
    """``time`` as datetimes with a zone, or as ISO 8601 text with an offset or ``Z`` (as the forecast CSV writes
    it): the same forecast as the naive UTC labels; other text and a missing column are errors naming them."""
    frame = _frame(ingested, ExportMetadata.read(exported))
    expected = served.predict(frame, params=AT_ISSUE)
    utc = pd.DatetimeIndex(frame["time"]).tz_localize("UTC")
    plus_two = utc.tz_convert("Etc/GMT-2")
    for times in (plus_two, plus_two.strftime("%Y-%m-%dT%H:%M:%S%z"), utc.strftime("%Y-%m-%dT%H:%M:%SZ")):
        pd.testing.assert_frame_equal(served.predict(frame.assign(time=times), params=AT_ISSUE), expected)
    with pytest.raises(InputDataError, match="time '05/18/2014 08:00' is not an ISO 8601 timestamp"):
        served.predict(frame.assign(time=utc.strftime("%m/%d/%Y %H:%M")), params=AT_ISSUE)
    with pytest.raises(InputDataError, match=r"lacks the columns \['temperature_2m_mean', 'aridity'\]"):
        served.predict(frame.drop(columns=["aridity", "temperature_2m_mean"]), params=AT_ISSUE)


@pytest.mark.parametrize(("spec", "source_step", "expected"), [
    (VariableSpec(source="p", units="mm/h", aggregation="sum"), "1h", (0.0, 50_000.0)),  # 50000 mm/d, summed
    (VariableSpec(source="p", units="mm", aggregation="sum"), "1h", (0.0, 24 * 5_000.0)),  # 5000 mm per source step
    (VariableSpec(source="e", units="mm/d", aggregation="sum", valid_min=-20), "1D", (-20.0, 50_000.0)),
    (VariableSpec(source="t", units="K"), "1h", (-90.0, 60.0)),  # in the file's degC
    (VariableSpec(source="q", units="m3/s", output_units="mm/d"), "1h", (0.0, 50_000.0)),  # needs the area: mm/d's
    (ForecastVariableSpec(source="tp", units="m", aggregation="sum", accumulation="since_reference"), None,
     (0.0, 50_000.0)),  # a product's steps are not known: a daily amount's default
    (ForecastVariableSpec(source="tp", units="m", aggregation="sum", accumulation="since_reference", valid_max=0.5),
     None, (0.0, 1e30)),  # ... unless the config sets valid_max (per product step): only its sign is known
    (VariableSpec(source="w", units="m s-1", convert=False), "1h", (-1e30, 1e30)),
])
def test_the_bounds_of_ingest_are_carried_onto_a_daily_grid(spec: VariableSpec, source_step: str | None,
                                                            expected: tuple[float, float]) -> None:
    step = pd.Timedelta(source_step) if source_step is not None else None
    assert grid_bounds(spec, step, pd.Timedelta("1D")) == expected
