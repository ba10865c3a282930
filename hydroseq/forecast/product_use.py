"""Which weather-forecast product each station's forecast read, and what happens where none was valid."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from hydroseq.dataset import StationData
from hydroseq.errors import InputDataError
from hydroseq.export.metadata import ExportMetadata

MissingForecastInput = Literal["fallback", "fail"]
PERFECT_LABEL = ("perfect: the observed values over the lead window, an upper bound on what a real weather "
                 "forecast can give; not an operational forecast")


@dataclass(frozen=True)
class ProductUse:
    """How a forecast run used its weather-forecast inputs.

    Attributes
    ----------
    age_hours
        float32 ``[issue, station]``: hours from the oldest product's reference time to the issue
        time (ingested inputs; NaN where none was valid), or None.
    fallback
        ``{station: message}`` for stations forecast without some weather-forecast input at some
        issue time (the model's no-forecast input, as trained with ``forecast_hiding``).
    attributes
        Global attributes for the forecast files: the inputs, their sources and horizon.
    """

    age_hours: np.ndarray | None = None
    fallback: dict[str, str] = field(default_factory=dict)
    attributes: dict[str, str] = field(default_factory=dict)


def product_use(metadata: ExportMetadata, data: StationData, ends: np.ndarray, references: dict[str, np.ndarray],
                on_missing: MissingForecastInput, path: Path,
                file_attributes: dict[str, str] | None = None) -> ProductUse:
    """Ages, fallbacks and attributes for the issue steps ``ends`` (indices into ``data``); ``file_attributes``
    name a product file read at forecast time (``--forcing-forecast``), ``path`` the file errors name.

    Raises
    ------
    InputDataError
        With ``on_missing="fail"``, naming the stations and the issue time, when some station has,
        for some forecast input, no value for any lead at an issue time.
    """
    specs = metadata.forecast_input_specs
    if not specs:
        return ProductUse()
    attributes = {"forecast_inputs": json.dumps(metadata.forecast_inputs),
                  "forecast_input_horizon_steps": str(metadata.forecast_horizon), **(file_attributes or {})}
    if metadata.perfect_forecast_inputs:
        attributes["forecast_inputs_source"] = PERFECT_LABEL
    # [station, issue]: every input has a value for some lead (else the model reads "no forecast" for one)
    present = np.isfinite(data.forecast[:, ends]).any(axis=3).all(axis=2)
    issues = data.times[ends]
    missing = {data.station_ids[s]: issues[~present[s]] for s in range(data.n_stations) if not present[s].all()}
    if missing and on_missing == "fail":
        station, times = next(iter(missing.items()))
        raise InputDataError(path, f"no weather forecast is valid at the issue time for {len(missing)} stations "
                                   f"(first: {station}); ingest the newest product or forecast with fallback",
                             where=f"time {_label(times[0])}")
    fallback = {station: (f"no weather forecast valid at {len(times)} of {len(issues)} issue times (first "
                          f"{_label(times[0])}): forecast without one") for station, times in missing.items()}
    age = None
    if references:
        reference = np.stack([times[:, ends] for times in references.values()])  # [input, station, issue]
        with np.errstate(invalid="ignore"):
            hours = (issues[None, None, :] - reference) / np.timedelta64(1, "h")
        hours = np.where(np.isnat(reference), np.nan, hours)
        all_missing = np.isnan(hours).all(axis=0)
        oldest = np.nanmax(np.where(np.isnan(hours), -np.inf, hours), axis=0)
        age = np.where(all_missing, np.nan, oldest).T.astype(np.float32)
    return ProductUse(age_hours=age, fallback=fallback, attributes=attributes)


def _label(value: np.datetime64) -> str:
    return f"{pd.Timestamp(value).isoformat()}Z"
