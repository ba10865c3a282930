"""The batch object every later stage receives (re-exported as :class:`hydroseq.batching.Batch`)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch


@dataclass(frozen=True)
class Batch:
    """A padded batch, sorted by length descending (ready for ``pack_padded_sequence(enforce_sorted=True)``).

    Attributes
    ----------
    x
        float32 ``[B, T, F]``; steps at and after ``lengths[b]`` are zero.
    lengths
        int64 ``[B]``, always on the CPU (packing needs them there), descending.
    y
        float32 scaled target: ``[B, n_leads]`` in sequence mode, ``[B, T, n_leads]`` in per-step
        mode (the target at ``t + lead`` for input step ``t``); zero where ``mask`` is False.
    mask
        bool, same shape as ``y``: True where the target is valid and carries a loss (per-step:
        inside the length and after the spin-up).
    station
        int64 ``[B]`` row of each sample's station in the ``StationData``.
    end
        int64 ``[B]`` grid index of each sample's last input step.
    valid_steps
        Sum of ``lengths`` (real, unpadded input steps in the batch).
    """

    x: torch.Tensor
    lengths: torch.Tensor
    y: torch.Tensor
    mask: torch.Tensor
    station: torch.Tensor
    end: torch.Tensor
    valid_steps: int

    def __len__(self) -> int:
        return int(self.lengths.shape[0])

    @property
    def padded_steps(self) -> int:
        """Number of input step slots, ``B * T`` (valid plus padding)."""
        return int(self.x.shape[0] * self.x.shape[1])

    def to(self, device: torch.device | str, non_blocking: bool = True) -> Batch:
        """Move the tensors to ``device``; ``lengths`` stays on the CPU."""
        return replace(self, x=self.x.to(device, non_blocking=non_blocking),
                       y=self.y.to(device, non_blocking=non_blocking),
                       mask=self.mask.to(device, non_blocking=non_blocking),
                       station=self.station.to(device, non_blocking=non_blocking),
                       end=self.end.to(device, non_blocking=non_blocking))

    def pin_memory(self) -> Batch:
        """Page-locked copies for fast host-to-GPU transfer (the DataLoader calls this)."""
        return replace(self, x=self.x.pin_memory(), y=self.y.pin_memory(), mask=self.mask.pin_memory(),
                       station=self.station.pin_memory(), end=self.end.pin_memory())
