"""DistributedDataParallel for ``hydroseq train``: process group, device, model wrapper, rank-0 duties.

Under ``torchrun`` (which sets ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR`` and
``MASTER_PORT``) :func:`setup` joins the process group: NCCL when training on CUDA (one GPU per
process, ``cuda:LOCAL_RANK``), gloo on the CPU (each process gets an equal share of the cores).
Without those variables it returns a single-process context whose methods do nothing, so the
training loop has one code path. ``hydroseq train --nproc N`` (:func:`launch`) runs ``torchrun
--standalone`` on this machine for the user.

What the loop gets from the :class:`DistributedContext`: the sampler's ``num_replicas``/``rank``
(every rank the same number of batches per epoch), the model wrapped in DDP (gradients averaged over
ranks after each backward), ``is_main`` (only rank 0 talks to MLflow and writes checkpoints),
epoch metrics combined over ranks, and every rank's generator states for an exact resume.
"""

from __future__ import annotations

import atexit
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from hydroseq.config import TrainConfig, TrainingConfig, dump_config
from hydroseq.errors import ConfigError, ProcessFailedError
from hydroseq.training.runtime import resolve_device, set_threads

if TYPE_CHECKING:
    from hydroseq.training.checkpoint import Checkpoint

T = TypeVar("T")
LAUNCHER_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
# Epoch metrics that add up over ranks (throughputs), or whose worst rank counts (time, memory);
# the training loss and padding are averaged; everything else (validation, learning rate) is rank 0's.
_SUMMED = ("valid_timesteps_per_s", "samples_per_s")
_MAXIMUM = ("epoch_seconds", "val_seconds", "peak_memory_mb")
_AVERAGED = ("train_loss", "padding_ratio")


@dataclass(frozen=True)
class DistributedContext:
    """The place of this process in the job: ``rank`` of ``world_size``, ``local_rank`` on its node, its device."""

    rank: int
    world_size: int
    local_rank: int
    local_world_size: int
    device: torch.device
    active: bool
    owns_group: bool = False

    @property
    def is_main(self) -> bool:
        """True on rank 0, the only rank that logs to MLflow and writes checkpoints."""
        return self.rank == 0

    def wrap(self, model: torch.nn.Module) -> torch.nn.Module:
        """``model`` in :class:`DistributedDataParallel` (which copies rank 0's weights to every rank);
        unchanged in a single process. Keep the unwrapped model for state dicts and evaluation."""
        if not self.active:
            return model
        device_ids = [self.device.index] if self.device.type == "cuda" else None
        return DistributedDataParallel(model, device_ids=device_ids)

    def from_main(self, compute: Callable[[], T]) -> T:
        """Run ``compute`` on rank 0 only and give its (picklable) result to every rank."""
        value = [compute() if self.is_main else None]
        if self.active:
            dist.broadcast_object_list(value, src=0)
        return cast(T, value[0])  # every rank now holds rank 0's result

    def all_gather(self, value: T) -> list[T]:
        """Every rank's ``value``, in rank order (a one-element list in a single process)."""
        if not self.active:
            return [value]
        gathered: list[Any] = [None] * self.world_size
        dist.all_gather_object(gathered, value)
        return gathered

    def combine_metrics(self, metrics: dict[str, float]) -> dict[str, float]:
        """One epoch's metrics for the whole job: throughputs summed over ranks, time and memory of
        the slowest/largest rank, training loss and padding averaged (ranks run the same number of
        batches, so this is the mean batch loss of the epoch), the rest taken from rank 0."""
        if not self.active:
            return metrics
        ranks = self.all_gather(metrics)
        combined = dict(ranks[0])
        for key in metrics:
            values = [rank_metrics[key] for rank_metrics in ranks]
            if key in _SUMMED:
                combined[key] = float(sum(values))
            elif key in _MAXIMUM:
                combined[key] = float(max(values))
            elif key in _AVERAGED:
                combined[key] = float(sum(values) / len(values))
        return combined

    def finish(self) -> None:
        """After the last epoch: all ranks meet, then leave the process group that :func:`setup`
        created. Left to interpreter exit, gloo's worker threads could outlive Python and abort a
        rank (SIGABRT) while rank 0 was still logging the model."""
        if not self.active:
            return
        dist.barrier()
        if self.owns_group:
            teardown()

    def own_rng_state(self, checkpoint: Checkpoint) -> dict[str, Any]:
        """The generator states of this rank from a checkpoint: its entry of ``rng_by_rank`` when the
        checkpoint was written by a job of the same size, else rank 0's ``rng``."""
        by_rank = checkpoint.rng_by_rank
        if by_rank and len(by_rank) == self.world_size:
            return by_rank[self.rank]
        return checkpoint.rng


def launched_by_torchrun() -> bool:
    """True when the launcher variables are set (``torchrun``, ``torch.distributed.run``, SLURM scripts)."""
    return all(name in os.environ for name in LAUNCHER_VARIABLES)


def setup(config: TrainingConfig) -> DistributedContext:
    """Join the process group when launched by ``torchrun``; otherwise a single-process context.

    The device is ``config.device`` resolved as usual; under torchrun a CUDA device becomes
    ``cuda:LOCAL_RANK`` and the backend NCCL, a CPU device uses gloo. With ``training.threads``
    unset, each CPU process gets ``cores // processes on this node`` torch threads.

    Raises
    ------
    ConfigError
        CUDA training with more processes on this node than visible GPUs.
    """
    device = resolve_device(config.device)
    if not launched_by_torchrun():
        return DistributedContext(0, 1, 0, 1, device, active=False)
    rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    local_world_size = int(os.environ.get("LOCAL_WORLD_SIZE", world_size))
    if device.type == "cuda":
        if local_world_size > torch.cuda.device_count():
            raise ConfigError(f"{local_world_size} processes on this node but {torch.cuda.device_count()} GPU(s) "
                              "are visible: use --nproc_per_node <= the number of GPUs")
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
    else:
        set_threads(config, local_world_size)
    owns_group = not dist.is_initialized()
    if owns_group:
        dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo",
                                device_id=device if device.type == "cuda" else None)
        atexit.register(teardown)  # a failed run still leaves the group before the interpreter shuts down
    return DistributedContext(rank, world_size, local_rank, local_world_size, device, active=True,
                              owns_group=owns_group)


def teardown() -> None:
    """Leave the process group (safe to call more than once or without one)."""
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


@dataclass(frozen=True)
class LaunchOptions:
    """How :func:`launch` starts the training processes: ``nproc`` of them, and what each trains.

    ``data_path``, ``resume`` and ``tracking_uri`` are those of :func:`hydroseq.training.train`;
    ``cli_options`` are passed on to every process's ``hydroseq train`` (``--quiet``, ``--json``, ...).
    """

    nproc: int
    data_path: Path | None = None
    resume: bool = False
    tracking_uri: str | None = None
    cli_options: tuple[str, ...] = ()


def torchrun_arguments(config_file: Path, options: LaunchOptions) -> list[str]:
    """The ``torchrun`` command line (without the program name) that trains the config in ``config_file``."""
    command = ["--standalone", f"--nproc_per_node={options.nproc}", "-m", "hydroseq", "train",
               *options.cli_options, "--config", str(config_file)]
    if options.data_path is not None:
        command += ["--data", str(options.data_path)]
    if options.resume:
        command.append("--resume")
    if options.tracking_uri:
        command += ["--tracking-uri", options.tracking_uri]
    return command


def launch(config: TrainConfig, options: LaunchOptions) -> None:
    """Train ``config`` with ``options.nproc`` DDP processes on this machine (``hydroseq train --nproc N``).

    Runs ``torchrun --standalone --nproc_per_node N -m hydroseq train ...``; every process reads
    ``config`` from a temporary YAML file, removed when they have finished. For several machines
    run ``torchrun`` yourself (see docs/scale-out.md).

    Raises
    ------
    ConfigError
        Called inside a job that torchrun already started.
    ProcessFailedError
        A training process failed (its rank and exit code are named, its message is above);
        the CLI exits with that process's status.
    """
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.run import get_args_parser, run

    if launched_by_torchrun():
        raise ConfigError("--nproc starts its own processes: leave it out when running under torchrun")
    sys.stdout.flush()
    with tempfile.TemporaryDirectory(prefix="hydroseq-launch-") as folder:
        config_file = Path(folder) / "train.yaml"
        config_file.write_text(dump_config(config))
        try:
            run(get_args_parser().parse_args(torchrun_arguments(config_file, options)))
        except ChildFailedError as error:
            failures = ", ".join(f"rank {rank} exit code {failure.exitcode}"
                                 for rank, failure in error.failures.items())
            first = error.failures[min(error.failures)]
            raise ProcessFailedError(f"distributed training failed ({failures})", first.exitcode) from None


__all__ = ["DistributedContext", "LaunchOptions", "launch", "launched_by_torchrun", "setup", "teardown",
           "torchrun_arguments"]
