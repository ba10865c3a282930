"""Variable-length samples assembled from in-memory arrays: indexing only, no file I/O."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from hydroseq.config import DataConfig
from hydroseq.dataset.batch import Batch
from hydroseq.dataset.features import FeatureLayout
from hydroseq.dataset.forecast_inputs import last_step_of, lead_window_within
from hydroseq.dataset.sample_index import SampleIndex
from hydroseq.dataset.scaled_inputs import shared_scaled_inputs
from hydroseq.dataset.scalers import Scalers
from hydroseq.dataset.station_data import StationData
from hydroseq.dataset.window import window_start


class SequenceDataset(torch.utils.data.Dataset):
    """Scaled, padded batches of the samples of one :class:`SampleIndex`.

    The inputs are scaled once per dataset and scalers (:mod:`hydroseq.dataset.scaled_inputs`,
    shared by every split; the same feature code the forecast uses); :meth:`gather` then only
    copies each sample's contiguous block and its static row into a preallocated zero-padded
    array and wraps it with ``torch.from_numpy``. Feature order: see :class:`FeatureLayout` and
    :attr:`feature_names`.

    Per-step targets are the target at ``t + lead`` for every input step ``t`` and lead, and only
    where ``t + lead`` lies inside the split's period: a chunk's inputs may come from earlier, its
    targets never.

    Memory: the shared scaled inputs, about ``stations x steps x (per-step features + 1) x 4``
    bytes (5 MB for the 31 bundled basins in the forecast config), or none of it with
    ``data.storage: disk``.
    """

    def __init__(self, station_data: StationData, scalers: Scalers, index: SampleIndex,
                 data_config: DataConfig) -> None:
        self.index = index
        self.n_times = station_data.n_times
        self.spin_up = data_config.spin_up if index.mode == "per_step" else 0
        self.leads = np.asarray(index.leads, dtype=np.int64)
        self.layout = FeatureLayout.from_config(data_config)
        self.inputs = shared_scaled_inputs(station_data, scalers, self.layout, int(self.leads.max()),
                                           data_config.storage, data_config.cache_dir, data_config.memory_budget_gb)
        in_split = station_data.grid.period_mask(station_data.times, getattr(data_config.splits, index.split))
        # The split's own view of the shared inputs: targets only inside its period (per-step), and
        # forecast inputs whose lead window ends after it (perfect ones read the future) missing.
        self._target_in_split = np.zeros(self.inputs.row_steps, dtype=bool)
        self._target_in_split[: self.n_times] = in_split if index.mode == "per_step" else True
        self._forecast_within = (np.tile(lead_window_within(self.n_times, self.layout.forecast_horizon,
                                                            last_step_of(in_split)),
                                         (1, 2 * len(self.layout.forecast_inputs)))
                                 if self.layout.forecast_inputs else None)
        self.feature_names: list[str] = self.layout.names

    def __len__(self) -> int:
        return len(self.index)

    @property
    def lengths(self) -> np.ndarray:
        """int64 input length of every sample (from the cached index)."""
        return self.index.length

    @property
    def n_features(self) -> int:
        """Number of input features per step."""
        return len(self.feature_names)

    def __getitem__(self, item: int) -> Batch:
        return self.gather([item])

    def gather(self, indices: Sequence[int] | np.ndarray, pad_to: int | None = None) -> Batch:
        """Assemble the samples ``indices`` into one :class:`Batch`, sorted by length descending.

        Parameters
        ----------
        indices
            Positions in the sample index (any order).
        pad_to
            Pad every sequence to this many steps instead of the batch's longest (must be at
            least that long).
        """
        order = np.asarray(indices, dtype=np.int64)
        if order.ndim != 1 or len(order) == 0:
            raise ValueError("gather needs a non-empty 1-d list of sample positions")
        order = order[np.argsort(-self.index.length[order], kind="stable")]
        lengths = self.index.length[order]
        station = self.index.station[order]
        end = self.index.end[order]
        steps = int(lengths[0]) if pad_to is None else pad_to
        if steps < lengths[0]:
            raise ValueError(f"pad_to {pad_to} is shorter than the longest sample ({lengths[0]})")
        first_step = window_start(end, lengths)
        x = np.zeros((len(order), steps, self.n_features), dtype=np.float32)
        n_step = self.inputs.n_step_features
        step_targets = (np.full((len(order), steps, len(self.leads)), np.nan, np.float32)
                        if self.index.mode == "per_step" else None)
        # One contiguous block copy per sample (B small copies): 2x faster than a single vectorised
        # np.take over all (sample, step) rows on 256 x 365-step batches, equal on small batches
        # (benchmarks/bench_batching.py).
        for row, (sample_station, first, length) in enumerate(zip(station.tolist(), first_step.tolist(),
                                                                   lengths.tolist(), strict=True)):
            x[row, :length, :n_step] = self.inputs.features(sample_station * self.n_times + first, length)
            x[row, :length, n_step:] = self.inputs.static[sample_station]
            if self._forecast_within is not None:
                x[row, :length, self.layout.forecast_columns] *= self._forecast_within[first: first + length]
            if step_targets is not None:
                first_y = sample_station * self.inputs.row_steps + first
                for column, lead in enumerate(self.leads.tolist()):
                    values = self.inputs.target(first_y + lead, length)
                    inside = self._target_in_split[first + lead: first + lead + length]
                    step_targets[row, :length, column] = np.where(inside, values, np.nan)
        y: np.ndarray
        if step_targets is not None:
            y = step_targets
            mask = np.isfinite(y)
            mask[:, : self.spin_up] = False
        else:
            y = self.inputs.target_at((station * self.inputs.row_steps + end)[:, None] + self.leads)
            mask = np.isfinite(y)
        y = np.where(mask, y, np.float32(0))
        return Batch(x=torch.from_numpy(x), lengths=torch.from_numpy(lengths), y=torch.from_numpy(y),
                     mask=torch.from_numpy(mask), station=torch.from_numpy(station),
                     end=torch.from_numpy(end), valid_steps=int(lengths.sum()))
