"""``training.ensemble``: members as child runs of one parent run; evaluation and export use the member mean."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from mlflow.tracking import MlflowClient

from hydroseq.config import DataConfig
from hydroseq.export import ExportedModel, export_model
from hydroseq.model import EnsembleModel
from hydroseq.serving.pyfunc_logging import log_forecast_model
from hydroseq.training import evaluate, train
from hydroseq.training.checkpoint import Checkpoint

FORECAST_DATA = {"leads": [1, 2], "lagged_target": True,
                 "target_hiding": {"step_rate": 0.05, "stretch_rate": 0.5, "stretch_max_steps": 10, "chunk_rate": 0.1}}


def _forecast_ensemble_config(tmp: Path, small_nc: Path, make_config, members: int):
    config = make_config(tmp, small_nc, ensemble=members)
    data = DataConfig.model_validate({**config.data.model_dump(), **FORECAST_DATA})
    return config.model_copy(update={"data": data})


def test_an_ensemble_is_a_parent_run_whose_model_is_the_member_mean(tmp_path: Path, small_nc: Path,
                                                                    make_config) -> None:
    config = _forecast_ensemble_config(tmp_path, small_nc, make_config, members=2)
    config.tracking.register_model = False
    result = train(config, log_model=log_forecast_model)
    client = MlflowClient(config.tracking.tracking_uri)
    parent = client.get_run(result.run_id)
    members = json.loads(parent.data.tags["ensemble_members"])
    assert len(members) == 2 and len(set(members)) == 2
    logged = client.search_logged_models([parent.info.experiment_id])
    assert [(model.name, model.source_run_id) for model in logged] == [("model", result.run_id)]  # the parent's
    assert client.search_model_versions() == []  # tracking.register_model: false
    for member_id in members:
        member = client.get_run(member_id)
        assert member.data.tags["mlflow.parentRunId"] == result.run_id
        assert member.info.status == "FINISHED"
    seeds = [client.get_run(m).data.params["training.seed"] for m in members]
    assert seeds == ["3", "4"]

    ensemble = Checkpoint.load(result.output_dir / "best.pt").build_model()
    assert isinstance(ensemble, EnsembleModel) and len(ensemble.members) == 2
    singles = [Checkpoint.load(result.output_dir / f"member{m}" / "best.pt").build_model() for m in range(2)]
    x = torch.randn(4, config.data.seq_len, ensemble.lstm.input_size)
    lengths = torch.tensor([config.data.seq_len, 20, 9, 1])
    x[torch.arange(x.shape[1])[None, :] >= lengths[:, None]] = 0.0
    with torch.no_grad():
        mean = (singles[0](x, lengths) + singles[1](x, lengths)) / 2
        torch.testing.assert_close(ensemble(x, lengths), mean)
        assert not torch.allclose(singles[0](x, lengths), singles[1](x, lengths))  # members differ (seeds)
    assert "validation_model_lead1_median_nse" in parent.data.metrics

    report = evaluate(result.run_id, "test", tracking_uri=config.tracking.tracking_uri).report
    forecasts = set(report.scores["forecast"])
    assert {"model", "persistence", "climatology", "model_hidden7", "model_always_hidden"} <= forecasts

    exported = export_model(result.run_id, seq_len=config.data.seq_len, out_dir=tmp_path / "model",
                            tracking_uri=config.tracking.tracking_uri)
    network = ExportedModel(tmp_path / "model")
    assert exported.leads == [1, 2] and network.metadata.parity_max_abs_diff <= 1e-5
    out = network.predict(x.numpy(), lengths.numpy())
    with torch.no_grad():
        last = ensemble(x, lengths)[torch.arange(4), lengths - 1].numpy()
    np.testing.assert_allclose(out, last, atol=1e-5)
    _, members = network.run(x.numpy(), lengths.numpy())
    assert network.metadata.members == 2 and members is not None and members.shape == (4, 2, 2)
    with torch.no_grad():
        for m, single in enumerate(singles):
            np.testing.assert_allclose(members[:, m], single(x, lengths)[torch.arange(4), lengths - 1].numpy(),
                                       atol=1e-5)


def test_resuming_an_ensemble_skips_finished_members(tmp_path: Path, small_nc: Path, make_config) -> None:
    config = _forecast_ensemble_config(tmp_path, small_nc, make_config, members=2)
    first = train(config)
    record = json.loads((first.output_dir / "ensemble.json").read_text())
    again = train(config, resume=True)
    assert again.run_id == first.run_id == record["parent_run_id"]
    assert json.loads((first.output_dir / "ensemble.json").read_text())["members"] == record["members"]
