"""Configuration: pydantic models are the single source of truth; YAML files are validated against them."""

from hydroseq.config.base import StrictModel, dump_config, load_config, validate_config
from hydroseq.config.forecast_source import ForecastSourceConfig, ForecastVariableSpec
from hydroseq.config.ingest import IngestConfig
from hydroseq.config.tracking import TrackingConfig
from hydroseq.config.train import (
    BatchingConfig,
    DataConfig,
    ModelConfig,
    Period,
    Splits,
    TrainConfig,
    TrainingConfig,
)
from hydroseq.errors import ConfigError

__all__ = [
    "BatchingConfig", "ConfigError", "DataConfig", "ForecastSourceConfig", "ForecastVariableSpec", "IngestConfig",
    "ModelConfig", "Period", "Splits",
    "StrictModel", "TrackingConfig", "TrainConfig", "TrainingConfig", "dump_config", "load_config",
    "validate_config",
]
