"""Fine-tuning (``training.init_from`` / ``--init-from``): a run starts from a base model's weights and
scalers, on basins the base never saw, linked to it in MLflow; it may not change the base's inputs."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from mlflow.tracking import MlflowClient

from hydroseq.cli import main
from hydroseq.config import TrainConfig, dump_config
from hydroseq.errors import ConfigError, ExitCode
from hydroseq.export import export_model
from hydroseq.training import train
from hydroseq.training.checkpoint import BEST_CHECKPOINT, WEIGHTS_FILE, Checkpoint

BASE_STATIONS = ["01022500", "02064000"]
NEW_STATIONS = ["03015500"]


@pytest.fixture(scope="module")
def base_dir(tmp_path_factory: pytest.TempPathFactory, small_nc: Path, make_config) -> Path:
    """A base model trained on two basins and exported (with its weights file)."""
    tmp = tmp_path_factory.mktemp("base")
    config = make_config(tmp, small_nc, epochs=1)
    config.data.stations = BASE_STATIONS
    result = train(config, show_progress=False)
    export_model(result.output_dir / BEST_CHECKPOINT, seq_len=60, out_dir=tmp / "model", data_path=small_nc)
    return tmp / "model"


def _finetune_config(tmp: Path, small_nc: Path, make_config, base: Path, **training):
    config = make_config(tmp, small_nc, epochs=1, init_from=str(base), **training)
    config.data.stations = NEW_STATIONS
    return config


def test_the_export_holds_the_weights_and_they_are_checksummed(base_dir: Path) -> None:
    metadata = (base_dir / "metadata.json").read_text()
    assert WEIGHTS_FILE in metadata
    assert Checkpoint.load(base_dir / WEIGHTS_FILE).optimizer_state == {}


def test_a_finetuned_run_starts_from_the_base_weights_and_keeps_its_scalers(tmp_path: Path, small_nc: Path,
                                                                            make_config, base_dir: Path) -> None:
    base = Checkpoint.load(base_dir / WEIGHTS_FILE)
    config = _finetune_config(tmp_path, small_nc, make_config, base_dir, learning_rate=1e-12)
    result = train(config, show_progress=False)
    tuned = Checkpoint.load(result.output_dir / "last.pt")
    for name, weights in base.model_state.items():  # a step of 1e-12 leaves the start where it was
        torch.testing.assert_close(tuned.model_state[name], weights, atol=1e-9, rtol=0)
    assert tuned.scalers.to_dict() == base.scalers.to_dict()  # not refitted on the new basin
    scratch = make_config(tmp_path / "scratch", small_nc, epochs=1, learning_rate=1e-12)
    scratch.data.stations = NEW_STATIONS
    fresh = Checkpoint.load(train(scratch, show_progress=False).output_dir / "last.pt")
    assert fresh.scalers.to_dict() != base.scalers.to_dict()
    assert not torch.allclose(fresh.model_state["lstm.weight_ih_l0"], base.model_state["lstm.weight_ih_l0"])
    tags = MlflowClient(result.tracking_uri).get_run(result.run_id).data.tags
    assert tags["init_from"] == str(base_dir)
    assert tags["base_run_id"] == base.run_id
    assert tags["base_model"] == str(base_dir.resolve())


def test_frozen_parts_keep_the_base_weights(tmp_path: Path, small_nc: Path, make_config, base_dir: Path) -> None:
    base = Checkpoint.load(base_dir / WEIGHTS_FILE)
    config = _finetune_config(tmp_path, small_nc, make_config, base_dir, freeze=["lstm"], learning_rate=0.01)
    tuned = Checkpoint.load(train(config, show_progress=False).output_dir / "last.pt")
    assert torch.equal(tuned.model_state["lstm.weight_hh_l0"], base.model_state["lstm.weight_hh_l0"])
    assert not torch.equal(tuned.model_state["head.weight"], base.model_state["head.weight"])


def test_a_config_that_changes_the_inputs_is_refused_with_the_setting_named(tmp_path: Path, small_nc: Path,
                                                                           make_config, base_dir: Path) -> None:
    config = _finetune_config(tmp_path, small_nc, make_config, base_dir)
    config.data.static_inputs = ["p_mean"]
    with pytest.raises(ConfigError, match=r"data\.static_inputs: \['p_mean'\] \(the base has \['p_mean', 'aridity'\]"):
        train(config, show_progress=False)
    config = _finetune_config(tmp_path, small_nc, make_config, base_dir)
    config.model.hidden_size = 16
    with pytest.raises(ConfigError, match=r"model\.hidden_size: 16 \(the base has 8\)"):
        train(config, show_progress=False)


def test_a_folder_without_weights_is_refused(tmp_path: Path, small_nc: Path, make_config) -> None:
    (tmp_path / "empty").mkdir()
    config = _finetune_config(tmp_path, small_nc, make_config, tmp_path / "empty")
    with pytest.raises(ConfigError, match="has no checkpoint.pt"):
        train(config, show_progress=False)


def test_a_base_model_path_that_is_not_there_is_a_setup_error(tmp_path: Path, small_nc: Path, make_config,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """``train --init-from /no/such/dir``: one line naming the path, exit 3 (fix the deployment), not 4."""
    config = tmp_path / "train.yaml"
    config.write_text(dump_config(make_config(tmp_path, small_nc, epochs=1)))
    missing = tmp_path / "no" / "such" / "dir"
    assert main(["train", "--config", str(config), "--init-from", str(missing)]) == ExitCode.CONFIG
    assert capsys.readouterr().err.strip() == (f"hydroseq train: error: --init-from {missing}: no such model "
                                               "directory or checkpoint file")


def test_the_base_model_is_scored_on_the_new_basins_before_the_first_update(tmp_path: Path, small_nc: Path,
                                                                            make_config, base_dir: Path) -> None:
    """With steps of 1e-12 the weights stay the base's: its score before fine-tuning is the first epoch's."""
    config = _finetune_config(tmp_path, small_nc, make_config, base_dir, learning_rate=1e-12)
    result = train(config, show_progress=False)
    assert result.base_val_median_nse is not None
    assert result.base_val_median_nse == pytest.approx(result.history[0]["val_median_nse"], abs=1e-6)
    logged = MlflowClient(result.tracking_uri).get_run(result.run_id).data.metrics
    assert logged["base_val_median_nse"] == pytest.approx(result.base_val_median_nse)
    scratch = make_config(tmp_path / "scratch", small_nc, epochs=1)
    scratch.data.stations = NEW_STATIONS
    assert train(scratch, show_progress=False).base_val_median_nse is None


def test_a_quantile_base_is_finetuned_with_its_quantile_head_and_a_fresh_calibration(tmp_path: Path, small_nc: Path,
                                                                                      make_config) -> None:
    """The probabilistic base model's quantile head survives fine-tuning: same levels, the base's head weights as
    the start, and the spread calibrated again on the new basins' validation period."""
    def quantile_config(tmp: Path, **training: object) -> TrainConfig:
        dumped = make_config(tmp, small_nc, epochs=1, **training).model_dump(mode="json")
        dumped["model"]["quantiles"] = [0.1, 0.5, 0.9]
        dumped["training"]["loss"] = "quantile"
        return TrainConfig.model_validate(dumped)

    base_config = quantile_config(tmp_path / "base")
    base_config.data.stations = BASE_STATIONS
    base_result = train(base_config, show_progress=False)
    export_model(base_result.output_dir / BEST_CHECKPOINT, seq_len=60, out_dir=tmp_path / "model", data_path=small_nc)
    base = Checkpoint.load(tmp_path / "model" / WEIGHTS_FILE)

    tuned_config = quantile_config(tmp_path / "tuned", init_from=str(tmp_path / "model"), learning_rate=1e-12)
    tuned_config.data.stations = NEW_STATIONS
    tuned = Checkpoint.load(train(tuned_config, show_progress=False).output_dir / BEST_CHECKPOINT)
    assert tuned.config.model.quantiles == [0.1, 0.5, 0.9]
    torch.testing.assert_close(tuned.model_state["head.weight"], base.model_state["head.weight"], atol=1e-9, rtol=0)
    assert tuned.quantile_scale is not None and base.quantile_scale is not None
    assert tuned.quantile_scale != base.quantile_scale  # refitted on the new basins' validation period

    without_head = make_config(tmp_path / "point", small_nc, epochs=1, init_from=str(tmp_path / "model"))
    without_head.data.stations = NEW_STATIONS
    with pytest.raises(ConfigError, match=r"model\.quantiles: None \(the base has \[0\.1, 0\.5, 0\.9\]\)"):
        train(without_head, show_progress=False)
