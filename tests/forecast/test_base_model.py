"""The shipped regional base models (models/caravan-camels-us-daily/ and its probabilistic sibling) forecast the
bundled basins as a fresh clone has them, without any training: they learned from 433 other basins and never saw
these."""

from __future__ import annotations

import shutil
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import pytest

from hydroseq.cli import main
from hydroseq.errors import InputDataError
from hydroseq.export import ExportedModel, ExportMetadata
from hydroseq.forecast import run_forecast
from hydroseq.serving.pyfunc_logging import log_exported_model
from hydroseq.training.tracking import use_tracking_uri
from tests.fixtures import REPO_ROOT, store_uri

BASE_MODEL = REPO_ROOT / "models" / "caravan-camels-us-daily"
PROBABILISTIC_BASE_MODEL = REPO_ROOT / "models" / "caravan-camels-us-daily-probabilistic"
BUNDLED = set((REPO_ROOT / "data" / "daily_caravan_camels_us" / "basins.txt").read_text().split())


def test_the_base_model_forecasts_every_bundled_basin_without_training(ingested: Path, tmp_path: Path) -> None:
    run = run_forecast(BASE_MODEL, ingested, "2014-09-30", out=tmp_path / "forecast.nc", show_progress=False)
    assert set(run.result.stations) == BUNDLED and run.stations_forecast == 31
    assert list(run.result.leads) == [1, 2, 3]
    assert np.isfinite(run.result.values).all() and (run.result.values >= 0).all()
    assert run.result.units == "mm d-1"
    assert main(["forecast", "--model", str(BASE_MODEL), "--data", str(ingested), "--issue-time", "2014-09-30",
                 "--out", str(tmp_path / "cli.nc")]) == 0


@pytest.mark.parametrize("model", [BASE_MODEL, PROBABILISTIC_BASE_MODEL], ids=lambda path: path.name)
def test_the_base_model_has_one_scaling_for_all_basins_and_was_not_trained_on_the_bundled_ones(model: Path) -> None:
    metadata = ExportMetadata.read(model)
    assert metadata.scalers["target"]["per_station"] == {}  # no basin's own statistics: any basin can be read
    assert metadata.lagged_target and metadata.leads == [1, 2, 3]
    assert metadata.train_config is not None and "caravan_regional" in str(metadata.train_config.data.path)
    card = (model / "MODEL_CARD.md").read_text()
    assert "pipelines/regional_base_model.sh" in card and "CC-BY-4.0" in card
    ExportedModel(model)  # every release file matches SHA256SUMS


def test_the_probabilistic_base_model_forecasts_quantiles_and_threshold_probabilities(ingested: Path,
                                                                                      tmp_path: Path) -> None:
    """On a file holding none of the model's training period (a new basin's recent record) the forecast publishes
    the quantiles, and threshold probabilities where the user gives thresholds (none can be derived)."""
    bare = run_forecast(PROBABILISTIC_BASE_MODEL, ingested, "2014-09-30", out=tmp_path / "bare.nc", show_progress=False)
    assert bare.result.quantiles is not None and bare.result.exceedance is None
    table = tmp_path / "thresholds.csv"
    table.write_text("station,level,discharge [mm/d]\n"
                     + "".join(f"{station},alert,0.5\n" for station in sorted(BUNDLED)))
    run = run_forecast(PROBABILISTIC_BASE_MODEL, ingested, "2014-09-30", out=tmp_path / "forecast.nc",
                       thresholds=table, show_progress=False)
    assert set(run.result.stations) == BUNDLED and run.stations_forecast == 31
    assert run.result.quantile_levels == (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)
    quantiles = run.result.quantiles
    assert quantiles is not None and np.isfinite(quantiles).all()
    assert (np.diff(quantiles, axis=-1) >= 0).all()  # never crossing
    assert (quantiles[..., -1] > quantiles[..., 0]).all()  # a spread at every station and lead
    exceedance = run.result.exceedance
    assert exceedance is not None and ((exceedance >= 0) & (exceedance <= 1)).all()
    above = quantiles[0, :, 0, 3] > 0.5  # median above the threshold at lead 1: more likely than not exceeded
    assert above.any() and (~above).any()
    assert (exceedance[0, above, 0, 0] >= 0.5).all() and (exceedance[0, ~above, 0, 0] <= 0.5).all()


def test_a_modified_release_file_fails_its_checksum(tmp_path: Path) -> None:
    copy = Path(shutil.copytree(BASE_MODEL, tmp_path / "model"))
    ExportedModel(copy)  # verified as shipped
    metadata = copy / "metadata.json"
    metadata.write_text(metadata.read_text().replace('"seq_len": 365', '"seq_len": 364'))
    with pytest.raises(InputDataError, match="metadata.json: checksum differs from SHA256SUMS"):
        ExportedModel(copy)


def test_the_base_model_logs_and_serves_as_a_pyfunc_model(ingested: Path, tmp_path: Path) -> None:
    uri = store_uri(tmp_path)
    with use_tracking_uri(uri), mlflow.start_run() as run:
        log_exported_model("model", BASE_MODEL, ingested)
    with use_tracking_uri(uri):
        model = mlflow.pyfunc.load_model(f"runs:/{run.info.run_id}/model")
    example = model.input_example
    predicted = model.predict(example)
    stations = tuple(sorted(set(example["station"])))
    issue = predicted["issue_time"].iloc[0]
    published = run_forecast(BASE_MODEL, ingested, pd.Timestamp(issue).strftime("%Y-%m-%dT%H:%MZ"),
                             out=tmp_path / "f.nc", show_progress=False).result
    columns = [published.stations.index(station) for station in stations]
    values = predicted.pivot(index="station", columns="lead", values="value").loc[list(stations)].to_numpy()
    np.testing.assert_allclose(values, published.values[0][columns], rtol=0, atol=1e-5)
