"""Configuration of the batches and the network (sections ``batching`` and ``model`` of a train config)."""

from __future__ import annotations

import itertools
from typing import Literal

from pydantic import Field, PositiveInt, model_validator

from hydroseq.config.base import StrictModel


class BatchingConfig(StrictModel):
    """How samples are grouped into batches."""

    strategy: Literal["bucket", "random", "global_pad"] = "bucket"
    batch_size: PositiveInt = 256
    token_budget: PositiveInt | None = Field(None, description="max valid timesteps per batch (bucket only)")
    bucket_width: PositiveInt = Field(8, description="batches per length bucket")
    tail: Literal["keep", "drop"] = "keep"
    num_workers: int = Field(0, ge=0)
    pin_memory: bool | Literal["auto"] = "auto"


class ModelConfig(StrictModel):
    """An LSTM with an optional linear embedding and a linear head."""

    hidden_size: PositiveInt = 64
    num_layers: PositiveInt = 1
    embedding_size: PositiveInt | None = None
    dropout: float = Field(0.0, ge=0.0, lt=1.0)
    initial_forget_bias: float = 3.0
    observed_skip: bool = Field(
        False, description="per-step with lagged_target: add the newest observed target at or before t (0 when "
                           "the sequence has none) to every lead's output, so the network learns the change from it")
    forecast_rollout: bool = Field(
        False, description="with data.forecast_inputs: read them with a short LSTM over the lead window started "
                           "from the hindcast state (a handoff) instead of as extra inputs of the hindcast LSTM")
    forecast_hidden_size: PositiveInt | None = Field(None, description="size of the roll-out LSTM (default "
                                                                        "hidden_size)")
    quantiles: list[float] | None = Field(
        None, description="per-step mode: predict these quantile levels of every lead (strictly increasing in "
                          "(0, 1), 0.5 among them: the point forecast) instead of one value; train with "
                          "training.loss: quantile")

    @model_validator(mode="after")
    def _quantile_levels(self) -> ModelConfig:
        if self.quantiles is not None:
            levels = self.quantiles
            increasing = all(b > a for a, b in itertools.pairwise(levels))
            if not increasing or any(not 0 < level < 1 for level in levels):
                raise ValueError(f"quantiles must be strictly increasing levels in (0, 1), got {levels}")
            if 0.5 not in levels:
                raise ValueError(f"quantiles must include 0.5 (the median is the point forecast), got {levels}")
        return self
