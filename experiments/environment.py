"""Where and when a benchmark ran: commit, date, CPU, threads, library versions."""

from __future__ import annotations

import datetime as dt
import platform
import subprocess
from dataclasses import dataclass
from pathlib import Path

from experiments.protocol import REPO_ROOT


@dataclass(frozen=True)
class Environment:
    """The facts printed at the top of every report."""

    commit: str
    date: str
    cpu: str
    logical_cpus: int
    threads: int
    python: str
    torch: str


def git_commit(repo: Path = REPO_ROOT) -> str:
    """Short commit hash, with ``+dirty`` when tracked files differ from it; ``unknown`` outside git."""
    try:
        commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{commit}+dirty" if dirty else commit


def cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo on Linux)."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def current_environment(threads: int) -> Environment:
    """The environment of this process, for a run with ``threads`` torch threads per tool."""
    import os

    import torch

    return Environment(commit=git_commit(), date=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                       cpu=cpu_model(), logical_cpus=os.cpu_count() or 0, threads=threads,
                       python=platform.python_version(), torch=torch.__version__)
