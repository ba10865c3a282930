"""End-to-end training on real data: resume is bit-exact, no leakage, the MLflow run holds everything."""

from __future__ import annotations

import json
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import pytest
import torch
import xarray as xr
from mlflow.tracking import MlflowClient

from hydroseq.errors import ConfigError
from hydroseq.scoring import metrics
from hydroseq.scoring.peak_metrics import peak_mape
from hydroseq.serving.pyfunc_logging import log_forecast_model
from hydroseq.training import evaluate, train
from hydroseq.training.checkpoint import Checkpoint
from hydroseq.training.runtime import check_bf16
from hydroseq.training.tracking import use_tracking_uri

pytestmark = pytest.mark.slow


def _weights(out_dir: Path) -> dict[str, torch.Tensor]:
    return Checkpoint.load(out_dir / "last.pt").model_state


@pytest.fixture(scope="module")
def straight_run(tmp_path_factory: pytest.TempPathFactory, small_nc: Path, make_config):
    """Two epochs without interruption (also the run whose MLflow contents are checked), its model logged
    as ``hydroseq train`` logs it."""
    tmp = tmp_path_factory.mktemp("straight")
    config = make_config(tmp, small_nc)
    return config, train(config, log_model=log_forecast_model)


def test_resume_after_epoch_one_gives_the_same_weights(tmp_path: Path, small_nc: Path, straight_run,
                                                       make_config) -> None:
    _, straight = straight_run
    killed = make_config(tmp_path, small_nc, epochs=1)  # as if killed right after epoch 1's checkpoint
    first = train(killed)
    resumed = train(make_config(tmp_path, small_nc, epochs=2), resume=True)
    assert resumed.run_id == first.run_id
    assert [row["epoch"] for row in resumed.history] == [0, 1]
    for name, value in _weights(straight.output_dir).items():
        assert torch.equal(value, _weights(resumed.output_dir)[name]), name
    straight_losses = [row["train_loss"] for row in straight.history]
    assert [row["train_loss"] for row in resumed.history] == straight_losses


def test_future_periods_do_not_move_the_trained_weights(tmp_path: Path, small_nc: Path, straight_run,
                                                        make_config) -> None:
    """Perturb validation and test periods (inputs and target): training must not see the change."""
    _, straight = straight_run
    changed = tmp_path / "changed.nc"
    with xr.open_dataset(small_nc) as original:
        dataset = original.load()
    future = dataset["time"] > np.datetime64("1985-01-01T00:00")
    for name in ["total_precipitation_sum", "temperature_2m_mean", "streamflow"]:
        dataset[name] = dataset[name].where(~future, dataset[name] * 3 + 7)
    dataset.to_netcdf(changed)
    result = train(make_config(tmp_path, changed))
    for name, value in _weights(straight.output_dir).items():
        assert torch.equal(value, _weights(result.output_dir)[name]), name
    assert result.history[-1]["val_median_nse"] != straight.history[-1]["val_median_nse"]


def test_mlflow_run_holds_params_metrics_artifacts_and_model(straight_run) -> None:
    config, result = straight_run
    client = MlflowClient(config.tracking.tracking_uri)
    run = client.get_run(result.run_id)
    assert run.data.params["model.hidden_size"] == "8"
    assert run.data.params["data.splits.train.end"] == "1984-12-31"
    assert len(run.data.tags["git_commit"]) >= 7
    with xr.open_dataset(config.data.path) as dataset:
        assert run.data.tags["dataset_checksum"] == dataset.attrs["dataset_checksum"]
    for key in ["train_loss", "val_loss", "val_median_nse", "val_median_kge", "padding_ratio",
                "valid_timesteps_per_s", "samples_per_s", "epoch_seconds", "val_seconds", "peak_memory_mb"]:
        history = client.get_metric_history(result.run_id, key)
        assert [m.step for m in sorted(history, key=lambda m: m.step)] == [0, 1], key
    top = {a.path for a in client.list_artifacts(result.run_id)}
    assert {"config.yaml", "scalers.json", "ingest_report.yaml", "metrics_validation.csv", "events_validation.csv",
            "summary_validation.json", "checkpoints", "hydrographs_validation"} <= top
    assert [a.path for a in client.list_artifacts(result.run_id, "checkpoints")] == ["checkpoints/best.pt"]
    assert len(client.list_artifacts(result.run_id, "hydrographs_validation")) == 3
    models = client.search_logged_models([run.info.experiment_id], filter_string=f"source_run_id = '{result.run_id}'")
    assert [m.name for m in models] == ["model"]
    (version,) = client.search_model_versions(f"run_id = '{result.run_id}'")
    assert version.name == "tests"  # the experiment's name
    with use_tracking_uri(config.tracking.tracking_uri):
        logged = mlflow.pyfunc.load_model(f"runs:/{result.run_id}/model")
    exported = logged.unwrap_python_model().exported
    assert exported.metadata.run_id == result.run_id and exported.metadata.parity_max_abs_diff <= 1e-5
    best = Checkpoint.load(result.output_dir / "best.pt")
    assert exported.metadata.scalers == best.scalers.to_dict()
    x, lengths = torch.randn(2, config.data.seq_len, 5), torch.tensor([config.data.seq_len, 11])
    x[1, 11:] = 0.0
    with torch.no_grad():
        expected = best.build_model()(x, lengths)[torch.arange(2), lengths - 1].numpy()
    np.testing.assert_allclose(exported.predict(x.numpy(), lengths.numpy()), expected, rtol=0, atol=1e-5)
    forecast = logged.predict(logged.input_example)
    assert len(forecast) == 2 and forecast["value"].notna().all()


def test_evaluate_scores_model_and_baselines_and_logs_to_the_run(straight_run) -> None:
    config, result = straight_run
    report = evaluate(result.run_id, period="test", tracking_uri=config.tracking.tracking_uri).report
    scores = pd.read_csv(report.csv_path, dtype={"station": str})
    assert set(scores["forecast"]) == {"model", "persistence", "climatology"}
    assert len(scores) == 3 * 3
    with xr.open_dataset(config.data.path) as dataset:
        in_test = (dataset["time"] > np.datetime64("1987-01-01")).to_numpy()
        q = dataset["streamflow"].sel(station="02064000").to_numpy().astype(np.float64)
    expected = metrics.nse(q[in_test], q[np.flatnonzero(in_test) - 1])  # persistence: yesterday's flow
    row = scores.query("station == '02064000' and forecast == 'persistence'").iloc[0]
    assert row["nse"] == pytest.approx(expected, rel=1e-6)
    logged = MlflowClient(config.tracking.tracking_uri).get_run(result.run_id).data.metrics
    assert logged["test_model_lead0_median_nse"] == pytest.approx(
        scores.query("forecast == 'model'")["nse"].median())
    assert "test_lead0_stations_beating_persistence" in logged
    # hydrological signatures per station and lead, their medians in the summary; flood events in their own table
    assert {"beta_nse", "fhv", "fms", "flv", "peak_timing", "missed_peaks"} <= set(scores.columns)
    assert row["fhv"] == pytest.approx(metrics.fdc_fhv(q[in_test], q[np.flatnonzero(in_test) - 1]), rel=1e-6)
    summary = json.loads(report.summary_path.read_text())
    assert summary["test_model_lead0_median_fhv"] == pytest.approx(scores.query("forecast == 'model'")["fhv"].median())
    assert "test_model_lead0_median_fhv" not in logged and "test_model_lead0_mean_nse" not in logged
    events = pd.read_csv(report.events_csv_path, dtype={"station": str})
    assert list(events.columns[:5]) == ["station", "lead", "forecast", "level", "threshold"]
    assert set(events["forecast"]) == {"model", "persistence", "climatology"} and len(events) == 3 * 3 * 4
    q95 = events.query("level == 'q95'")  # 4 training years: no return-period flow, percentiles only
    assert (q95["hits"] + q95["misses"] == q95["observed_events"]).all() and (q95["observed_events"] > 0).all()
    assert "test_model_lead0_event_csi_q95" in summary and "test_persistence_lead0_event_pod_q95" in summary
    artifacts = {item.path for item in MlflowClient(config.tracking.tracking_uri).list_artifacts(result.run_id,
                                                                                                  "evaluation")}
    assert {"evaluation/events_test.csv", "evaluation/metrics_test.csv", "evaluation/summary_test.json",
            "evaluation/signatures_test.csv"} <= artifacts
    # Peak-MAPE beside the other metrics; the signatures of observed and forecast flows in their own table
    assert row["peak_mape"] == pytest.approx(peak_mape(q[in_test], q[np.flatnonzero(in_test) - 1]), rel=1e-6)
    signatures = pd.read_csv(report.signatures_csv_path, dtype={"station": str})
    assert len(signatures) == 3 * 3 * 13
    assert list(signatures.columns[:4]) == ["station", "lead", "forecast", "signature"]
    mean_flow = signatures.query("station == '02064000' and forecast == 'persistence' and signature == 'q_mean'")
    assert mean_flow["observed"].item() == pytest.approx(np.nanmean(q[in_test]), rel=1e-5)
    ratio = signatures.query("forecast == 'model' and signature == 'runoff_ratio'")
    assert ratio["observed"].between(0.05, 1.5).all() and ratio["simulated"].notna().all()
    assert summary["test_model_lead0_median_q_mean_error"] == pytest.approx(
        signatures.query("forecast == 'model' and signature == 'q_mean'")["error"].median(), rel=1e-5)


def test_sequence_mode_with_lagged_target_trains_and_evaluates(tmp_path: Path, small_nc: Path, make_config) -> None:
    config = make_config(tmp_path, small_nc, mode="sequence", epochs=1, max_batches_per_epoch=20)
    result = train(config)
    report = evaluate(result.run_id, period="validation", tracking_uri=config.tracking.tracking_uri).report
    assert set(report.scores["lead"]) == {1}
    model_nse = report.scores.query("forecast == 'model'")["nse"]
    assert model_nse.notna().all() and (model_nse < 1).all()
    state = Checkpoint.load(result.output_dir / "last.pt")
    assert state.feature_names[3] == "streamflow_lagged" and state.mode == "sequence"


def test_sequence_mode_with_several_leads_validates_every_lead(tmp_path: Path, small_nc: Path, make_config) -> None:
    config = make_config(tmp_path, small_nc, mode="sequence", epochs=1, max_batches_per_epoch=10)
    config.data.leads = [1, 3]
    result = train(config)
    assert np.isfinite(result.history[-1]["val_loss"])
    report = evaluate(result.run_id, period="validation", tracking_uri=config.tracking.tracking_uri).report
    assert set(report.scores["lead"]) == {1, 3}


def test_bf16_autocast_trains_on_the_cpu_close_to_float32(tmp_path: Path, small_nc: Path, straight_run,
                                                          make_config) -> None:
    """``training.bf16`` takes effect on the CPU (other weights) and the losses stay within 5 % of float32."""
    _, fp32 = straight_run
    config = make_config(tmp_path, small_nc, bf16=True)
    try:
        check_bf16(config.training, torch.device("cpu"))
    except ConfigError as error:  # this CPU's oneDNN has no bfloat16 LSTM: the refusal is tested below
        pytest.skip(str(error))
    bf16 = train(config)
    fp32_weights, bf16_weights = _weights(fp32.output_dir), _weights(bf16.output_dir)
    assert any(not torch.equal(fp32_weights[name], bf16_weights[name]) for name in fp32_weights)
    for ours, reference in zip(bf16.history, fp32.history, strict=True):
        assert ours["train_loss"] == pytest.approx(reference["train_loss"], rel=0.05)
        assert ours["val_loss"] == pytest.approx(reference["val_loss"], rel=0.05)


def test_bf16_on_a_device_without_a_bf16_lstm_is_a_config_error(tmp_path: Path, small_nc: Path, make_config,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    config = make_config(tmp_path, small_nc, bf16=True)
    try:
        check_bf16(config.training, torch.device("cpu"))
    except ConfigError:
        with pytest.raises(ConfigError, match="training.bf16: this cpu cannot run the LSTM in bfloat16"):
            train(config)
        return
    pytest.skip("this CPU runs the LSTM in bfloat16: the refusal cannot be seen here")


def test_missing_dataset_is_a_clear_error(tmp_path: Path, make_config) -> None:
    from hydroseq.errors import InputDataError

    with pytest.raises(InputDataError, match="missing.nc: ingested dataset not found"):
        train(make_config(tmp_path, tmp_path / "missing.nc"))


def test_a_validation_period_the_data_do_not_hold_is_refused_before_training(tmp_path: Path, small_nc: Path,
                                                                            make_config, capsys) -> None:
    """A fine-tuning archive that ends before its validation period: one line naming the file and the period,
    exit 4, before any run or checkpoint is made (it failed after the first epoch with an IndexError)."""
    import yaml

    from hydroseq.cli import main
    from hydroseq.errors import ExitCode

    config = make_config(tmp_path, small_nc).model_dump(mode="json")
    config["data"]["splits"]["validation"] = {"start": "1995-01-01", "end": "1996-12-31"}
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump(config))
    assert main(["train", "--config", str(path)]) == ExitCode.INPUT_DATA
    message = capsys.readouterr().err.strip().splitlines()[-1]
    assert "small.nc (validation 1995-01-01..1996-12-31): the validation period holds no sample: no window" in message
    assert not (Path(config["training"]["output_dir"]) / "last.pt").exists()


def test_resume_before_the_first_checkpoint_starts_fresh(tmp_path: Path, small_nc: Path, make_config,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture) -> None:
    """A scheduler that always passes ``--resume``: a run stopped before its first epoch was committed left
    no ``last.pt``; ``train --resume`` then trains from the start and says so, instead of failing (exit 4)."""
    import json

    import hydroseq.training.loop
    from hydroseq.cli import main
    from hydroseq.config import dump_config
    from hydroseq.errors import ExitCode

    config = tmp_path / "train.yaml"
    config.write_text(dump_config(make_config(tmp_path, small_nc, epochs=1, max_batches_per_epoch=2)))

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt  # Ctrl-C in the first epoch
    with monkeypatch.context() as patch:
        patch.setattr(hydroseq.training.loop, "train_one_epoch", stopped)
        assert main(["train", "--config", str(config)]) == ExitCode.INTERRUPTED
    out = tmp_path / "out"
    assert out.is_dir() and not (out / "last.pt").exists()
    capsys.readouterr()
    assert main(["--json", "train", "--config", str(config), "--resume"]) == ExitCode.OK
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary["resumed_from_epoch"] is None and summary["epochs_completed"] == 1
    assert f"--resume: no checkpoint in {out} yet" in captured.err and "started fresh" in captured.err
    assert Checkpoint.load(out / "last.pt").epoch == 1
