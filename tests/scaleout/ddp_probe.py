"""Test helper (not a test): run ``hydroseq.training.train`` and record, in ``<out>/rank<R>.json``,
a SHA-256 of all weights after every optimiser step, and the loss and valid-step count of every
step; rank 0 also keeps a copy of the checkpoint written after the first epoch
(``<out>/last_after_epoch_1.pt``), the state a run killed at that moment would leave behind.

Run it under torchrun for a DDP job (``python -m torch.distributed.run --nproc_per_node 2
ddp_probe.py CONFIG OUT``) or with plain ``python`` for a single process. The recording uses
torch's global optimiser step hook and wraps the loop's per-step loss function; training itself is
the real code, unchanged.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook


def main(config_path: str, out_dir: str, resume: bool) -> None:
    import hydroseq.model.heads as heads
    import hydroseq.training.loop as loop
    from hydroseq.config import TrainConfig, load_config
    from hydroseq.training import checkpoint

    checksums: list[str] = []
    losses: list[float] = []
    valid_steps: list[int] = []

    def after_step(optimizer: torch.optim.Optimizer, args: object, kwargs: object) -> None:
        weights = torch.cat([p.detach().reshape(-1) for group in optimizer.param_groups for p in group["params"]])
        checksums.append(hashlib.sha256(weights.cpu().numpy().tobytes()).hexdigest())

    real_loss = heads.masked_mse  # the point head's loss (hydroseq.model.heads.get_loss) reads it at each step

    def recording_loss(*args: object, **kwargs: object) -> torch.Tensor:
        loss = real_loss(*args, **kwargs)
        losses.append(float(loss.detach()))
        valid_steps.append(int(args[2].sum()))
        return loss

    real_save = checkpoint.Checkpoint.save

    def keeping_save(state: checkpoint.Checkpoint, path: Path) -> Path:
        written = real_save(state, path)
        if Path(path).name == "last.pt" and state.epoch == 1:
            shutil.copy(written, Path(out_dir, "last_after_epoch_1.pt"))
        return written

    register_optimizer_step_post_hook(after_step)
    heads.masked_mse = recording_loss
    checkpoint.Checkpoint.save = keeping_save
    result = loop.train(load_config(config_path, TrainConfig), resume=resume)
    rank = int(os.environ.get("RANK", "0"))
    record = {"rank": rank, "world_size": int(os.environ.get("WORLD_SIZE", "1")), "run_id": result.run_id,
              "checksums": checksums, "losses": losses, "valid_steps": valid_steps, "history": result.history,
              "threads": torch.get_num_threads(), "group_left": not torch.distributed.is_initialized()}
    Path(out_dir, f"rank{rank}.json").write_text(json.dumps(record))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], resume="--resume" in sys.argv[3:])
