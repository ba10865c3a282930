"""Which samples a split holds: (station, end step, length) triples, vectorised and cached on disk.

Sequence mode
    One sample per target time: its input history is the contiguous run of valid inputs ending
    at step ``end``, cut to ``length = min(seq_len, run length so far)`` and kept when
    ``length >= min_len``; its targets are the target at ``end + lead`` for every lead. A sample
    belongs to a split when every target time lies in the split's period and at least one of its
    targets is valid. In the *train* split the history must also lie inside the train period, so
    nothing of an evaluation period (inputs included) feeds training; in evaluation splits the
    history may reach back before the period, as it would in operation.
Per-step mode
    The valid runs inside the split's period are cut into consecutive chunks of ``seq_len`` steps
    (the last chunk of a run is shorter); a chunk is kept when it has at least ``min_len`` steps and
    at least one valid target (at ``t + lead`` for some lead, inside the period) after the spin-up.
    Missing targets are masked later, not dropped. A lagged target in per-step mode is an input that
    may be missing (it has a flag), so it does not cut the runs.
Per-step evaluation
    ``build_sample_index(..., mode="sequence")`` on a per-step config gives the sequence index
    with the config's leads: every input time ``t`` whose targets ``t + lead`` lie in the split,
    predicted from up to ``seq_len`` valid steps ending at ``t`` (read the model's last step).
"""

from __future__ import annotations

import enum
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from hydroseq.config import DataConfig
from hydroseq.dataset.station_data import StationData
from hydroseq.dataset.window import window_start
from hydroseq.errors import InputDataError
from hydroseq.fileio import atomic_path

SplitName = Literal["train", "validation", "test"]
IndexMode = Literal["per_step", "sequence"]
# Bump when the sampling rules change, so that caches built by older code are not reused.
INDEX_RULES_VERSION = 2


class _FromConfig(enum.Enum):
    """The default of ``cache_dir``: the data config's (``None`` is taken, it disables the cache)."""

    CACHE_DIR = enum.auto()


@dataclass(frozen=True, eq=False)
class SampleIndex:
    """The samples of one split.

    Attributes
    ----------
    station
        int64 row of each sample's station in ``StationData``.
    end
        int64 grid index of each sample's last input step.
    length
        int64 number of input steps (the history is ``end - length + 1 .. end``).
    mode
        ``per_step`` (one target per input step) or ``sequence`` (targets at ``end + lead``).
    leads
        Lead times in grid steps (``(0,)`` for a per-step simulation model).
    split
        The split the samples belong to.
    key
        The cache key (hash of the dataset checksum and the config that shapes the index).
    """

    station: np.ndarray
    end: np.ndarray
    length: np.ndarray
    mode: IndexMode
    leads: tuple[int, ...]
    split: SplitName
    key: str

    def __len__(self) -> int:
        return len(self.length)

    def start(self) -> np.ndarray:
        """Grid index of each sample's first input step."""
        return window_start(self.end, self.length)


def build_sample_index(station_data: StationData, data_config: DataConfig, split: SplitName,
                       cache_dir: str | Path | _FromConfig | None = _FromConfig.CACHE_DIR,
                       mode: IndexMode | None = None) -> SampleIndex:
    """Build (or read from the cache) the sample index of ``split``.

    Parameters
    ----------
    station_data
        The loaded dataset.
    data_config
        Lengths, leads, spin-up and periods.
    split
        ``train``, ``validation`` or ``test``.
    cache_dir
        Folder for the cached index (default ``data_config.cache_dir``; ``None`` disables caching).
        The cache file is keyed by the dataset checksum, the stations and every config field that
        changes the index, so a restart reads it instead of recomputing.
    mode
        ``None`` follows ``data_config.mode``; ``"sequence"`` on a per-step config gives the
        per-step evaluation index (see the module docstring).
    """
    mode = mode or data_config.mode
    leads = tuple(data_config.lead_steps)
    if mode == "per_step" and data_config.mode == "sequence":
        raise ValueError("a sequence-mode config has no per-step index")
    lagged = data_config.lagged_target and data_config.mode == "sequence"
    key = _cache_key(station_data, data_config, split, mode, leads, lagged)
    if isinstance(cache_dir, _FromConfig):
        cache_dir = data_config.cache_dir
    cache_file = Path(cache_dir) / f"sample_index_{key[:32]}.npz" if cache_dir is not None else None
    if cache_file is not None and cache_file.exists():
        cached = _read_cache(cache_file, mode, leads, split, key)
        if cached is not None:
            return cached
    station, end, length = _compute(station_data, data_config, split, mode, leads, lagged)
    index = SampleIndex(station=station, end=end, length=length, mode=mode, leads=leads, split=split, key=key)
    if cache_file is not None:
        _write_cache(cache_file, index)
    return index


def require_samples(index: SampleIndex, station_data: StationData, data_config: DataConfig) -> SampleIndex:
    """``index`` if it holds a sample; the one error of an empty split otherwise.

    Raises
    ------
    InputDataError
        If ``index`` is empty: names the dataset, the split and its period (every stage that needs the samples of a
        split, training, validation and scoring, raises this one).
    """
    if len(index):
        return index
    period = getattr(data_config.splits, index.split)
    raise InputDataError(station_data.path, f"the {index.split} period holds no sample: no window of at least min_len "
                                            f"{data_config.min_len} valid steps of the inputs and the target (check "
                                            "data.splits, data.min_len and the gaps of the data)",
                         where=f"{index.split} {period.start}..{period.end}")


def _cache_key(station_data: StationData, data_config: DataConfig, split: str, mode: str,
               leads: tuple[int, ...], lagged: bool) -> str:
    shaping = {
        "rules": INDEX_RULES_VERSION, "checksum": station_data.checksum, "stations": station_data.station_ids,
        "inputs": station_data.dynamic_names, "target": station_data.target_name, "lagged": lagged,
        "splits": data_config.splits.model_dump(mode="json"), "split": split, "mode": mode, "leads": leads,
        "seq_len": data_config.seq_len, "min_len": data_config.min_len,
        "spin_up": data_config.spin_up if mode == "per_step" else 0,
    }
    return hashlib.sha256(json.dumps(shaping, sort_keys=True).encode()).hexdigest()


def _compute(station_data: StationData, data_config: DataConfig, split: str, mode: str,
             leads: tuple[int, ...], lagged: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    period = getattr(data_config.splits, split)
    in_period = station_data.grid.period_mask(station_data.times, period)
    valid_input = np.isfinite(station_data.dynamic).all(axis=-1)
    if lagged:
        valid_input &= np.isfinite(station_data.target)
    valid_target = np.isfinite(station_data.target)
    if mode == "per_step":
        return _per_step_chunks(valid_input & in_period, target_ahead(valid_target & in_period, leads), data_config)
    history_ok = valid_input & in_period if split == "train" else valid_input
    return _sequence_samples(history_ok, valid_target, in_period, leads, data_config)


def target_ahead(valid_target: np.ndarray, leads: tuple[int, ...]) -> np.ndarray:
    """``[station, time]``: True where the target at ``time + lead`` is valid for at least one lead."""
    ahead = np.zeros_like(valid_target)
    n_times = valid_target.shape[1]
    for lead in leads:
        ahead[:, : n_times - lead] |= valid_target[:, lead:]
    return ahead


def run_length_so_far(valid: np.ndarray) -> np.ndarray:
    """Number of consecutive True values ending at each position of the last axis (0 where False)."""
    steps = np.arange(valid.shape[-1])
    last_invalid = np.maximum.accumulate(np.where(valid, -1, steps), axis=-1)
    return np.where(valid, steps - last_invalid, 0)


INDEX_BLOCK_STATIONS = 256


def _sequence_samples(history_ok: np.ndarray, valid_target: np.ndarray, in_period: np.ndarray,
                      leads: tuple[int, ...], data_config: DataConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n_times = history_ok.shape[1]
    max_lead = max(leads)
    ends = np.arange(n_times - max_lead)
    targets_in_period = np.ones(len(ends), dtype=bool)
    any_target = np.zeros((history_ok.shape[0], len(ends)), dtype=bool)
    for lead in leads:
        targets_in_period &= in_period[ends + lead]
        any_target |= valid_target[:, ends + lead]
    stations, samples_end, lengths = [], [], []
    for first in range(0, history_ok.shape[0], INDEX_BLOCK_STATIONS):  # int64 run lengths of a block at a time
        rows = slice(first, first + INDEX_BLOCK_STATIONS)
        length = np.minimum(run_length_so_far(history_ok[rows])[:, : len(ends)], data_config.seq_len)
        keep = (length >= data_config.min_len) & any_target[rows] & targets_in_period
        station, end = np.nonzero(keep)
        stations.append(station + first)
        samples_end.append(end)
        lengths.append(length[station, end])
    return (np.concatenate(stations).astype(np.int64), np.concatenate(samples_end).astype(np.int64),
            np.concatenate(lengths).astype(np.int64))


def _per_step_chunks(valid: np.ndarray, valid_target: np.ndarray,
                     data_config: DataConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n_stations, _n_times = valid.shape
    edges = np.diff(np.pad(valid, ((0, 0), (1, 1))).astype(np.int8), axis=1)
    run_station, run_start = np.nonzero(edges == 1)
    _, run_stop = np.nonzero(edges == -1)
    run_len = run_stop - run_start
    n_chunks = -(-run_len // data_config.seq_len)
    chunk_run = np.repeat(np.arange(len(run_len)), n_chunks)
    chunk_number = np.arange(len(chunk_run)) - np.repeat(np.cumsum(n_chunks) - n_chunks, n_chunks)
    offset = chunk_number * data_config.seq_len
    start = run_start[chunk_run] + offset
    length = np.minimum(data_config.seq_len, run_len[chunk_run] - offset)
    station = run_station[chunk_run]
    end = start + length - 1
    targets_so_far = np.concatenate([np.zeros((n_stations, 1), np.int64),
                                     np.cumsum(valid_target & valid, axis=1)], axis=1)
    first_loss_step = np.minimum(start + data_config.spin_up, end + 1)
    has_loss = targets_so_far[station, end + 1] > targets_so_far[station, first_loss_step]
    keep = (length >= data_config.min_len) & has_loss
    return station[keep].astype(np.int64), end[keep].astype(np.int64), length[keep].astype(np.int64)


def _read_cache(path: Path, mode: IndexMode, leads: tuple[int, ...], split: SplitName, key: str) -> SampleIndex | None:
    try:
        with np.load(path) as stored:
            if str(stored["key"]) != key:
                return None
            return SampleIndex(station=stored["station"], end=stored["end"], length=stored["length"],
                               mode=mode, leads=leads, split=split, key=key)
    except (OSError, ValueError, KeyError):
        return None  # unreadable or partial cache: rebuild it


def _write_cache(path: Path, index: SampleIndex) -> None:
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        np.savez(handle, station=index.station, end=index.end, length=index.length, key=np.array(index.key))
