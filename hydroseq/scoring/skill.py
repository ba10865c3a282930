"""The one rule for "beats persistence", shared by ``hydroseq evaluate`` and the hindcast table."""

from __future__ import annotations

import numpy as np


def stations_beating(model: np.ndarray, reference: np.ndarray) -> tuple[int, int]:
    """``(beating, compared)``: stations whose model score exceeds the reference's, of those where both are finite.

    A station the model or the reference cannot be scored on (too few observations, constant flow)
    is neither a win nor a loss: it is left out of ``compared``.
    """
    model, reference = np.asarray(model, dtype=np.float64), np.asarray(reference, dtype=np.float64)
    both = np.isfinite(model) & np.isfinite(reference)
    return int(np.sum(model[both] > reference[both])), int(both.sum())
