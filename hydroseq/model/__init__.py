"""The model zoo: ``get_model`` builds a model from its config; losses live in :mod:`.losses`."""

from __future__ import annotations

from typing import TypeAlias

from hydroseq.config import DataConfig, ModelConfig
from hydroseq.dataset.features import FeatureLayout
from hydroseq.model.base_correction import BaseCorrectedModel
from hydroseq.model.ensemble import EnsembleModel
from hydroseq.model.heads import HEADS, Head, get_head, get_loss
from hydroseq.model.losses import masked_mse, nse_loss, station_target_std
from hydroseq.model.lstm import LSTMModel, LSTMPath, Mode, last_valid_step
from hydroseq.model.quantile_head import pinball_loss
from hydroseq.model.rollout import ForecastRolloutSpec

__all__ = [
    "HEADS",
    "BaseCorrectedModel",
    "EnsembleModel",
    "Head",
    "LSTMModel",
    "LSTMPath",
    "Mode",
    "TrainedModel",
    "get_head",
    "get_loss",
    "get_model",
    "last_valid_step",
    "masked_mse",
    "nse_loss",
    "pinball_loss",
    "station_target_std",
]

# What a checkpoint builds: one network or an ensemble of them; both take ``forward(x, lengths, path)``
# and have a ``mode``, so prediction, evaluation and export treat them alike.
TrainedModel: TypeAlias = LSTMModel | EnsembleModel | BaseCorrectedModel


def get_model(config: ModelConfig, n_features: int, n_outputs: int, mode: Mode,
              lstm_path: LSTMPath = "padded", data: DataConfig | None = None) -> LSTMModel | BaseCorrectedModel:
    """Build the model described by ``config`` (freshly initialised; load a state dict to restore).

    Parameters
    ----------
    config
        The ``model`` section of a train config.
    n_features, n_outputs
        Inputs per step and outputs per sequence (``mode="sequence"``) or per step.
    mode
        ``"per_step"`` or ``"sequence"`` (the data config's ``mode``).
    lstm_path
        Default path of ``forward`` (``"packed"`` or ``"padded"``); both give the same results.
    data
        The data config: where the observed-target columns are, for ``config.observed_skip``.
    """
    skip = None
    if config.observed_skip:
        layout = FeatureLayout.of(data.dynamic_inputs, data.static_inputs, data.target, mode,
                                  data.lagged_target) if data is not None else None
        if layout is None or layout.lagged_column is None or layout.flag_column is None:
            raise ValueError("model.observed_skip needs a per-step data config with lagged_target")
        skip = (layout.lagged_column, layout.flag_column)
    rollout = None
    if config.forecast_rollout:
        if data is None or not data.forecast_inputs:
            raise ValueError("model.forecast_rollout needs data.forecast_inputs")
        layout = FeatureLayout.from_config(data)
        rollout = ForecastRolloutSpec(layout.forecast_columns.start, len(data.forecast_inputs), data.forecast_horizon,
                                      tuple(data.lead_steps), config.forecast_hidden_size or config.hidden_size)
    correction = config.base_correction
    if correction is not None:
        if rollout is None:
            raise ValueError("model.base_correction needs model.forecast_rollout")
        hindcast_features = n_features - (rollout.columns.stop - rollout.columns.start)
        members = [_lstm(config, hindcast_features, len(correction.base_leads), mode, lstm_path, skip, None)
                   for _ in range(correction.base_members)]
        return BaseCorrectedModel(members, rollout, correction.base_leads, n_features)
    return _lstm(config, n_features, n_outputs, mode, lstm_path, skip, rollout)


def _lstm(config: ModelConfig, n_features: int, n_outputs: int, mode: Mode, lstm_path: LSTMPath,
          skip: tuple[int, int] | None, rollout: ForecastRolloutSpec | None) -> LSTMModel:
    return LSTMModel(n_features, n_outputs, hidden_size=config.hidden_size, num_layers=config.num_layers,
                     embedding_size=config.embedding_size, dropout=config.dropout,
                     initial_forget_bias=config.initial_forget_bias, mode=mode, lstm_path=lstm_path,
                     skip_columns=skip, rollout=rollout, output_head=get_head(config))
