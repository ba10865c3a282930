"""What the benchmark reports about one tool's run, in one shape for every tool.

Definitions (the same for every tool, so the numbers compare):

- *data loading*: reading the files and building the training samples (and, for hydroseq, the
  scalers and sample index); not the Python/torch import.
- *seconds per epoch*: wall time of one training pass, validation excluded.
- *samples/s*: training samples (sequences) per second of training time.
- *valid timesteps/s*: real, unpadded input time steps pushed through the LSTM per second of
  training time. NeuralHydrology's samples are full ``seq_length`` windows without padding, so it
  is ``samples x seq_length``; hydroseq counts the lengths of its variable-length samples.
- *target timesteps/s*: time steps that carry a loss per second (NeuralHydrology with
  ``predict_last_n = 1``: one per sample; hydroseq per-step mode: every step after the spin-up).
- *time to accuracy*: validation median NSE after each epoch against the cumulative wall time of
  data loading plus training (validation time excluded: how often one validates is a choice).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

import numpy as np

from hydroseq.scoring import metrics


@dataclass(frozen=True)
class EpochPoint:
    """One training epoch of one tool."""

    epoch: int
    train_s: float
    samples: int
    valid_steps: int
    target_steps: int
    validation_s: float
    validation_median_nse: float


@dataclass(frozen=True)
class TestScores:
    """Test-period scores over basins (each basin scored on its own series)."""

    median_nse: float
    mean_nse: float
    median_kge: float
    mean_kge: float
    n_basins: int


@dataclass(frozen=True)
class ToolRun:
    """Everything reported about one tool's training run."""

    name: str
    data_loading_s: float
    epochs: tuple[EpochPoint, ...]
    peak_rss_mib: float
    test: TestScores
    test_epoch: int
    wall_s: float
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def seconds_per_epoch(self) -> float:
        """Median training time of one epoch."""
        return statistics.median(e.train_s for e in self.epochs) if self.epochs else math.nan

    @property
    def min_seconds_per_epoch(self) -> float:
        """Fastest epoch."""
        return min(e.train_s for e in self.epochs) if self.epochs else math.nan

    def _rate(self, attribute: str) -> float:
        seconds = sum(e.train_s for e in self.epochs)
        return sum(getattr(e, attribute) for e in self.epochs) / seconds if seconds > 0 else math.nan

    @property
    def samples_per_s(self) -> float:
        """Training samples per second over all epochs."""
        return self._rate("samples")

    @property
    def valid_steps_per_s(self) -> float:
        """Unpadded input steps per second over all epochs."""
        return self._rate("valid_steps")

    @property
    def target_steps_per_s(self) -> float:
        """Loss-carrying steps per second over all epochs."""
        return self._rate("target_steps")

    def time_to_accuracy(self) -> list[tuple[float, float]]:
        """(cumulative data loading + training seconds, validation median NSE) after each epoch."""
        elapsed, curve = self.data_loading_s, []
        for point in self.epochs:
            elapsed += point.train_s
            curve.append((elapsed, point.validation_median_nse))
        return curve

    def best_validation_nse(self) -> float:
        """The best validation median NSE of the run (NaN if none is finite)."""
        finite = [nse for _, nse in self.time_to_accuracy() if math.isfinite(nse)]
        return max(finite) if finite else math.nan

    def seconds_to_reach(self, level: float) -> float:
        """Cumulative seconds until validation median NSE first reaches ``level`` (inf if never)."""
        for seconds, nse in self.time_to_accuracy():
            if math.isfinite(nse) and nse >= level:
                return seconds
        return math.inf


def score_series(obs: np.ndarray, sim: np.ndarray) -> TestScores:
    """NSE and KGE of every basin (``obs``/``sim`` are ``[basin, time]``), median and mean over basins."""
    nse = np.array([metrics.nse(o, s) for o, s in zip(obs, sim, strict=True)])
    kge = np.array([metrics.kge(o, s).kge for o, s in zip(obs, sim, strict=True)])
    return TestScores(median_nse=_nan_stat(np.median, nse), mean_nse=_nan_stat(np.mean, nse),
                      median_kge=_nan_stat(np.median, kge), mean_kge=_nan_stat(np.mean, kge),
                      n_basins=int(np.isfinite(nse).sum()))


def _nan_stat(function, values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return float(function(finite)) if finite.size else math.nan


@dataclass(frozen=True)
class PaddingRun:
    """Throughput of one batching strategy (repeated passes over the same timed batches).

    ``valid_steps`` are the unpadded steps of the timed batches, ``seconds`` one pass over them
    per repeat. ``epoch_padding`` is the share of computed step slots that are padding over a whole
    epoch (zero for the packed path, which skips them; its batches are still padded in memory).
    """

    strategy: str
    valid_steps: int
    epoch_slots: int
    seconds: tuple[float, ...]
    epoch_padding: float = math.nan

    @property
    def padding_fraction(self) -> float:
        """Padded slots over all computed slots of one epoch."""
        return self.epoch_padding

    @property
    def best_valid_steps_per_s(self) -> float:
        """Valid steps per second of the fastest repeat."""
        return self.valid_steps / min(self.seconds)

    @property
    def median_valid_steps_per_s(self) -> float:
        """Valid steps per second of the median repeat."""
        return self.valid_steps / statistics.median(self.seconds)


@dataclass(frozen=True)
class OverheadRun:
    """A full training step against the bare LSTM forward/backward on the same batches.

    ``full_s`` covers everything a training step does (fetching and assembling the batch,
    moving it to the device, forward, loss, backward, optimiser step); ``bare_s`` only the model
    forward, loss and backward on batches prepared beforehand. Both are min/median over repeats.
    """

    mode: str
    batches: int
    full_s: tuple[float, ...]
    bare_s: tuple[float, ...]

    @property
    def overhead_fraction(self) -> float:
        """Share of the median full step spent outside the bare forward/backward."""
        full, bare = statistics.median(self.full_s), statistics.median(self.bare_s)
        return max(0.0, 1.0 - bare / full) if full > 0 else math.nan
