"""Predictions of a trained model over one split, back in the target's units, on the station x time grid.

Per-step models are evaluated on windows of ``seq_len`` steps (cut where inputs are missing, as in
training): each window predicts its last ``stride`` steps, so every prediction has at least
``seq_len - stride + 1`` steps of history (or the whole valid history, when that is shorter) and the
cost is about ``seq_len / stride`` forward steps per predicted step. ``stride = 1`` reads every
target from its own full window (NeuralHydrology's way; exact but ``seq_len`` times the cost).
Sequence models predict ``target(end + lead)`` for every sample of the split. Per-step forecast
models predict ``target(t + lead)`` at every step ``t``; both are stored at the valid time ``t + lead``.

``hide_last`` scores a model with a lagged target as if the gauge were late: the observed target of
the last ``k`` steps up to each issue step reads "not observed" (every window then predicts only its
last step, stride 1); ``ALWAYS_HIDDEN`` hides it everywhere (the model as a simulation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from hydroseq.config import DataConfig, TrainConfig
from hydroseq.dataset import (
    SampleIndex,
    Scalers,
    SequenceDataset,
    SplitName,
    StationData,
    build_sample_index,
    require_samples,
)
from hydroseq.model import TrainedModel
from hydroseq.training.augment import hide_observed_steps

ALWAYS_HIDDEN = -1
# Input steps per inference batch: no gradients are kept, so evaluation batches can be much larger
# than training ones (16 x 365 steps in the forecast config would spend the time in per-batch
# overhead). 2**17 steps (359 windows of 365) predicted the 992-station validation split as fast as
# 1,024 windows, bit for bit, and the padded LSTM's activations of a batch went from 485 to 170 MiB.
EVAL_BATCH_STEPS = 2**17


def eval_batch_size(config: TrainConfig) -> int:
    """Windows per prediction batch for a model trained as ``config`` says: :data:`EVAL_BATCH_STEPS` LSTM steps,
    counting a forecast roll-out's leads at every step (the week-ahead recipe's peak memory on 433 basins went
    from 2.94-2.98 to 2.82 GB), and never fewer than the training batch."""
    rollout = config.data.forecast_horizon if config.model.forecast_rollout else 0
    return max(config.batching.batch_size, EVAL_BATCH_STEPS // (config.data.seq_len * (1 + rollout)))


@dataclass(frozen=True)
class SplitPrediction:
    """Observed and simulated target of one split, in the target's units.

    Attributes
    ----------
    sim
        float64 ``[lead, station, time in split]``; NaN where nothing was predicted.
    obs
        float64 ``[station, time in split]``.
    times
        ``[time in split]`` grid labels (UTC, interval end).
    in_split
        bool ``[time]`` over the whole grid: which steps the split holds.
    leads
        Lead of each row of ``sim`` (``(0,)`` for per-step models).
    sim_scaled, obs_scaled
        The same in the scaled units the training loss sees.
    quantiles, quantile_levels
        Quantile models: float64 ``[lead, station, time in split, level]`` in the target's units,
        never negative (a discharge cannot be), and the levels; ``sim`` is then the median.
    """

    sim: np.ndarray
    obs: np.ndarray
    times: np.ndarray
    in_split: np.ndarray
    leads: tuple[int, ...]
    sim_scaled: np.ndarray
    obs_scaled: np.ndarray
    quantiles: np.ndarray | None = None
    quantile_levels: tuple[float, ...] | None = None

    @property
    def first_step(self) -> int:
        """Grid index of the split's first step (the split's steps are contiguous)."""
        return int(np.argmax(self.in_split))


def anchor_windows(index: SampleIndex, stride: int) -> SampleIndex:
    """Keep every ``stride``-th sample of each valid run, plus the last sample of every run.

    ``index`` is a lead-0 sequence index (one sample per target step, ordered by station and end).
    Every dropped sample's step lies inside the window of the next kept sample of its own run.
    """
    order = np.lexsort((index.end, index.station))
    station, end, length = index.station[order], index.end[order], index.length[order]
    run_break = np.ones(len(end), dtype=bool)
    run_break[:-1] = (station[1:] != station[:-1]) | (end[1:] != end[:-1] + 1)
    run_id = np.concatenate([[0], np.cumsum(run_break[:-1])])
    keep = _position_from_group_end(run_id) % stride == 0
    return SampleIndex(station=station[keep], end=end[keep], length=length[keep], mode=index.mode,
                       leads=index.leads, split=index.split, key=f"{index.key}-anchors{stride}")


def _position_from_group_end(group: np.ndarray) -> np.ndarray:
    """For sorted group labels: 0 for the last element of each group, 1 for the one before, ..."""
    positions = np.arange(len(group))
    last_of_group = np.searchsorted(group, group, side="right") - 1
    return last_of_group - positions


@torch.inference_mode()
def predict_split(model: TrainedModel, station_data: StationData, scalers: Scalers, data_config: DataConfig,
                  split: SplitName, device: torch.device, batch_size: int = 512, stride: int | None = None,
                  show_progress: bool = False, hide_last: int = 0) -> SplitPrediction:
    """Run ``model`` over ``split`` and return observed and simulated target on the grid.

    Parameters
    ----------
    stride
        Per-step models only: steps predicted per window (default ``seq_len // 2``, see the
        module docstring).
    hide_last
        Hide the observed-target input for the last ``k`` steps up to each issue step (0: hide
        nothing; :data:`ALWAYS_HIDDEN`: everywhere). Per-step models with a lagged target only.

    Raises
    ------
    InputDataError
        If ``split`` holds no sample (:func:`hydroseq.dataset.require_samples`).
    """
    model.eval()
    per_step = data_config.mode == "per_step"
    index = require_samples(build_sample_index(station_data, data_config, split, mode="sequence"), station_data,
                            data_config)
    leads = index.leads
    stride = min(stride or max(1, data_config.seq_len // 2), data_config.seq_len)
    if hide_last > 0:
        stride = 1
    # Predictions are held for the split's steps only (the whole grid is 3-8x longer than a split).
    in_split = station_data.grid.period_mask(station_data.times, getattr(data_config.splits, split))
    first_step = int(np.argmax(in_split))
    n_split = int(in_split.sum())
    wanted = np.zeros((len(leads), station_data.n_stations, n_split), dtype=bool)
    for column, lead in enumerate(leads):
        wanted[column, index.station, index.end + lead - first_step] = True
    if per_step:
        index = anchor_windows(index, stride)
    dataset = SequenceDataset(station_data, scalers, index, data_config)
    if hide_last and dataset.layout.flag_column is None:
        raise ValueError("hide_last needs a per-step model with a lagged target")
    levels = model.quantiles
    per_output = (len(levels),) if levels else ()
    scaled = np.full((len(leads), station_data.n_stations, n_split, *per_output), np.nan)
    batches = range(0, len(index), batch_size)
    if show_progress:
        from tqdm.auto import tqdm
        batches = tqdm(batches, desc=f"predict {split}", unit="batch", leave=False, disable=None)
    for first in batches:
        batch = dataset.gather(np.arange(first, min(first + batch_size, len(index))))
        x = _hide_last_steps(batch.x, batch.lengths, dataset, hide_last) if hide_last else batch.x
        last_only = per_step and stride == 1  # one output per window: the heads run at its last step alone
        out = model(x.to(device), batch.lengths, last_only=last_only).float().cpu().numpy()
        station, end, lengths = batch.station.numpy(), batch.end.numpy(), batch.lengths.numpy()
        for column, lead in enumerate(leads):
            if per_step and not last_only:
                _scatter_per_step(scaled[column], out[:, :, column], station, end + lead - first_step, lengths,
                                  stride)
            else:
                scaled[column, station, end + lead - first_step] = out[:, column]
    scaled[~wanted] = np.nan  # steps the index does not hold (too little history, no target)
    station_ids = list(station_data.station_ids)
    sim_scaled = scaled
    sim = np.stack([scalers.inverse_target(sim_scaled[i], station_ids) for i in range(len(leads))]).astype(np.float64)
    quantiles = None
    if levels:
        quantiles = np.maximum(sim, 0.0)
        sim, sim_scaled = quantiles[..., levels.index(0.5)], sim_scaled[..., levels.index(0.5)]
    obs = station_data.target[:, in_split]
    return SplitPrediction(sim=sim, obs=obs.astype(np.float64),
                           times=station_data.times[in_split], in_split=in_split, leads=leads,
                           sim_scaled=sim_scaled,
                           obs_scaled=scalers.transform_target(obs, station_ids).astype(np.float64),
                           quantiles=quantiles, quantile_levels=levels)


def _hide_last_steps(x: torch.Tensor, lengths: torch.Tensor, dataset: SequenceDataset, k: int) -> torch.Tensor:
    """``x`` with the observed target hidden on the last ``k`` valid steps of each row (all if k < 0)."""
    position = torch.arange(x.shape[1])[None, :]
    hidden = position >= (lengths[:, None] - k) if k > 0 else torch.ones_like(position, dtype=torch.bool)
    return hide_observed_steps(x, dataset.layout, hidden.expand(x.shape[0], -1))


def _scatter_per_step(grid: np.ndarray, out: np.ndarray, station: np.ndarray, end: np.ndarray,
                      lengths: np.ndarray, stride: int) -> None:
    """Write the last ``min(stride, length)`` outputs of each window onto ``grid[station, time]``.

    ``end`` is the ``grid`` column the window's last output belongs to (its last input step + lead);
    outputs before the grid's first column are dropped.
    """
    back = np.arange(stride)
    rows = np.repeat(np.arange(len(end)), stride)
    offsets = np.tile(back, len(end))
    keep = (offsets < lengths[rows]) & (end[rows] - offsets >= 0)
    rows, offsets = rows[keep], offsets[keep]
    grid[station[rows], end[rows] - offsets] = out[rows, lengths[rows] - 1 - offsets]
