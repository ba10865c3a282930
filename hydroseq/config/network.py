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


class BaseCorrectionConfig(StrictModel):
    """A week-ahead model that corrects a trained base model without weather-forecast inputs.

    The network holds the base (``training.init_from``, frozen: its members, weights, calibration and
    scalers) and adds a roll-out over the lead window, started from the base members' mean hindcast
    state, that reads the weather forecast and shifts the base's median and scales its spread at each
    lead. Leads past the base's last take its last lead's quantiles as the anchor. Where the forecast
    is absent at a lead, and at leads whose correction is switched off (chosen on validation), the
    output is the base's own (:class:`hydroseq.model.base_correction.BaseCorrectedModel`).
    """

    base_leads: list[PositiveInt] = Field(description="the leads the base model predicts (its data.leads)")
    base_members: PositiveInt = Field(description="the base model's ensemble members")


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
    base_correction: BaseCorrectionConfig | None = Field(
        None, description="with forecast_rollout and training.init_from: correct that base model's forecast "
                          "instead of forecasting from a hindcast LSTM of its own (hidden_size, observed_skip and "
                          "quantiles are the base's)")
    head: str | None = Field(
        None, description="the head (hydroseq.model.heads.HEADS): point or quantile (default: quantile with "
                          "quantiles, else point); another registered head hands on quantiles at model.quantiles")
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
