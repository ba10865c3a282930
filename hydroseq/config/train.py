"""Configuration of everything after ingestion (samples, batching, model, training, tracking): one
small model per stage; :class:`TrainConfig` composes them and is what a train YAML holds."""

from __future__ import annotations

import itertools
import warnings
from pathlib import Path
from typing import Literal

from pydantic import Field, NonNegativeInt, PositiveFloat, PositiveInt, model_validator

from hydroseq.config.base import StrictModel
from hydroseq.config.dates import IsoDate
from hydroseq.config.derived import ClimateSources
from hydroseq.config.network import BatchingConfig as BatchingConfig
from hydroseq.config.network import ModelConfig as ModelConfig
from hydroseq.config.tracking import TrackingConfig as TrackingConfig


class Period(StrictModel):
    """A closed interval of grid labels, ``start <= t <= end`` (dates are whole local days)."""

    start: IsoDate
    end: IsoDate

    @model_validator(mode="after")
    def _ordered(self) -> Period:
        if self.end < self.start:
            raise ValueError(f"end {self.end} is before start {self.start}")
        return self


class Splits(StrictModel):
    """Train / validation / test periods. They must not overlap (evaluation never feeds training)."""

    train: Period
    validation: Period
    test: Period

    @model_validator(mode="after")
    def _disjoint(self) -> Splits:
        periods = sorted([("train", self.train), ("validation", self.validation), ("test", self.test)],
                         key=lambda item: item[1].start)
        for (name_a, a), (name_b, b) in itertools.pairwise(periods):
            if b.start <= a.end:
                raise ValueError(f"periods {name_a} and {name_b} overlap ({a.end} >= {b.start})")
        return self


class ObservedTargetHiding(StrictModel):
    """Training only: hide some observed-target inputs, so the model learns to forecast with a late gauge.

    A hidden step reads as "not observed" (value 0, flag 0), exactly like a missing observation.
    Each training batch draws anew: single steps, one stretch per chunk, or the whole chunk.
    """

    step_rate: float = Field(0.02, ge=0.0, le=1.0, description="share of single steps hidden")
    stretch_rate: float = Field(0.5, ge=0.0, le=1.0, description="share of chunks with one hidden stretch")
    stretch_max_steps: PositiveInt = Field(30, description="a stretch hides 1..stretch_max_steps steps")
    chunk_rate: float = Field(0.1, ge=0.0, le=1.0, description="share of chunks hidden throughout")


class ForecastInput(StrictModel):
    """One variable the model reads for the lead window (a weather forecast), and where it comes from.

    ``ingested``: the archive of issued forecasts in the dataset, a ``(station, time, lead)`` variable written by
    a forecast source of ``hydroseq ingest`` (the value at issue t comes from the newest product published by t).
    ``perfect``: the grid's *observed* values over the lead window, an upper bound on what any real forecast can
    give, recorded as such in MLflow, the model metadata and every forecast file; ``noise_std`` then adds Gaussian
    noise (in training standard deviations of the variable, one value per lead) so the model does not trust them.
    """

    variable: str = Field(description="ingested: the forecast variable; perfect: the observed variable")
    source: Literal["ingested", "perfect"]
    noise_std: list[float] | None = Field(None, description="perfect only: noise std per lead 1..horizon")
    noise_seed: int = 0

    @model_validator(mode="after")
    def _noise(self) -> ForecastInput:
        if self.noise_std is not None and self.source != "perfect":
            raise ValueError(f"{self.variable}: noise_std applies to source 'perfect' only")
        if self.noise_std is not None and any(not (value >= 0) for value in self.noise_std):
            raise ValueError(f"{self.variable}: noise_std must be >= 0, got {self.noise_std}")
        return self

    @property
    def feature_name(self) -> str:
        """Prefix of this input's feature names (``<variable>_forecast``)."""
        return f"{self.variable}_forecast"


class ForecastInputHiding(StrictModel):
    """Training only: hide the forecast inputs at some issue times, so the model also forecasts without them.

    A hidden issue reads as "no product" (values and flags 0), as when no forecast is valid at the
    issue time and the forecast falls back to the model's no-forecast input.
    """

    step_rate: float = Field(0.05, ge=0.0, le=1.0, description="share of single issue steps hidden")
    chunk_rate: float = Field(0.05, ge=0.0, le=1.0, description="share of chunks hidden throughout")


class DataConfig(StrictModel):
    """Which variables feed the model and how samples are cut from each station's record.

    ``leads`` are grid steps after the last input step: ``[0]`` (the per-step default) simulates the
    target at each input step; positive leads forecast. With ``lagged_target`` the observed target
    up to each input step is an input (never the target itself: every lead must be >= 1); in
    per-step mode it comes with an "observed" flag and may be missing or hidden.
    """

    path: Path | None = Field(None, description="ingested NetCDF; `--data` overrides it")
    dynamic_inputs: list[str] = Field(min_length=1)
    static_inputs: list[str] = Field(default_factory=list)
    target: str = "streamflow"
    stations: list[str] | None = Field(None, description="restrict to these station ids (default: all)")
    splits: Splits
    mode: Literal["per_step", "sequence"] = "per_step"
    seq_len: PositiveInt = Field(365, description="longest history a sample reads, the exported model's length")
    min_len: PositiveInt = 30
    spin_up: int = Field(0, ge=0, description="per-step mode: first k steps of a chunk carry no loss")
    leads: list[NonNegativeInt] | None = Field(
        None, description="targets at t+lead for every step t (per-step) or the last step (sequence); "
                          "default [0] per-step (simulation), [1] sequence")
    lagged_target: bool = Field(False, description="observed target up to t as an input")
    target_hiding: ObservedTargetHiding | None = Field(
        None, description="per-step with lagged_target: hide observed-target inputs during training")
    forecast_inputs: list[ForecastInput] = Field(
        default_factory=list, description="per-step forecast models: weather-forecast inputs for the lead "
                                          "window (docs/forecast.md#weather-forecast-inputs)")
    forecast_hiding: ForecastInputHiding | None = Field(None, description="hide forecast inputs during training")
    per_station_target_scaling: bool = Field(False, description="scale the target (and the observed target "
                                             "input) with each station's training mean and std, not one over all")
    cache_dir: Path = Field(Path("runs/cache"), description="sample-index cache (with the other outputs in runs/)")
    storage: Literal["memory", "disk"] = Field(
        "memory", description="where the scaled per-step inputs live while training: in memory, or in a "
                              "temporary file in cache_dir read sample by sample (out-of-core, for datasets "
                              "larger than memory; same batches; docs/scale-out.md)")
    climate_sources: ClimateSources = Field(
        default_factory=ClimateSources, description="the variables derived inputs (pet_oudin, clim_*) are computed "
                                                    "from (hydroseq.climate)")
    day_convention: Literal["grid", "local_standard_day"] = Field(
        "grid", description="local_standard_day: a daily model whose steps are local standard-time days; it reads a "
                            "file on the daily grid of any fixed UTC offset (an agency's own zone), not only its own")
    memory_budget_gb: PositiveFloat | None = Field(
        None, description="with storage: memory, put the scaled inputs on disk instead when the process's "
                          "resident memory plus their size would exceed this many GB (docs/scale-out.md)")

    @model_validator(mode="before")
    @classmethod
    def _renamed_max_len(cls, values: object) -> object:
        """``max_len``, the key's name before 0.1.0, is read as ``seq_len`` with a warning (both: an error)."""
        if isinstance(values, dict) and "max_len" in values:
            if "seq_len" in values:
                raise ValueError("give seq_len only (max_len is its former name)")
            warnings.warn("data.max_len is called data.seq_len now: read as seq_len (rename it in the config)",
                          FutureWarning, stacklevel=2)
            return {("seq_len" if key == "max_len" else key): value for key, value in values.items()}
        return values

    @model_validator(mode="after")
    def _lengths(self) -> DataConfig:
        if self.min_len > self.seq_len:
            raise ValueError(f"min_len {self.min_len} is larger than seq_len {self.seq_len}")
        if self.spin_up >= self.seq_len:
            raise ValueError(f"spin_up {self.spin_up} leaves no step with a loss at seq_len {self.seq_len}")
        return self

    @model_validator(mode="after")
    def _leads(self) -> DataConfig:
        if self.leads is None:
            self.leads = [0] if self.mode == "per_step" else [1]
        if not self.leads or len(set(self.leads)) != len(self.leads):
            raise ValueError(f"leads must be distinct, got {self.leads}")
        if self.lagged_target and self.mode == "per_step" and min(self.leads) < 1:
            raise ValueError("lagged_target needs every lead >= 1: the observed target at t is an input, "
                             "so the target must lie strictly after it")
        if self.target_hiding is not None and not (self.lagged_target and self.mode == "per_step"):
            raise ValueError("target_hiding applies to per-step mode with lagged_target only")
        return self

    @model_validator(mode="after")
    def _forecast_inputs(self) -> DataConfig:
        if not self.forecast_inputs:
            if self.forecast_hiding is not None:
                raise ValueError("forecast_hiding needs forecast_inputs")
            return self
        if self.mode != "per_step" or min(self.lead_steps) < 1:
            raise ValueError("forecast_inputs need per-step mode and leads >= 1")
        names = [item.variable for item in self.forecast_inputs]
        if len(set(names)) != len(names):
            raise ValueError(f"forecast_inputs name a variable twice: {names}")
        for item in self.forecast_inputs:
            if item.noise_std is not None and len(item.noise_std) != self.forecast_horizon:
                raise ValueError(f"{item.variable}: noise_std needs one value per lead 1..{self.forecast_horizon}, "
                                 f"got {len(item.noise_std)}")
        return self

    @property
    def forecast_horizon(self) -> int:
        """Lead steps of the forecast inputs: 1..max(leads) (0 without forecast inputs)."""
        return max(self.lead_steps) if self.forecast_inputs else 0

    @property
    def lead_steps(self) -> list[int]:
        """The resolved leads (never None after validation)."""
        assert self.leads is not None
        return list(self.leads)


class TrainingConfig(StrictModel):
    """Optimisation, device and checkpointing."""

    epochs: PositiveInt = 10
    learning_rate: float = Field(1e-3, gt=0)
    lr_schedule: Literal["constant", "cosine", "step"] = "constant"
    grad_clip: float | None = Field(1.0, gt=0)
    loss: Literal["mse", "nse", "quantile"] = Field(
        "mse", description="mse, nse (NSE*: squared errors weighted by 1 / (station std + 0.1)^2) or quantile "
                           "(pinball loss of model.quantiles, weighted by 1 / (station std + 0.1))")
    patience: PositiveInt | None = Field(None, description="early stopping on validation median NSE")
    selection_leads: Literal["first", "all"] = Field("first", description="best epoch and early stopping by the "
                                                     "validation median NSE of the first lead, or its mean over all")
    calibrate_quantiles: bool = Field(
        True, description="quantile models: after training, scale each level's distance from the median per lead so "
                          "that its frequency on the validation period matches the level (not a base correction, "
                          "which keeps its base's calibration)")
    median_nse_weight: float = Field(
        0.0, ge=0.0, description="loss: quantile: add this weight times the NSE* loss of the median, which pulls "
                                 "the point forecast towards the peaks a squared error rewards")
    seed: int = 0
    device: str = Field("auto", description="auto, cpu, cuda or cuda:N")
    lstm_path: Literal["auto", "packed", "padded"] = "auto"
    bf16: bool = False
    threads: PositiveInt | None = Field(None, description="torch threads (default: available cores)")
    log_every: PositiveInt = 50
    max_batches_per_epoch: PositiveInt | None = None
    eval_stride: PositiveInt | None = Field(
        None, description="per-step evaluation: steps predicted per seq_len window (default seq_len // 2; "
                          "1 reads every step from its own full window, seq_len times the cost)")
    ensemble: PositiveInt = Field(1, description="members trained one after the other with seeds seed, seed+1, ...; "
                                                 "evaluation and export use their mean")
    output_dir: Path = Path("runs/train")
    init_from: str | None = Field(None, description="fine-tune from this base model (a model directory, checkpoint "
                                  "or MLflow run id), keeping its inputs, network and scalers; `--init-from` wins")
    freeze: list[Literal["embedding", "lstm"]] = Field([], description="init_from: parts keeping the base's weights")


class TrainConfig(StrictModel):
    """A whole training experiment: what a ``configs/train_*.yaml`` file holds."""

    data: DataConfig
    batching: BatchingConfig = BatchingConfig()
    model: ModelConfig = ModelConfig()
    training: TrainingConfig = TrainingConfig()
    tracking: TrackingConfig = TrackingConfig()

    @model_validator(mode="after")
    def _quantile_model(self) -> TrainConfig:
        built_in = self.model.head in (None, "point", "quantile")  # a registered head chooses its own loss
        if built_in and (self.model.quantiles is not None) != (self.training.loss == "quantile"):
            raise ValueError("model.quantiles and training.loss: quantile go together")
        if self.model.quantiles is not None and self.data.mode != "per_step":
            raise ValueError("model.quantiles needs data.mode: per_step")
        return self
