"""Run a benchmark child process and read its peak memory from the kernel."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path


class ChildTimeout(RuntimeError):
    """The child ran past its time limit and was killed."""


def thread_environment(threads: int) -> dict[str, str]:
    """The current environment with every thread pool limited to ``threads``."""
    env = dict(os.environ)
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
        env[name] = str(threads)
    return env


def run_child(command: list[str], env: dict[str, str], log_path: Path,
              timeout_s: float | None = None, cwd: Path | None = None) -> tuple[int, float]:
    """Run ``command`` with its output in ``log_path``; return (exit status, peak RSS in MiB).

    The peak is the child's maximum resident set size as ``os.wait4`` reports it when the child
    is reaped, so it covers the whole run (imports, data loading, training, testing).

    Raises
    ------
    ChildTimeout
        If the child runs past ``timeout_s`` (it is killed first).
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as log:
        child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                child.returncode = os.waitstatus_to_exitcode(status)
                return child.returncode, usage.ru_maxrss / 1024
            if deadline is not None and time.monotonic() > deadline:
                child.kill()
                child.wait()
                raise ChildTimeout(f"{command[0]} ran past {timeout_s:.0f} s; log: {log_path}")
            time.sleep(0.05)


def log_tail(log_path: Path, characters: int = 3000) -> str:
    """The end of a child's log, for error messages."""
    return log_path.read_text(errors="replace")[-characters:] if log_path.exists() else "(no log)"
