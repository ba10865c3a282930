"""``hydroseq config``: the JSON schema of the config models and a commented starting YAML made from them,
which loads back through the real config loader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from pydantic import Field

from hydroseq.cli import main
from hydroseq.config import IngestConfig, StrictModel, TrainConfig, load_config
from hydroseq.config import template as templates
from hydroseq.config.template import TemplateError, config_template

MODELS = {"train": TrainConfig, "ingest": IngestConfig}


@pytest.mark.parametrize("kind", MODELS)
def test_schema_is_the_models_json_schema(kind: str, capsys: pytest.CaptureFixture) -> None:
    assert main(["config", "--schema", kind]) == 0
    assert json.loads(capsys.readouterr().out) == MODELS[kind].model_json_schema()


@pytest.mark.parametrize("kind", MODELS)
def test_the_template_loads_through_the_config_loader(kind: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture) -> None:
    assert main(["config", "--template", kind]) == 0
    text = capsys.readouterr().out
    path = tmp_path / f"{kind}.yaml"
    path.write_text(text)
    config = load_config(path, MODELS[kind])
    assert list(yaml.safe_load(text)) == [name for name in MODELS[kind].model_fields
                                          if f"\n# {name}:" not in text]  # all but the commented sections
    assert config == MODELS[kind].model_validate(yaml.safe_load(text))


def test_the_template_holds_the_defaults_and_descriptions(tmp_path: Path) -> None:
    text = config_template(TrainConfig, "train")
    config = TrainConfig.model_validate(yaml.safe_load(text))
    assert config.training == TrainConfig.model_fields["training"].default  # every default as the model has it
    assert config.batching == TrainConfig.model_fields["batching"].default
    description = TrainConfig.model_fields["training"].annotation.model_fields["patience"].description
    assert f"  # {description}\n  patience: null\n" in text
    assert "  # (one of: constant, cosine, step)\n  lr_schedule: constant\n" in text
    assert "  # target_hiding:\n  #   # share of single steps hidden\n  #   step_rate: 0.02\n" in text
    ingest = config_template(IngestConfig, "ingest")
    assert "# forecast_sources:\n#     # label of the product" in ingest
    assert "    timestamp: interval_start\n" in ingest  # the example source: dates name the day they cover


def test_the_ingest_template_feeds_the_train_template() -> None:
    ingest = IngestConfig.model_validate(yaml.safe_load(config_template(IngestConfig, "ingest")))
    train = TrainConfig.model_validate(yaml.safe_load(config_template(TrainConfig, "train")))
    produced = {name for source in ingest.sources for name in source.variables}
    assert {*train.data.dynamic_inputs, train.data.target} <= produced


class _Probe(StrictModel):
    """A config with a required key."""

    name: str = Field(description="what it is called")
    size: int = 3


def test_a_required_key_without_an_example_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(TemplateError, match="_Probe.name is required and has no example"):
        config_template(_Probe, "probe")
    monkeypatch.setitem(templates.EXAMPLES, (_Probe, "name"), "gauge")
    assert "# what it is called [required]\nname: gauge\nsize: 3\n" in config_template(_Probe, "probe")


def test_an_example_of_a_key_that_is_gone_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(templates.EXAMPLES, (_Probe, "renamed"), 1)
    with pytest.raises(TemplateError, match="EXAMPLES names _Probe.renamed, which is not a field"):
        config_template(TrainConfig, "train")
