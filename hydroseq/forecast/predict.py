"""From network outputs to discharge: the step ``hydroseq forecast`` and the served model share."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from tqdm import tqdm

from hydroseq.dataset import Scalers
from hydroseq.dataset.window import gather_windows
from hydroseq.export import ExportedModel

ROWS_PER_CHUNK = 65536  # sequences assembled at once: bounds memory to ~rows x N x F x 4 bytes


def predict_issues(model: ExportedModel, scalers: Scalers, station_ids: tuple[str, ...], features: np.ndarray,
             ends: np.ndarray, lengths: np.ndarray, needed: int, batch_size: int,
             progress: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """``[issue, station, lead(, level)]`` forecasts in the target's units (NaN where not forecast) and an
    ensemble's members' point forecasts ``[issue, station, lead, member]`` (their medians; None for one network)."""
    n_leads, levels, n_members = len(model.metadata.leads), model.metadata.quantiles, model.metadata.members
    values = np.full((len(ends), len(station_ids), n_leads, *((len(levels),) if levels else ())), np.nan,
                     dtype=np.float32)
    members = (np.full((len(ends), len(station_ids), n_leads, n_members), np.nan, dtype=np.float32)
               if n_members > 1 else None)
    issues_per_chunk = max(1, ROWS_PER_CHUNK // max(1, len(station_ids)))
    chunks = range(0, len(ends), issues_per_chunk)
    ids = np.asarray(station_ids, dtype=object)
    bar_wanted = progress and len(chunks) > 1  # then None: drawn on a terminal only, never into a log
    for first in tqdm(chunks, desc="hindcast", unit="chunk", disable=None if bar_wanted else True):
        block = slice(first, first + issues_per_chunk)
        stations, issues = np.nonzero(lengths[:, block] >= needed)
        issues += first
        rows_lengths = lengths[stations, issues]
        x = gather_windows(features, stations, ends[issues], rows_lengths, model.seq_len)
        scaled, scaled_members = model.run(x, rows_lengths, batch_size=batch_size)
        values[issues, stations, :] = to_target_units(scalers, scaled, list(ids[stations]))
        if members is not None and scaled_members is not None:
            members[issues, stations] = member_forecasts(scalers, scaled_members, levels, list(ids[stations]))
    return values, members


def member_forecasts(scalers: Scalers, scaled_members: np.ndarray, levels: Sequence[float],
                     station_ids: list[str]) -> np.ndarray:
    """An ensemble's ``[row, member, lead(, level)]`` scaled outputs as the members' point forecasts
    ``[row, lead, member]`` in the target's units (their medians for a quantile model)."""
    point = scaled_members[..., levels.index(0.5)] if levels else scaled_members
    return to_target_units(scalers, point, station_ids).transpose(0, 2, 1)


def to_target_units(scalers: Scalers, scaled: np.ndarray, station_ids: list[str]) -> np.ndarray:
    """Scaled model outputs in the target's units, with negative discharge set to 0.

    The network is unconstrained and can undershoot at low flows; a forecast product must not
    publish a negative discharge. The raw outputs stay available through ``ExportedModel.predict``.
    """
    return np.maximum(scalers.inverse_target(scaled, station_ids), 0.0)
