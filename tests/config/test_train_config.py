"""The train config's sequence length, ``data.seq_len``: its former name ``max_len`` is read with a warning."""

from __future__ import annotations

import datetime as dt
import json
import warnings
from pathlib import Path

import pytest
import yaml

from hydroseq.config import ConfigError, TrainConfig, load_config
from hydroseq.export import ExportMetadata

REPO_ROOT = Path(__file__).resolve().parents[2]
BASE_MODEL = REPO_ROOT / "models" / "caravan-camels-us-daily"


def _config_with(tmp_path: Path, **data: object) -> Path:
    config = yaml.safe_load((REPO_ROOT / "configs" / "train_demo_quick.yaml").read_text())
    config["data"].pop("seq_len")
    config["data"].update(data)
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_the_former_name_max_len_is_read_as_seq_len_with_a_warning(tmp_path: Path) -> None:
    with pytest.warns(FutureWarning, match="data.max_len is called data.seq_len now"):
        config = load_config(_config_with(tmp_path, max_len=120), TrainConfig)
    assert config.data.seq_len == 120 and "max_len" not in config.data.model_dump()
    with pytest.raises(ConfigError, match="give seq_len only"):
        load_config(_config_with(tmp_path, max_len=120, seq_len=90), TrainConfig)


def test_a_model_exported_before_the_rename_reads_its_length_without_a_warning(tmp_path: Path) -> None:
    """A metadata.json whose train config names the length max_len (as models exported before 0.1.0 do)."""
    stored = json.loads((BASE_MODEL / "metadata.json").read_text())
    data = stored["train_config"]["data"]
    stored["train_config"]["data"] = {("max_len" if key == "seq_len" else key): value for key, value in data.items()}
    (tmp_path / "metadata.json").write_text(json.dumps(stored))
    assert '"max_len": 365' in (tmp_path / "metadata.json").read_text()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        metadata = ExportMetadata.read(tmp_path)
    assert metadata.train_config is not None and metadata.train_config.data.seq_len == metadata.seq_len == 365
    assert metadata.training_period is not None and metadata.training_period.start.year == 1981


def test_every_shipped_train_config_serves_an_input_example_ending_on_the_demo_day(repo_root):
    """The logged model's input example (what `mlflow models serve` users copy first) ends on the day the
    demo and the docs forecast: 2014-09-30 for the Caravan configs, 2005-06-15 for the hourly Ebnit one, the end of
    the test period (2021-09-30) for the agency's gauge in Luxembourg."""
    paths = sorted(repo_root.glob("configs/train_*.yaml")) + sorted(repo_root.glob("configs/finetune_*.yaml"))
    days = {path.name: load_config(path, TrainConfig).tracking.example_issue_time for path in paths}
    assert days.pop("train_ebnit_hourly_forecast.yaml") == dt.date(2005, 6, 15)
    assert days.pop("finetune_agency.yaml") == days.pop("train_agency_scratch.yaml") == dt.date(2021, 9, 30)
    assert set(days.values()) == {dt.date(2014, 9, 30)}, days
