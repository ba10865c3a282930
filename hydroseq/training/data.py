"""Everything the training loop reads: the data in memory, scalers fitted on training data, the samples."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from hydroseq.config import TrainConfig
from hydroseq.dataset import (
    Scalers,
    SequenceDataset,
    StationData,
    build_sample_index,
    load_station_data,
    require_samples,
)
from hydroseq.errors import ConfigError, InputDataError
from hydroseq.model.losses import station_target_std


@dataclass
class TrainingData:
    """The loaded dataset, scalers fitted on the training period, and the training samples.

    ``station_std`` holds, per station, the standard deviation of the scaled target over the
    training period (weights of the NSE* loss).
    """

    path: Path
    station_data: StationData
    scalers: Scalers
    train_set: SequenceDataset
    station_std: torch.Tensor

    @property
    def feature_names(self) -> list[str]:
        """Input features in model order."""
        return self.train_set.feature_names

    @property
    def n_outputs(self) -> int:
        """Outputs per sequence (sequence mode) or per step (per-step mode): one per lead."""
        return len(self.train_set.index.leads)


def resolve_data_path(config: TrainConfig, data_path: str | Path | None) -> Path:
    """``--data`` if given, else ``data.path`` of the config; a clear error if neither is set."""
    path = data_path or config.data.path
    if path is None:
        raise ConfigError("no dataset: set data.path in the train config or pass --data <file.nc or store.zarr>")
    if not Path(path).exists():
        raise InputDataError(path, "ingested dataset not found (run `hydroseq ingest` first)")
    return Path(path)


def load_training_data(config: TrainConfig, data_path: str | Path | None = None,
                       scalers: Scalers | None = None, input_scalers: Scalers | None = None) -> TrainingData:
    """Load the dataset, fit the scalers on the training period (unless given) and index the train split.

    ``input_scalers``: fit only the forecast inputs' scalers here and take every other one from these
    (a correction reads the history with its base's scalers).

    Raises
    ------
    InputDataError
        If the dataset is missing, or the train or the validation split holds no sample (early stopping and the
        calibration need one: :func:`hydroseq.dataset.require_samples`).
    """
    path = resolve_data_path(config, data_path)
    station_data = load_station_data(path, config.data)
    scalers = scalers or Scalers.fit(station_data, config.data)
    if input_scalers is not None:
        scalers = scalers.with_inputs_of(input_scalers)
    index = require_samples(build_sample_index(station_data, config.data, "train"), station_data, config.data)
    require_samples(build_sample_index(station_data, config.data, "validation"), station_data, config.data)
    train_set = SequenceDataset(station_data, scalers, index, config.data)
    in_train = station_data.grid.period_mask(station_data.times, config.data.splits.train)
    scaled_train_target = scalers.transform_target(station_data.target[:, in_train], list(station_data.station_ids))
    station_std = torch.from_numpy(station_target_std(scaled_train_target))
    return TrainingData(path, station_data, scalers, train_set, station_std)
