"""Ingest config validation: every bundled example validates; mistakes name key, value, expectation."""

from __future__ import annotations

import copy

import pytest
import yaml

from hydroseq.config import ConfigError, IngestConfig, load_config, validate_config

EXAMPLES = ["ingest_caravan_daily.yaml", "ingest_camels_us.yaml", "ingest_charlotte_hourly.yaml",
            "ingest_charlotte_daily.yaml", "ingest_ebnit_hourly.yaml", "ingest_caravan_published.yaml",
            "ingest_camels_us_published.yaml", "ingest_caravan_regional.yaml"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_bundled_configs_validate(repo_root, name):
    config = load_config(repo_root / "configs" / name, IngestConfig)
    assert config.sources and config.grid.start <= config.grid.end


@pytest.fixture
def caravan(repo_root) -> dict:
    return yaml.safe_load((repo_root / "configs" / "ingest_caravan_daily.yaml").read_text())


def _error(data: dict) -> str:
    with pytest.raises(ConfigError) as caught:
        validate_config(data, IngestConfig, source="test.yaml")
    return str(caught.value)


def test_unknown_units_name_key_value_and_the_known_units(caravan):
    data = copy.deepcopy(caravan)
    data["sources"][0]["variables"]["streamflow"]["units"] = "bananas"
    message = _error(data)
    assert "test.yaml" in message and "sources.0.variables.streamflow" in message
    assert "unknown units 'bananas'" in message and "UDUNITS-2" in message and "ft3/s" in message
    assert "\n" not in message


@pytest.mark.parametrize(("units", "kind"), [
    ("cfs", "volume_rate"), ("ft3/s", "volume_rate"), ("ft3 s-1", "volume_rate"), ("m3/s", "volume_rate"),
    ("l/s", "volume_rate"), ("inch/d", "depth_rate"), ("mm/d", "depth_rate"), ("kg m-2 s-1", "depth_rate"),
    ("mm", "depth"), ("kg m-2", "depth"), ("degF", "temperature"), ("K", "temperature")])
def test_units_are_read_by_the_units_library(caravan, units, kind):
    data = copy.deepcopy(caravan)
    aggregation = "sum" if kind == "depth" else "mean"
    data["sources"][0]["variables"]["streamflow"].update(units=units, aggregation=aggregation)
    assert validate_config(data, IngestConfig).sources[0].variables["streamflow"].kind == kind


def test_units_of_another_quantity_are_refused_unless_passed_through(caravan):
    data = copy.deepcopy(caravan)
    data["sources"][0]["variables"]["streamflow"]["units"] = "W m-2"
    assert "'W m-2' are not an amount, a rate or a discharge of water" in _error(data)
    data["sources"][0]["variables"]["streamflow"]["convert"] = False
    assert validate_config(data, IngestConfig).sources[0].variables["streamflow"].kind == "other"


def test_grid_zone_with_daylight_saving_is_refused(caravan):
    data = copy.deepcopy(caravan)
    data["grid"]["timezone"] = "America/New_York"
    message = _error(data)
    assert "grid.timezone" in message and "'America/New_York'" in message and "Etc/GMT+5" in message


@pytest.mark.parametrize("key, value, expected", [
    ("frequency", "sometimes", "not a fixed-length frequency"),
    ("timezone", "Mars/Olympus", "unknown time zone"),
    ("timestamp", "middle", "interval_start"),
    ("format", "xlsx", "camels_us_streamflow"),
])
def test_bad_source_fields(caravan, key, value, expected):
    data = copy.deepcopy(caravan)
    data["sources"][0][key] = value
    message = _error(data)
    assert f"sources.0.{key}" in message and repr(value) in message and expected in message


def test_summing_discharge_and_unknown_keys_are_refused(caravan):
    data = copy.deepcopy(caravan)
    data["sources"][0]["variables"]["streamflow"] = {"source": "q", "units": "m3/s", "aggregation": "sum"}
    assert "no physical meaning" in _error(data)
    data = copy.deepcopy(caravan)
    data["grid"]["frequncy"] = "1D"
    assert "grid.frequncy" in _error(data)


def test_same_output_variable_from_two_sources_is_refused(caravan):
    data = copy.deepcopy(caravan)
    data["sources"].append(copy.deepcopy(data["sources"][0]))
    assert "produced by both" in _error(data)


@pytest.mark.parametrize("stations, expected", [
    ({}, "give either path (a station table) or dataset and root"),
    ({"path": "stations.csv", "dataset": "caravan", "root": "Caravan", "source": "camels"}, "give either path"),
    ({"dataset": "camels_us"}, "dataset camels_us needs root"),
    ({"dataset": "caravan", "root": "Caravan"}, "source (e.g. camels) is needed for dataset caravan"),
    ({"dataset": "camels_us", "root": "CAMELS", "source": "camels"}, "and only there"),
    ({"path": "stations.csv", "root": "Caravan"}, "root apply to a published dataset, not to a station table"),
    ({"dataset": "camels_us", "root": "CAMELS", "timezones": {"01022500": "Mars/Olympus"}}, "unknown time zone"),
])
def test_stations_come_from_a_table_or_a_published_dataset(caravan, stations, expected):
    data = copy.deepcopy(caravan)
    data["stations"] = stations
    message = _error(data)
    assert "stations" in message and expected in message
