"""``${NAME}`` and ``${NAME:-default}`` in a config file take the environment variable NAME."""

from __future__ import annotations

from pathlib import Path

import pytest

from hydroseq.config import ConfigError, IngestConfig, load_config

REGIONAL = Path(__file__).resolve().parents[2] / "configs" / "ingest_caravan_regional.yaml"


def test_a_set_variable_replaces_the_default(monkeypatch):
    monkeypatch.setenv("CARAVAN_ROOT", "/data/Caravan")
    config = load_config(REGIONAL, IngestConfig)
    assert config.stations.root == Path("/data/Caravan")
    assert config.sources[0].path == "/data/Caravan/timeseries/csv/camels/camels_*.csv"


def test_an_unset_variable_takes_the_default(monkeypatch):
    monkeypatch.delenv("CARAVAN_ROOT", raising=False)
    assert load_config(REGIONAL, IngestConfig).stations.root == Path("data/Caravan")


def test_an_unset_variable_without_default_is_an_error_naming_it(tmp_path, monkeypatch):
    monkeypatch.delenv("HYDROSEQ_TEST_ROOT", raising=False)
    text = REGIONAL.read_text().replace("${CARAVAN_ROOT:-data/Caravan}", "${HYDROSEQ_TEST_ROOT}")
    (tmp_path / "c.yaml").write_text(text)
    with pytest.raises(ConfigError, match=r"c.yaml: \$\{HYDROSEQ_TEST_ROOT\} names the environment variable "
                                          "HYDROSEQ_TEST_ROOT, which is not set"):
        load_config(tmp_path / "c.yaml", IngestConfig)
