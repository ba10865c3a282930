"""Log a training run's forecaster as an MLflow pyfunc model (what ``hydroseq train`` does at the end of a run).

:func:`log_forecast_model` is the ``log_model`` hook of :func:`hydroseq.training.train`: the
training stage cannot import the exporter (a later stage), so its caller hands this in. It exports
the best checkpoint with the project's exporter at ``seq_len = data.seq_len`` into a temporary
folder and logs, without pickling anything, the pyfunc model of :mod:`hydroseq.serving.pyfunc_model`
from its code file (MLflow's "models from code"), that folder as its artifact, for a quantile model
the flood thresholds of the training data as a second one (:mod:`hydroseq.serving.pyfunc_thresholds`),
the names and catchment areas of its stations as another (:mod:`hydroseq.serving.pyfunc_stations`),
the hydroseq package as its code, a signature, an input example (real rows of the training data,
ending at ``tracking.example_issue_time``) and, as its model config, the plausibility bounds of its
inputs (:mod:`hydroseq.serving.input_bounds`). Unlike the rest of this stage it needs torch and the
training code (the exporter's) and the ingest stage (the bounds').
"""

from __future__ import annotations

import importlib.metadata
import tempfile
import warnings
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
from mlflow.models import ModelSignature, infer_signature
from mlflow.types.schema import AnyType, ColSpec, DataType, Schema, TensorSpec

import hydroseq
from hydroseq.dataset import StationData
from hydroseq.dataset.window import history_slice
from hydroseq.export import ExportedModel, ExportMetadata
from hydroseq.export.exporter import DataProvenance, export_trained_model
from hydroseq.export.source import read_provenance
from hydroseq.forecast.data_window import IngestedFile
from hydroseq.forecast.table import AREA_COLUMN
from hydroseq.scoring.thresholds import StationThresholds
from hydroseq.serving.input_bounds import input_bounds
from hydroseq.serving.pyfunc_model import (
    EXPORTED_MODEL_ARTIFACT,
    INPUT_BOUNDS_CONFIG,
    ISSUE_TIME_PARAM,
    forecast_frame,
    frame_from_station_data,
)
from hydroseq.serving.pyfunc_stations import (
    STATIONS_ARTIFACT,
    STATIONS_FILE,
    StationTable,
    derive_stations,
    write_stations,
)
from hydroseq.serving.pyfunc_thresholds import (
    FLOOD_THRESHOLDS_ARTIFACT,
    FLOOD_THRESHOLDS_FILE,
    derive_thresholds,
    write_thresholds,
)
from hydroseq.serving.served_input import TIME
from hydroseq.serving.stores import no_artifact_progress_bars
from hydroseq.training.checkpoint import Checkpoint
from hydroseq.training.model_version import example_end

MODEL_CODE = Path(__file__).with_name("pyfunc_code.py")
EXAMPLE_STATIONS = 2
# What the forecast stage imports (hydroseq's own dependencies without torch, dask and the ONNX exporter).
SERVING_DISTRIBUTIONS = ("numpy", "pandas", "xarray", "netCDF4", "cftime", "scipy", "matplotlib", "onnxruntime",
                         "pydantic", "PyYAML", "tqdm", "scoringrules")


def serving_requirements() -> list[str]:
    """Pinned requirements of the logged model: the installed versions of :data:`SERVING_DISTRIBUTIONS` and mlflow."""
    return [f"{name}=={importlib.metadata.version(name)}" for name in ("mlflow", *SERVING_DISTRIBUTIONS)]


def log_forecast_model(name: str, checkpoint: Checkpoint, station_data: StationData) -> None:
    """Log the forecaster of ``checkpoint`` (trained on ``station_data``) as model ``name`` of the active run.

    The input example is the ``seq_len`` steps of the first stations up to ``tracking.example_issue_time``
    (default: the end of the validation period); the signature is inferred from it and the model's output
    on it (:func:`signature`), with the param ``issue_time`` (default ``""``: the newest time of the input).
    """
    seq_len = checkpoint.config.data.seq_len
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = Path(tmp) / EXPORTED_MODEL_ARTIFACT
        units = read_provenance(station_data.path).variable_units
        export_trained_model(checkpoint, seq_len, model_dir,
                             DataProvenance(station_data.grid, station_data.checksum, units), pt2=False)
        exported = ExportedModel(model_dir)
        example = _example_ending(station_data, exported.metadata, example_end(station_data, checkpoint.config))
        _log_directory(name, exported, example, input_bounds(station_data.path, exported.metadata),
                       derive_thresholds(station_data.path, exported.metadata),
                       derive_stations(station_data.path, exported.metadata))


def log_exported_model(name: str, model_dir: str | Path, data_path: str | Path) -> None:
    """Log an exported model directory (the shipped base model, say) as pyfunc model ``name`` of the active run.

    Its files are checked against their checksums first; the input example is the last ``seq_len``
    steps of the first stations of ``data_path``, an ingested file the model reads.
    """
    exported = ExportedModel(model_dir)
    with IngestedFile(data_path, exported.metadata) as source:  # read as a forecast reads it (derived inputs)
        station_data = source.read(0, len(source.times))
    _log_directory(name, exported, _example_ending(station_data, exported.metadata, station_data.n_times - 1),
                   input_bounds(data_path, exported.metadata), derive_thresholds(data_path, exported.metadata),
                   derive_stations(data_path, exported.metadata))


def _log_directory(name: str, exported: ExportedModel, example: pd.DataFrame, bounds: dict[str, list[float]],
                   thresholds: StationThresholds | None, stations: StationTable) -> None:
    artifacts = {EXPORTED_MODEL_ARTIFACT: str(exported.model_dir)}
    with tempfile.TemporaryDirectory() as tmp, no_artifact_progress_bars():
        if thresholds is not None:
            artifacts[FLOOD_THRESHOLDS_ARTIFACT] = str(write_thresholds(thresholds, Path(tmp) / FLOOD_THRESHOLDS_FILE))
        artifacts[STATIONS_ARTIFACT] = str(write_stations(stations, Path(tmp) / STATIONS_FILE))
        mlflow.pyfunc.log_model(name=name, python_model=str(MODEL_CODE), artifacts=artifacts,
                                code_paths=[str(Path(hydroseq.__file__).parent)],
                                signature=signature(exported, example, bounds, thresholds, stations),
                                input_example=example,
                                model_config={INPUT_BOUNDS_CONFIG: bounds}, pip_requirements=serving_requirements())


def signature(exported: ExportedModel, example: pd.DataFrame, bounds: dict[str, list[float]],
              thresholds: StationThresholds | None = None, stations: StationTable | None = None) -> ModelSignature:
    """The signature inferred from ``example`` and the model's output on it, with two changes that leave the
    checks to the model (:mod:`hydroseq.serving.served_input`), whose errors name what is wrong: ``time``
    may be of any type (a datetime with or without a zone, ISO 8601 text), and every column is optional;
    with ``stations``, the optional ``area_km2`` (double) follows them."""
    with warnings.catch_warnings():  # the output's integer lead is never missing: MLflow's hint does not apply
        warnings.filterwarnings("ignore", "Hint: Inferred schema contains integer", UserWarning)
        output = forecast_frame(exported, example, bounds=bounds, thresholds=thresholds, stations=stations)
        inferred = infer_signature(example, output, params={ISSUE_TIME_PARAM: ""})
    assert inferred.inputs is not None
    columns: list[ColSpec | TensorSpec] = [
        ColSpec(AnyType() if column.name == TIME else column.type, column.name, required=False)
        for column in inferred.inputs.inputs]
    if stations is not None:
        columns.append(ColSpec(DataType.double, AREA_COLUMN, required=False))
    inputs = Schema(columns)
    return ModelSignature(inputs, inferred.outputs, inferred.params)


def _example_ending(station_data: StationData, metadata: ExportMetadata, end: int) -> pd.DataFrame:
    """The model input of the first stations over the ``seq_len`` steps ending at step ``end``, its times as the
    forecast CSV writes them (``2014-07-01T08:00:00Z``: the same after MLflow stores the example as JSON)."""
    frame = frame_from_station_data(station_data, metadata, np.arange(min(EXAMPLE_STATIONS, station_data.n_stations)),
                                    np.arange(end + 1)[history_slice(end, metadata.seq_len)])
    return frame.assign(**{TIME: pd.DatetimeIndex(frame[TIME]).strftime("%Y-%m-%dT%H:%M:%SZ")})
