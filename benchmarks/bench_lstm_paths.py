"""Training-step throughput of the packed and padded LSTM paths, and CPU vs device agreement.

Run from the project root (the GPU check of issue 4 is this one script)::

    .venv/bin/python -m benchmarks.bench_lstm_paths [--device cuda] [--hidden 64 256] [--repeats 5]

One fixed batch of variable-length sequences (lengths uniform in [30, 365], sorted descending,
30 features), one Adam step per repetition (forward, masked loss, backward, step). Warm-up first,
then ``repeats`` timed steps; the median is reported as samples/s and valid timesteps/s (padding
excluded). On CUDA every timed step ends with a synchronisation. Finally one fixed model (seed 0)
predicts the same batch on the CPU and on the device; the largest absolute difference is printed.
Results also go to ``benchmarks/results/lstm_paths_<device>.json`` (``--json FILE``: there instead).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import time
from pathlib import Path

import torch
from rich.console import Console
from rich.table import Table

from benchmarks.timing import default_threads
from hydroseq.config import ModelConfig
from hydroseq.model import get_model, masked_mse


def make_batch(batch_size: int, seq_len: int, n_features: int, seed: int = 0) -> tuple[torch.Tensor, ...]:
    """Inputs, lengths (descending, CPU), targets and mask of one per-step batch."""
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.randint(30, seq_len + 1, (batch_size,), generator=generator).sort(descending=True).values
    x = torch.randn(batch_size, int(lengths[0]), n_features, generator=generator)
    mask = torch.arange(x.shape[1])[None, :] < lengths[:, None]
    x = x * mask[..., None]
    y = torch.randn(batch_size, x.shape[1], generator=generator)
    return x, lengths, y, mask


def time_steps(path: str, hidden: int, device: torch.device, batch: tuple[torch.Tensor, ...], repeats: int) -> float:
    """Median seconds of one optimisation step on ``path``."""
    torch.manual_seed(0)
    model = get_model(ModelConfig(hidden_size=hidden), batch[0].shape[2], 1, "per_step", lstm_path=path).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, lengths, y, mask = batch[0].to(device), batch[1], batch[2].to(device), batch[3].to(device)

    def step() -> None:
        loss = masked_mse(model(x, lengths).squeeze(-1), y, mask)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    step()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def cpu_device_agreement(device: torch.device, batch: tuple[torch.Tensor, ...]) -> float:
    """Largest |CPU − device| prediction of one fixed model (padded on CPU, default path on device)."""
    torch.manual_seed(0)
    model = get_model(ModelConfig(hidden_size=64), batch[0].shape[2], 1, "per_step").eval()
    with torch.no_grad():
        cpu = model(batch[0], batch[1], path="padded")
        model.to(device)
        other = model(batch[0].to(device), batch[1], path="packed" if device.type == "cuda" else "padded").cpu()
    mask = batch[3][..., None]
    return float(((cpu - other).abs() * mask).max())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--hidden", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--seq-len", type=int, default=365)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--paths", nargs="+", default=["packed", "padded"])
    parser.add_argument("--json", type=Path, default=None,
                        help="where the figures go (default: benchmarks/results/lstm_paths_<device>.json)")
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    torch.set_num_threads(default_threads())
    batch = make_batch(args.batch_size, args.seq_len, 30)
    valid = int(batch[1].sum())
    rows = []
    for hidden in args.hidden:
        for path in args.paths:
            seconds = time_steps(path, hidden, device, batch, args.repeats)
            rows.append({"hidden": hidden, "path": path, "step_s": seconds,
                         "samples_per_s": args.batch_size / seconds, "valid_timesteps_per_s": valid / seconds})
    agreement = cpu_device_agreement(device, batch)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else f"CPU, {default_threads()} threads"
    table = Table(title=f"LSTM training step, {name}, batch {args.batch_size}, lengths 30..{args.seq_len}")
    for column in ("hidden", "path", "step s", "samples/s", "valid timesteps/s"):
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(str(row["hidden"]), row["path"], f"{row['step_s']:.3f}", f"{row['samples_per_s']:,.0f}",
                      f"{row['valid_timesteps_per_s']:,.0f}")
    console = Console()
    console.print(table)
    console.print(f"max |CPU - {device.type}| prediction of one fixed model: {agreement:.2e}")
    out = args.json or Path("benchmarks/results") / f"lstm_paths_{device.type}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"date": dt.date.today().isoformat(), "device": name, "torch": torch.__version__,
                               "rows": rows, "max_abs_cpu_device_difference": agreement}, indent=2))


if __name__ == "__main__":
    main()
