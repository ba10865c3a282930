"""Timing shared by the benchmark scripts (and the experiments): warm-up, repeats, median, thread count."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable


def repeat_seconds(action: Callable[[], object], repeats: int,
                   warmup: Callable[[], object] | None = None) -> tuple[float, ...]:
    """Wall seconds of ``repeats`` calls of ``action`` after ``warmup()`` (default: one untimed ``action()``)."""
    (warmup or action)()
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        seconds.append(time.perf_counter() - start)
    return tuple(seconds)


def median_seconds(action: Callable[[], object], repeats: int,
                   warmup: Callable[[], object] | None = None) -> float:
    """Median of :func:`repeat_seconds`."""
    return statistics.median(repeat_seconds(action, repeats, warmup))


def default_threads() -> int:
    """The cores this process may use (the thread count the benchmarks give torch by default)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
