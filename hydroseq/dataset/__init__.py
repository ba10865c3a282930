"""Dataset stage: the ingested NetCDF in memory, scalers, the cached sample index and batch assembly.

``load_station_data``, ``Scalers`` and ``build_sample_index`` need only numpy,
pandas and xarray (the forecast stage and the exporter use them without torch);
``SequenceDataset`` and ``Batch`` import torch on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hydroseq.dataset.features import FeatureLayout, build_features
from hydroseq.dataset.sample_index import (
    SampleIndex,
    SplitName,
    build_sample_index,
    require_samples,
    run_length_so_far,
)
from hydroseq.dataset.scalers import Scalers
from hydroseq.dataset.station_data import StationData, load_station_data

if TYPE_CHECKING:
    from hydroseq.dataset.batch import Batch
    from hydroseq.dataset.sequence_dataset import SequenceDataset

__all__ = ["Batch", "FeatureLayout", "SampleIndex", "Scalers", "SequenceDataset", "SplitName", "StationData",
           "build_features", "build_sample_index", "load_station_data", "require_samples", "run_length_so_far"]


def __getattr__(name: str) -> Any:
    if name == "SequenceDataset":
        from hydroseq.dataset.sequence_dataset import SequenceDataset
        return SequenceDataset
    if name == "Batch":
        from hydroseq.dataset.batch import Batch
        return Batch
    raise AttributeError(f"module 'hydroseq.dataset' has no attribute {name!r}")
