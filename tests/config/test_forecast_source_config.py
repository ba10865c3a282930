"""Forecast sources in the ingest config: accumulation conventions, units, latency, catalogued products, names."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from hydroseq.config import ConfigError, ForecastSourceConfig, IngestConfig, load_config, validate_config
from hydroseq.fetch import PRODUCTS
from hydroseq.grid.weather_products import WEATHER_PRODUCTS

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


def test_a_catalogued_product_gives_the_latency_and_issue_frequency_unless_the_source_sets_them():
    named = {key: value for key, value in BASE.items() if key not in ("latency", "issue_frequency")}
    hres = validate_config({**named, "product": "ecmwf-hres", "steps": ["0/240/6"]}, ForecastSourceConfig)
    assert (hres.latency, hres.latency_step, hres.issue_step) == ("8h", pd.Timedelta("8h"), pd.Timedelta("12h"))
    short = validate_config({**named, "product": "ecmwf-hres", "steps": ["0/90/1"]}, ForecastSourceConfig)
    assert short.issue_step == pd.Timedelta("6h")  # the 06 and 18 UTC runs reach 90 h too
    own = validate_config({**BASE, "product": "gfs"}, ForecastSourceConfig)
    assert (own.latency, own.issue_frequency) == ("6h", "1D")
    with pytest.raises(ConfigError, match="no weather-forecast product 'icon'"):
        validate_config({**named, "product": "icon"}, ForecastSourceConfig)
    with pytest.raises(ConfigError, match="publishes no run to step 402 h"):
        validate_config({**named, "product": "gfs", "steps": ["0/402/6"]}, ForecastSourceConfig)
    with pytest.raises(ConfigError, match="latency"):
        validate_config(named, ForecastSourceConfig)  # neither a product nor a latency


def test_the_shipped_hres_config_and_the_catalogue_agree_on_the_latency(repo_root):
    """ECMWF open data comes one hour after the dissemination schedule, whose 00 UTC HRES sends its last steps
    (to day 10, ``steps: 0/240/6``) about 7 h after the base time: 8 h, the value fetch waits for too. The shipped
    config names the product rather than repeating the figure (it once said 7 h while fetch said 8 h)."""
    raw = yaml.safe_load((repo_root / "configs" / "ingest_grib2_hres.yaml").read_text())["forecast_sources"][0]
    assert raw["product"] == "ecmwf-hres" and "latency" not in raw
    source = validate_config(raw, ForecastSourceConfig)
    assert source.latency_step == WEATHER_PRODUCTS["ecmwf-hres"].latency == PRODUCTS["ecmwf-hres"].spec.latency
    assert source.latency_step == pd.Timedelta("8h") and source.issue_step == pd.Timedelta("12h")


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
