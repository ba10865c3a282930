"""Config errors a person can act on: an unknown key is named with the nearest known key of its section,
through the real entry point (``hydroseq train``) and for nested sections of both config kinds."""

from __future__ import annotations

import pytest
import yaml

from hydroseq.cli import main
from hydroseq.config import IngestConfig, TrainConfig, validate_config
from hydroseq.errors import ConfigError, ExitCode


def test_a_misspelt_key_in_a_train_config_gets_did_you_mean_through_the_cli(tmp_path, repo_root, capsys):
    config = yaml.safe_load((repo_root / "configs" / "train_demo_quick.yaml").read_text())
    config["model"]["hiden_size"] = 8
    (tmp_path / "train.yaml").write_text(yaml.safe_dump(config))
    assert main(["train", "--config", str(tmp_path / "train.yaml")]) == ExitCode.CONFIG
    error = capsys.readouterr().err.strip()
    assert error.endswith("model.hiden_size: unknown key; did you mean 'hidden_size'?") and "\n" not in error


@pytest.mark.parametrize("edit, expected", [
    (lambda c: c["grid"].update(timezon="UTC"), "grid.timezon: unknown key; did you mean 'timezone'?"),
    (lambda c: c["forecast_sources"][0].update(member=3), "forecast_sources.0.member: unknown key; did you mean "
                                                          "'members'?"),
    (lambda c: c["forecast_sources"][0]["variables"]["temperature_2m_mean_forecast"].update(unit="K"),
     "forecast_sources.0.variables.temperature_2m_mean_forecast.unit: unknown key; did you mean 'units'?"),
    (lambda c: c["grid"].update(zzz=1), "grid.zzz: unknown key; known keys: frequency, timezone"),
])
def test_nested_sections_and_mapped_specs_name_the_nearest_key(repo_root, edit, expected):
    config = yaml.safe_load((repo_root / "configs" / "ingest_grib2_ensemble.yaml").read_text())
    edit(config)
    with pytest.raises(ConfigError) as raised:
        validate_config(config, IngestConfig, "ingest.yaml")
    assert expected in str(raised.value)


def test_a_key_of_a_list_of_sections_is_looked_up_in_the_item_model():
    with pytest.raises(ConfigError, match="did you mean 'noise_std'"):
        validate_config({"data": {"path": "x.nc", "dynamic_inputs": ["p"], "target": "q", "mode": "per_step",
                                  "leads": [1], "forecast_inputs": [{"variable": "p", "source": "perfect",
                                                                     "noise_sdt": [0.1]}],
                                  "splits": {name: {"start": "2000-01-01", "end": "2000-12-31"}
                                             for name in ("train", "validation", "test")}}}, TrainConfig)
