"""The model's inputs for every station and step, scaled once and shared by every split.

Memory (measured with a memory profiler on 992 stations x 34 years, ``docs/experiments.md``): the
training peak was 20x the ingested variables because every split's dataset built its own feature
array, with the static attributes repeated on every step (13 of 18 features), from float64
temporaries of the whole array. Here the per-step features are built once per station block into
one float32 array, the static attributes stay one row per station (the batch assembly writes them
on each step), and each split only masks what it may not see.

With ``storage="disk"`` the per-step features and the target go to a file in the cache folder,
written block by block, and each sample is read back with one positioned read: the process then
holds none of the per-step arrays (the operating system's page cache serves repeated reads).
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from hydroseq.dataset.features import FeatureLayout, step_features
from hydroseq.dataset.scalers import Scalers
from hydroseq.dataset.station_data import StationData

logger = logging.getLogger(__name__)

Storage = Literal["memory", "disk"]
STATION_BLOCK = 64  # stations scaled at a time: bounds the temporaries at 64 stations' worth


class _ScaledFile:
    """The disk storage: features ``[station * n_times, F]`` then the padded target, float32.

    Read with positioned reads on a descriptor opened once per process (DataLoader workers are
    forked); the file is removed when the object is collected or the process ends.
    """

    def __init__(self, folder: str | Path | None) -> None:
        directory = Path(folder) if folder is not None else None
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)
        descriptor, name = tempfile.mkstemp(prefix="scaled_inputs_", suffix=".f32", dir=directory)
        self.path = Path(name)
        self._descriptor, self._pid = descriptor, os.getpid()
        weakref.finalize(self, _remove, self.path, descriptor)

    def write(self, offset: int, values: np.ndarray) -> None:
        os.pwrite(self._open(), np.ascontiguousarray(values, np.float32).tobytes(), offset)

    def read(self, offset: int, count: int) -> np.ndarray:
        data = os.pread(self._open(), count * 4, offset)
        return np.frombuffer(data, dtype=np.float32)

    def _open(self) -> int:
        if self._pid != os.getpid():
            self._descriptor, self._pid = os.open(self.path, os.O_RDONLY), os.getpid()
        return self._descriptor


def _remove(path: Path, descriptor: int) -> None:
    with contextlib.suppress(OSError):
        os.close(descriptor)
    path.unlink(missing_ok=True)


@dataclass(frozen=True, eq=False)
class ScaledInputs:
    """Scaled per-step features, static rows and target of one dataset under one set of scalers.

    Attributes
    ----------
    n_stations, n_times, n_step_features
        Stations, grid steps per station and features per step (static attributes excluded).
    static
        float32 ``[station, static feature]``.
    row_steps
        Steps per station row of the target: ``n_times`` plus ``max_lead`` NaN steps, so that
        ``t + lead`` never reads the next station.
    """

    n_stations: int
    n_times: int
    n_step_features: int
    static: np.ndarray
    row_steps: int
    _features: np.ndarray | None = None
    _target: np.ndarray | None = None
    _file: _ScaledFile | None = None

    @property
    def storage(self) -> Storage:
        """Where the per-step arrays live."""
        return "memory" if self._file is None else "disk"

    def features(self, first_row: int, length: int) -> np.ndarray:
        """``[length, n_step_features]`` from flat row ``first_row`` (``station * n_times + step``)."""
        if self._features is not None:
            return self._features[first_row: first_row + length]
        assert self._file is not None
        values = self._file.read(first_row * self.n_step_features * 4, length * self.n_step_features)
        return values.reshape(length, self.n_step_features)

    def target(self, first: int, length: int) -> np.ndarray:
        """``[length]`` scaled target from flat position ``first`` (``station * row_steps + step``)."""
        if self._target is not None:
            return self._target[first: first + length]
        assert self._file is not None
        return self._file.read((self._target_offset + first) * 4, length)

    def target_at(self, positions: np.ndarray) -> np.ndarray:
        """Scaled target at flat positions (any shape)."""
        if self._target is not None:
            return self._target[positions]
        flat = [self.target(int(position), 1)[0] for position in np.ravel(positions)]
        return np.array(flat, np.float32).reshape(np.shape(positions))

    @property
    def _target_offset(self) -> int:
        return self.n_stations * self.n_times * self.n_step_features


def build_scaled_inputs(data: StationData, scalers: Scalers, layout: FeatureLayout, max_lead: int,
                        storage: Storage = "memory", folder: str | Path | None = None) -> ScaledInputs:
    """Scale ``data`` for ``layout`` one block of stations at a time.

    Parameters
    ----------
    max_lead
        NaN steps appended to each station's target row.
    storage
        ``"memory"``: numpy arrays; ``"disk"``: one temporary file in ``folder`` (removed with the
        object), read back sample by sample.
    """
    n_step = len(layout.names) - len(layout.static_names)
    row_steps = data.n_times + max_lead
    static = scalers.transform_static(data.static).astype(np.float32)
    in_memory = storage == "memory"
    features = np.zeros((data.n_stations * data.n_times, n_step), np.float32) if in_memory else None
    target = np.full(data.n_stations * row_steps, np.nan, np.float32) if in_memory else None
    disk = None if in_memory else _ScaledFile(folder)
    result = ScaledInputs(data.n_stations, data.n_times, n_step, static, row_steps, features, target, disk)
    for start in range(0, data.n_stations, STATION_BLOCK):
        stop = min(start + STATION_BLOCK, data.n_stations)
        block, _ = step_features(data, scalers, layout, slice(start, stop))
        padded = np.full((stop - start, row_steps), np.nan, np.float32)
        padded[:, : data.n_times] = scalers.transform_target(data.target[start:stop],
                                                             list(data.station_ids[start:stop]))
        if features is not None and target is not None:
            features[start * data.n_times: stop * data.n_times] = block.reshape(-1, n_step)
            target[start * row_steps: stop * row_steps] = padded.reshape(-1)
        else:
            assert disk is not None
            disk.write(start * data.n_times * n_step * 4, block)
            disk.write((result._target_offset + start * row_steps) * 4, padded)
    return result


_last: list[tuple[StationData, Scalers, FeatureLayout, int, ScaledInputs]] = []


def shared_scaled_inputs(data: StationData, scalers: Scalers, layout: FeatureLayout, max_lead: int,
                         storage: Storage = "memory", folder: str | Path | None = None,
                         memory_budget_gb: float | None = None) -> ScaledInputs:
    """:func:`build_scaled_inputs`, reused while the same ``data`` and ``scalers`` objects are asked for.

    The training set and every validation pass of a run (and the final report's splits) then share
    one copy, wherever it was put. Only the latest is kept, so a new dataset or new scalers free the
    previous arrays. ``memory_budget_gb``: memory storage turns to disk when the resident memory of
    the process plus the arrays would exceed it.
    """
    for cached_data, cached_scalers, cached_layout, cached_lead, inputs in _last:
        if cached_data is data and cached_scalers is scalers and cached_layout == layout and cached_lead == max_lead:
            return inputs
    _last.clear()
    if storage == "memory" and memory_budget_gb is not None:
        resident, arrays = resident_bytes(), scaled_bytes(data, layout, max_lead)
        if resident + arrays > memory_budget_gb * 1e9:
            logger.info("scaled inputs on disk: %.2f GB resident plus %.2f GB of arrays exceed the %.2f GB budget",
                        resident / 1e9, arrays / 1e9, memory_budget_gb)
            storage = "disk"
    inputs = build_scaled_inputs(data, scalers, layout, max_lead, storage, folder)
    _last.append((data, scalers, layout, max_lead, inputs))
    return inputs


def scaled_bytes(data: StationData, layout: FeatureLayout, max_lead: int) -> int:
    """Bytes of the per-step features and padded target that memory storage holds."""
    n_step = len(layout.names) - len(layout.static_names)
    return 4 * data.n_stations * (data.n_times * n_step + data.n_times + max_lead)


def resident_bytes() -> int:
    """The process's resident memory now (Linux ``/proc``; elsewhere its peak so far)."""
    try:
        return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
