"""Training a correction of a base model (``model.base_correction`` with ``training.init_from``): the base rides
along frozen, its scalers read the history, the run starts at the base's score, and a refused layout is one line.

A two-member quantile base of leads 1-3 without forecast inputs is trained on the week-ahead chain's data file
(tests/week_ahead.py) and exported; a correction over leads 1-7 reading both forecast inputs is trained from it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from hydroseq.cli import main
from hydroseq.config import TrainConfig, validate_config
from hydroseq.errors import ExitCode
from hydroseq.export.exporter import export_trained_model
from hydroseq.export.source import read_provenance
from hydroseq.training import train
from hydroseq.training.checkpoint import BEST_CHECKPOINT, WEIGHTS_FILE, Checkpoint
from tests.fixtures import store_uri
from tests.week_ahead import LEVELS, SEQ_LEN, WeekAhead
from tests.week_ahead import train_config as chain_config


def _config(data_file: Path, folder: Path, **changes: dict) -> dict:
    config = chain_config(data_file, folder).model_dump(mode="json")
    config["data"]["forecast_hiding"] = None
    config["model"].update(hidden_size=8, forecast_hidden_size=4, quantiles=LEVELS)
    config["training"].update(max_batches_per_epoch=3, output_dir=str(folder / "train"))
    config["tracking"].update(tracking_uri=store_uri(folder), artifact_root=str(folder / "mlartifacts"))
    for section, values in changes.items():
        config[section].update(values)
    return config


@pytest.fixture(scope="module")
def base(week_ahead: WeekAhead, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base: leads 1-3, no forecast input, two members, exported."""
    folder = tmp_path_factory.mktemp("base")
    config = _config(week_ahead["data"], folder, data={"forecast_inputs": [], "leads": [1, 2, 3]},
                     model={"forecast_rollout": False, "forecast_hidden_size": None},
                     training={"ensemble": 2})
    run = train(validate_config(config, TrainConfig), show_progress=False)
    export_trained_model(Checkpoint.load(run.output_dir / BEST_CHECKPOINT), SEQ_LEN, folder / "model",
                         read_provenance(week_ahead["data"]), pt2=False)
    return folder / "model"


def test_a_correction_trains_with_its_base_frozen_and_the_base_s_scalers(week_ahead: WeekAhead, base: Path,
                                                                         tmp_path: Path, capsys) -> None:
    config = _config(week_ahead["data"], tmp_path, model={"base_correction": {"base_leads": [1, 2, 3],
                                                                              "base_members": 2}},
                     training={"init_from": str(base)})
    (tmp_path / "train.yaml").write_text(json.dumps(config))
    capsys.readouterr()
    assert main(["train", "--config", str(tmp_path / "train.yaml"), "-q", "--json"]) == ExitCode.OK
    summary = json.loads(capsys.readouterr().out)
    trained = Checkpoint.load(Path(summary["output_dir"]) / BEST_CHECKPOINT)
    base_checkpoint = Checkpoint.load(base / WEIGHTS_FILE)
    for member, base_state in enumerate(base_checkpoint.member_states):  # the frozen base, bit for bit
        for name, value in base_state.items():
            assert torch.equal(trained.model_state[f"base.members.{member}.{name}"], value), name
    assert torch.equal(trained.model_state["base_scale"], torch.tensor(base_checkpoint.quantile_scale,
                                                                       dtype=torch.float32))
    assert torch.equal(trained.model_state["lead_gate"], torch.ones(7))
    assert trained.quantile_scale is None  # the base's calibration, inside: no forecast gives the base exactly
    assert any(trained.model_state[name].abs().sum() > 0 for name in trained.model_state
               if name.startswith("correction.head"))  # the correction moved off its zero start
    ours, theirs = trained.scalers, base_checkpoint.scalers
    assert (ours.dynamic_mean.tolist(), ours.static_std.tolist(), ours.target_mean) == (
        theirs.dynamic_mean.tolist(), theirs.static_std.tolist(), theirs.target_mean)
    assert ours.forecast_names == ["total_precipitation_sum_forecast", "temperature_2m_mean_forecast"]
    base_score = summary["base_val_median_nse"]
    assert base_score is not None  # the correction before its first step is the base


def test_a_correction_that_changes_the_base_s_inputs_is_refused_in_one_line(week_ahead: WeekAhead, base: Path,
                                                                            tmp_path: Path, capsys) -> None:
    config = _config(week_ahead["data"], tmp_path, model={"base_correction": {"base_leads": [1, 2], "base_members": 2}},
                     data={"dynamic_inputs": ["total_precipitation_sum", "temperature_2m_mean"]},
                     training={"init_from": str(base)})
    (tmp_path / "train.yaml").write_text(json.dumps(config))
    capsys.readouterr()
    assert main(["train", "--config", str(tmp_path / "train.yaml")]) == ExitCode.CONFIG
    error = capsys.readouterr().err.strip()
    assert "a correction holds the base as it was trained" in error and "\n" not in error
    assert "data.dynamic_inputs" in error and "model.base_correction.base_leads: [1, 2]" in error
    assert not (tmp_path / "train" / BEST_CHECKPOINT).exists()


def test_a_correction_without_its_base_is_refused(week_ahead: WeekAhead, tmp_path: Path, capsys) -> None:
    config = _config(week_ahead["data"], tmp_path, model={"base_correction": {"base_leads": [1, 2, 3],
                                                                              "base_members": 2}})
    (tmp_path / "train.yaml").write_text(json.dumps(config))
    assert main(["train", "--config", str(tmp_path / "train.yaml")]) == ExitCode.CONFIG
    assert "model.base_correction needs training.init_from" in capsys.readouterr().err
