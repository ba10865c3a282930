"""Forecast sources in the ingest config: accumulation conventions, units, latency, names."""

from __future__ import annotations

import pytest

from hydroseq.config import ConfigError, ForecastSourceConfig, IngestConfig, load_config, validate_config

BASE = {"name": "hres", "path": "products/*.nc", "layout": "grid", "latency": "6h", "issue_frequency": "1D",
        "horizon": 3, "variables": {"p": {"source": "tp", "units": "m", "aggregation": "sum",
                                          "accumulation": "since_reference"}}}


def _with_variable(**spec):
    return {**BASE, "variables": {"p": spec}}


@pytest.mark.parametrize("config, fragment", [
    (_with_variable(source="tp", units="m", aggregation="sum", accumulation="hourly"), "per_step' or 'since_reference"),
    (_with_variable(source="tp", units="m", aggregation="sum"), "must declare accumulation"),
    (_with_variable(source="tp", units="mm/h", aggregation="sum", accumulation="per_step"), "must be an amount"),
    (_with_variable(source="t2m", units="K", accumulation="per_step"), "applies to sum variables only"),
    (_with_variable(source="t2m", units="K", aggregation="max"), "'sum' or 'mean'"),
    (_with_variable(source="t2m", units="bananas"), "unknown units"),
    ({**BASE, "latency": "-6h"}, "must not be negative"),
    ({**BASE, "latency": "soon"}, "not a duration"),
    ({**BASE, "issue_frequency": "0h"}, "frequency"),
    ({**BASE, "horizon": 0}, "greater than or equal to 1"),
    ({**BASE, "on_missing_product": "guess"}, "'fail' or 'use_previous'"),
    ({**BASE, "extraction": "weights"}, "weights_path"),
], ids=["unknown accumulation", "no accumulation", "summed rate", "accumulated mean", "max", "units",
        "negative latency", "latency text", "zero frequency", "horizon", "missing product", "weights"])
def test_invalid_forecast_source_is_a_config_error(config, fragment):
    with pytest.raises(ConfigError, match=fragment):
        validate_config(config, ForecastSourceConfig)


def test_valid_source_parses_latency_and_frequency():
    source = validate_config({**BASE, "latency": "0h"}, ForecastSourceConfig)
    assert source.latency_step.value == 0 and source.issue_step.days == 1 and source.label == "hres"


def test_forecast_names_must_not_collide_with_observed_ones(repo_root):
    config = load_config(repo_root / "configs" / "ingest_caravan_daily_forecast.yaml", IngestConfig)
    data = config.model_dump(mode="json")
    data["forecast_sources"][0]["variables"] = {"streamflow": data["forecast_sources"][0]["variables"].popitem()[1]}
    with pytest.raises(ConfigError, match="'streamflow' is produced by both"):
        validate_config(data, IngestConfig)
    data["forecast_sources"][0]["variables"] = {"rain": {"source": "x", "units": "K"}}
    data["sources"][0]["variables"]["rain_reference_time"] = {"source": "y", "units": "K"}
    with pytest.raises(ConfigError, match="'rain_reference_time' is produced by both"):
        validate_config(data, IngestConfig)
