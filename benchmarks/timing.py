"""Timing shared by the benchmark scripts: warm-up, repeats, median."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_seconds(action: Callable[[], object], repeats: int, warmup: int = 1) -> float:
    """Median wall time of ``action`` over ``repeats`` runs after ``warmup`` untimed runs."""
    for _ in range(warmup):
        action()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
