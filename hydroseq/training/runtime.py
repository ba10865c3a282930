"""Small decisions the training loop delegates: device, threads, LSTM path, LR schedule, early stopping."""

from __future__ import annotations

import math
import os
import resource
import sys
from collections.abc import Callable
from dataclasses import dataclass

import torch

from hydroseq.config import TrainingConfig
from hydroseq.errors import ConfigError
from hydroseq.model import LSTMPath


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask, not the machine's total)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def set_threads(config: TrainingConfig, processes_on_this_node: int = 1) -> int:
    """Set torch's intra-op threads, the one place that decides them: ``training.threads``, else this process's
    share of the available cores (``cores // processes_on_this_node``: over-subscription is very slow)."""
    threads = config.threads or max(1, available_cores() // processes_on_this_node)
    torch.set_num_threads(threads)
    return threads


def resolve_device(name: str) -> torch.device:
    """``auto`` is CUDA when available, else the CPU; an explicit CUDA device must exist."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise ConfigError(f"training.device: {name!r} is not a device (use auto, cpu, cuda or cuda:N)") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"training.device is {name!r} but CUDA is not available on this machine")
    return device


def resolve_lstm_path(config: TrainingConfig, device: torch.device) -> LSTMPath:
    """``auto``: packed (cuDNN) on CUDA, padded on the CPU (packed CPU backward is quadratic in length)."""
    if config.lstm_path != "auto":
        return config.lstm_path
    return "packed" if device.type == "cuda" else "padded"


def check_bf16(config: TrainingConfig, device: torch.device) -> None:
    """Raise :class:`ConfigError` when ``training.bf16`` is set but this device cannot run an LSTM in
    bfloat16 (on some CPUs oneDNN has no bfloat16 LSTM kernel and fails at the first forward)."""
    if not config.bf16:
        return
    try:
        with torch.autocast(device.type, dtype=torch.bfloat16):
            torch.nn.LSTM(2, 2, batch_first=True).to(device)(torch.zeros(1, 2, 2, device=device))
    except RuntimeError as error:
        raise ConfigError(f"training.bf16: this {device.type} cannot run the LSTM in bfloat16 "
                          f"({str(error).splitlines()[0]}); set training.bf16: false") from None


def lr_factor(config: TrainingConfig) -> Callable[[int], float]:
    """Multiplier of the base learning rate for each epoch (for ``torch.optim.lr_scheduler.LambdaLR``).

    ``constant``: 1. ``cosine``: from 1 down to 0.01 over ``epochs``. ``step``: 1, then 0.1 from half
    of the epochs and 0.01 from three quarters. The factor depends only on the epoch number and the
    configured total, so a resumed run follows the schedule of its (possibly extended) config.
    """
    epochs = config.epochs
    if config.lr_schedule == "cosine":
        return lambda epoch: 0.01 + 0.99 * 0.5 * (1 + math.cos(math.pi * min(epoch, epochs) / epochs))
    if config.lr_schedule == "step":
        return lambda epoch: 1.0 if epoch < epochs / 2 else (0.1 if epoch < 3 * epochs / 4 else 0.01)
    return lambda epoch: 1.0


@dataclass
class EarlyStopping:
    """Track the best validation median NSE; stop after ``patience`` epochs without improvement."""

    patience: int | None
    best_nse: float = -math.inf
    best_epoch: int = -1
    epochs_without_improvement: int = 0

    def update(self, nse: float, epoch: int) -> bool:
        """Record epoch ``epoch``'s NSE; True when it is the best so far (NaN never is)."""
        if math.isfinite(nse) and nse > self.best_nse:
            self.best_nse, self.best_epoch, self.epochs_without_improvement = nse, epoch, 0
            return True
        self.epochs_without_improvement += 1
        return False

    @property
    def should_stop(self) -> bool:
        """True when ``patience`` epochs in a row brought no improvement."""
        return self.patience is not None and self.epochs_without_improvement >= self.patience


def peak_memory_mb(device: torch.device) -> float:
    """Peak memory so far: CUDA allocations on a GPU, else the process's peak resident set (MiB)."""
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10
