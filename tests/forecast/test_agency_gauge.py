"""The shipped base models on an agency's own gauge that is in no training set: a CAMELS-LUX basin in Luxembourg
(``data/caravan_format_samples/camelslx_055.csv``) with a station table of id, name, lat, lon and area only, on its
own CET days and with its own PET (which the models do not read)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hydroseq.cli import main
from hydroseq.config import IngestConfig, load_config
from hydroseq.forecast import run_forecast
from hydroseq.ingest import ingest
from tests.fixtures import REPO_ROOT

MODELS = [REPO_ROOT / "models" / name for name in ("caravan-camels-us-daily-probabilistic", "caravan-camels-us-daily")]


@pytest.fixture(scope="module")
def agency_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    config = load_config(REPO_ROOT / "configs" / "ingest_camelslx_agency.yaml", IngestConfig)
    config.stations.path = REPO_ROOT / config.stations.path
    for source in config.sources:
        source.path = str(REPO_ROOT / source.path)
    out = tmp_path_factory.mktemp("agency") / "camelslx.nc"
    ingest(config, out, show_progress=False)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS, ids=lambda path: path.name)
def test_each_base_model_forecasts_the_gauge_and_beats_persistence_over_its_last_six_years(
        model: Path, agency_file: Path, tmp_path: Path) -> None:
    assert main(["forecast", "--model", str(model), "--data", str(agency_file), "--issue-time", "2021-10-30",
                 "--out", str(tmp_path / "forecast.nc")]) == 0
    run = run_forecast(model, agency_file, "2015-10-31..2021-10-30", out=tmp_path / "hindcast.nc",
                       show_progress=False)
    assert run.published is not None and run.published.scores is not None
    scores = run.published.scores
    model_nse = scores.nse[scores.of("model"), 0]
    persistence_nse = scores.nse[scores.of("persistence"), 0]
    assert np.all(model_nse > persistence_nse), (model_nse, persistence_nse)
