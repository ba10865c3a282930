"""The run's MLflow model: a registered pyfunc, not pickled, that predicts what ``hydroseq forecast`` publishes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import pytest
import xarray as xr
import yaml
from mlflow.tracking import MlflowClient

from hydroseq.dataset import load_station_data
from hydroseq.errors import InputDataError
from hydroseq.export import ExportedModel, ExportMetadata
from hydroseq.export.source import read_provenance
from hydroseq.forecast import IngestedFile, run_forecast
from hydroseq.serving.pyfunc_logging import log_forecast_model, serving_requirements
from hydroseq.serving.pyfunc_model import forecast_frame, frame_from_station_data, input_columns, output_columns
from hydroseq.training.tracking import use_tracking_uri
from tests.fixtures import add_forecast_variable, store_uri, untrained_members

ISSUE_LABEL = np.datetime64("2014-07-01T08:00", "ns")  # the end of the local day 2014-06-30
HISTORY = 45  # steps of input before the issue step: more than the model's seq_len (30)
AFTER = 3  # steps of input after it


def _frame(path: Path, metadata: ExportMetadata, first: np.datetime64, last: np.datetime64) -> pd.DataFrame:
    """The model input of every station of ``path`` from ``first`` to ``last``, as the forecast reads the file."""
    with IngestedFile(path, metadata) as source:
        times = source.times
        data = source.read(int(np.flatnonzero(times == first)[0]), int(np.flatnonzero(times == last)[0]) + 1)
    return frame_from_station_data(data, metadata)


def _by_station(predicted: pd.DataFrame, column: str, stations: tuple[str, ...]) -> np.ndarray:
    """``[station, lead]`` of one output column, stations in ``stations``' order."""
    return predicted.pivot(index="station", columns="lead", values=column).loc[list(stations)].to_numpy()


@pytest.fixture(scope="module")
def version(trained):
    """The registered model version of the tiny run, and the pyfunc model loaded from the registry."""
    with use_tracking_uri(trained.tracking_uri):
        (registered,) = MlflowClient().search_model_versions(f"run_id = '{trained.run_id}'")
        model = mlflow.pyfunc.load_model(f"models:/{registered.name}/{registered.version}")
    return registered, model


def test_the_registered_model_predicts_what_hydroseq_forecast_publishes(version, exported: Path, ingested: Path,
                                                                        tmp_path: Path) -> None:
    _, model = version
    metadata = ExportMetadata.read(exported)
    step = np.timedelta64(1, "D")
    frame = _frame(ingested, metadata, ISSUE_LABEL - (HISTORY - 1) * step, ISSUE_LABEL + AFTER * step)
    for issue, params in ((ISSUE_LABEL, {"issue_time": "2014-07-01T08:00:00Z"}), (ISSUE_LABEL + AFTER * step, None)):
        published = run_forecast(exported, ingested, str(issue), out=tmp_path / "f.nc", show_progress=False).result
        assert published.issue_times[0] == issue
        predicted = model.predict(frame, params=params)
        assert list(predicted.columns) == output_columns(metadata, stations=model.unwrap_python_model().stations)
        assert (predicted["issue_time"] == issue).all()
        assert (predicted["valid_time"] == issue + predicted["lead"].to_numpy() * step).all()
        values = _by_station(predicted, "value", published.stations)
        assert np.isfinite(values).all()
        np.testing.assert_allclose(values, published.values[0], rtol=0, atol=1e-5)


def test_rows_after_the_issue_time_never_move_the_forecast(version, exported: Path, ingested: Path) -> None:
    """Perturb the future: every input value after the issue time changed (forcing, observed flow,
    statics stay), the pyfunc's forecast at that issue time is bit-identical."""
    _, model = version
    metadata = ExportMetadata.read(exported)
    step = np.timedelta64(1, "D")
    frame = _frame(ingested, metadata, ISSUE_LABEL - (HISTORY - 1) * step, ISSUE_LABEL + AFTER * step)
    changed = frame.copy()
    later = changed["time"] > ISSUE_LABEL
    dynamic = [c for c in changed.columns if c not in ("station", "time", *metadata.static_inputs)]
    changed.loc[later, dynamic] = changed.loc[later, dynamic] * 7.0 + 3.0
    params = {"issue_time": "2014-07-01T08:00:00Z"}
    pd.testing.assert_frame_equal(model.predict(frame, params=params), model.predict(changed, params=params))


def test_the_model_has_a_signature_an_example_a_version_and_its_provenance(version, trained, ingested: Path,
                                                                          exported: Path, tmp_path: Path) -> None:
    registered, model = version
    metadata = ExportMetadata.read(exported)
    assert registered.name == trained.config.tracking.experiment  # the default registered name
    signature = model.metadata.signature
    assert signature.inputs.input_names() == [*input_columns(metadata), "area_km2"]  # the optional area last
    assert signature.outputs.input_names() == output_columns(metadata, stations=model.unwrap_python_model().stations)
    assert signature.params.to_dict() == [{"name": "issue_time", "type": "string", "default": "", "shape": None}]
    example = model.input_example
    assert list(example.columns) == input_columns(metadata) and example["station"].nunique() == 2
    assert len(example) == 2 * metadata.seq_len
    assert np.isfinite(model.predict(example)["value"]).all()

    with use_tracking_uri(trained.tracking_uri):
        local = Path(mlflow.artifacts.download_artifacts(f"runs:/{trained.run_id}/model", dst_path=str(tmp_path)))
    assert not list(local.rglob("*.pkl")), "nothing is pickled"
    flavor = yaml.safe_load((local / "MLmodel").read_text())["flavors"]["python_function"]
    assert flavor["loader_module"] == "mlflow.pyfunc.loaders.code_model"  # models from code
    copied = ExportedModel(local / flavor["artifacts"]["exported_model"]["path"])  # checksums verified
    assert copied.metadata.run_id == trained.run_id and copied.seq_len == trained.config.data.seq_len
    assert (local / "code" / "hydroseq" / "serving" / "pyfunc_model.py").is_file()
    assert "torch" not in (local / "requirements.txt").read_text()

    run = MlflowClient(trained.tracking_uri).get_run(trained.run_id)
    assert re.fullmatch(r"[0-9a-f]{40}", run.data.tags["mlflow.source.git.commit"])
    assert run.data.tags["git_commit"].startswith(run.data.tags["mlflow.source.git.commit"])
    (used,) = run.inputs.dataset_inputs
    with xr.open_dataset(ingested) as dataset:
        checksum = dataset.attrs["dataset_checksum"]
    assert json.loads(used.dataset.source) == {"uri": str(ingested.resolve())} and used.dataset.source_type == "local"
    assert used.dataset.digest == checksum[:36] and json.loads(used.dataset.profile)["dataset_checksum"] == checksum
    assert [(tag.key, tag.value) for tag in used.tags] == [("mlflow.data.context", "training")]


def test_malformed_inputs_are_refused_with_the_reason(exported: Path, ingested: Path) -> None:
    model = ExportedModel(exported)
    frame = _frame(ingested, model.metadata, ISSUE_LABEL - np.timedelta64(9, "D"), ISSUE_LABEL)
    with pytest.raises(InputDataError, match=r"lacks the columns \['aridity'\]"):
        forecast_frame(model, frame.drop(columns="aridity"))
    with pytest.raises(InputDataError, match="more than one row for a station and time"):
        forecast_frame(model, pd.concat([frame, frame.iloc[:1]]))
    shifted = frame.assign(time=frame["time"].where(frame.index != 3, frame["time"] + pd.Timedelta(hours=1)))
    with pytest.raises(InputDataError, match="not on the model's grid step 1D"):
        forecast_frame(model, shifted)
    with pytest.raises(InputDataError, match="static attributes differ"):
        forecast_frame(model, frame.assign(aridity=frame["aridity"].where(frame.index != 3, 0.5)))
    with pytest.raises(InputDataError, match=r"issue time '2014-07-03T08:00Z' \(2014-07-03T08:00:00Z\) lies outside"):
        forecast_frame(model, frame, "2014-07-03T08:00Z")
    missing_row = forecast_frame(model, frame.drop(index=frame.index[frame["time"] == ISSUE_LABEL][:1]))
    assert np.isnan(missing_row["value"].iloc[0]) and np.isfinite(missing_row["value"].iloc[1:]).all()


@pytest.mark.slow
def test_a_quantile_ensemble_with_gauge_and_weather_forecast_inputs(trained, ingested: Path, tmp_path: Path) -> None:
    """Two quantile members reading the observed flow (a gauge late) and two weather-forecast inputs (an
    ingested archive with no product at one issue step, a perfect input with noise), logged as a pyfunc:
    it gives the forecast's quantiles and median, also where the forecast falls back to no product."""
    levels = [0.05, 0.5, 0.95]
    with xr.open_dataset(ingested) as dataset:
        end = int(np.flatnonzero(dataset["time"].values == ISSUE_LABEL)[0])
    path = add_forecast_variable(ingested, tmp_path / "products.nc", "rain_forecast", "total_precipitation_sum", 3,
                                 relative_noise=0.3, missing_issues=[end + 1])
    with xr.open_dataset(path) as dataset:
        late = dataset.load()
    late["streamflow"].values[0, end - 2:] = np.nan  # the first station's gauge 3 steps late at the issue step
    late.to_netcdf(tmp_path / "late.nc")
    path = tmp_path / "late.nc"
    config = trained.config.model_copy(deep=True)
    config.data = config.data.model_validate({
        **config.data.model_dump(), "leads": [1, 2, 3], "lagged_target": True,
        "forecast_inputs": [{"variable": "rain_forecast", "source": "ingested"},
                            {"variable": "temperature_2m_mean", "source": "perfect", "noise_std": [0.2, 0.4, 0.8]}]})
    config = config.model_copy(update={
        "model": config.model.model_copy(update={"observed_skip": True, "quantiles": levels}),
        "training": config.training.model_copy(update={"loss": "quantile"})})
    station_data = load_station_data(path, config.data)
    untrained = untrained_members(config, station_data)
    uri = store_uri(tmp_path)
    with use_tracking_uri(uri), mlflow.start_run() as run:
        log_forecast_model("model", untrained, station_data)
    with use_tracking_uri(uri):
        model = mlflow.pyfunc.load_model(f"runs:/{run.info.run_id}/model")
    metadata = model.unwrap_python_model().exported.metadata
    assert metadata.members == 2 and metadata.quantiles == levels and metadata.forecast_horizon == 3
    assert read_provenance(path).dataset_checksum == metadata.dataset_checksum
    step = np.timedelta64(1, "D")
    frame = _frame(path, metadata, ISSUE_LABEL - (HISTORY - 1) * step, ISSUE_LABEL + step)
    assert {"streamflow", "rain_forecast_forecast_lead3", "temperature_2m_mean_forecast_lead1"} <= set(frame.columns)
    for issue in (ISSUE_LABEL, ISSUE_LABEL + step):
        published = run_forecast(model.unwrap_python_model().exported.model_dir, path, str(issue),
                                 out=tmp_path / "f.nc", show_progress=False).result
        assert published.quantiles is not None
        predicted = model.predict(frame, params={"issue_time": str(issue)})
        thresholds = model.unwrap_python_model().thresholds  # derived from the training file, logged with it
        assert list(predicted.columns) == output_columns(metadata, thresholds, model.unwrap_python_model().stations)
        np.testing.assert_allclose(_by_station(predicted, "value", published.stations), published.values[0],
                                   rtol=0, atol=1e-5)
        assert published.thresholds is not None and published.exceedance is not None
        assert thresholds.levels == published.thresholds.levels and thresholds.labels == published.thresholds.labels
        assert thresholds.notes == published.thresholds.notes and thresholds.source == published.thresholds.source
        for name in ("values", "lower", "upper", "years"):  # the logged fit is the forecast's, to the bit
            np.testing.assert_array_equal(getattr(thresholds, name), getattr(published.thresholds, name))
        for position, level in enumerate(thresholds.levels):  # the forecast's flood probabilities, equal
            np.testing.assert_array_equal(_by_station(predicted, f"p_exceed_{level}", published.stations),
                                          published.exceedance[0, :, :, position])
        for position, column in enumerate(["value_q05", "value_q50", "value_q95"]):
            np.testing.assert_allclose(_by_station(predicted, column, published.stations),
                                       published.quantiles[0, :, :, position], rtol=0, atol=1e-5)
        assert published.members is not None
        for member in range(2):  # the member spread, as published
            np.testing.assert_allclose(_by_station(predicted, f"value_member{member}", published.stations),
                                       published.members[0, :, :, member], rtol=0, atol=1e-5)
        assert not np.allclose(predicted["value_member0"], predicted["value_member1"])
        assert published.observation_age_hours is not None
        ages = _by_station(predicted, "observation_age_hours", published.stations)
        np.testing.assert_array_equal(ages, np.repeat(published.observation_age_hours[0][:, None], 3, axis=1))
        assert ages[0, 0] == 24.0 * (3 + (issue - ISSUE_LABEL) // step)  # the late gauge
    assert published.fallback, "no product is valid at the second issue step"


@pytest.mark.slow
def test_serving_needs_no_torch_and_only_the_declared_requirements(version, trained, repo_root: Path) -> None:
    registered, _ = version
    script = (
        "import importlib.metadata, json, sys\n"
        "import mlflow\n"
        f"mlflow.set_tracking_uri({trained.tracking_uri!r})\n"
        f"model = mlflow.pyfunc.load_model('models:/{registered.name}/{registered.version}')\n"
        "assert model.predict(model.input_example)['value'].notna().all()\n"
        "assert 'torch' not in sys.modules\n"
        "distributions = importlib.metadata.packages_distributions()\n"
        "print(json.dumps(sorted({d for m in list(sys.modules) for d in distributions.get(m.split('.')[0], [])})))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    loaded = {name.lower() for name in json.loads(result.stdout.strip().splitlines()[-1])}
    listed = re.search(r"^dependencies = \[(.*?)^\]", (repo_root / "pyproject.toml").read_text(), re.M | re.S)
    assert listed is not None
    ours = {re.split(r"[<>=\[]", name)[0].lower() for name in re.findall(r'"([^"]+)"', listed.group(1))}
    declared = {requirement.split("==")[0].lower() for requirement in serving_requirements()}
    assert loaded & ours <= declared, "the model's requirements.txt lacks what serving imports"
