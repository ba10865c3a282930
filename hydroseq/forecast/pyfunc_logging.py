"""Log a training run's forecaster as an MLflow pyfunc model (what ``hydroseq train`` does at the end of a run).

:func:`log_forecast_model` is the ``log_model`` hook of :func:`hydroseq.training.train`: the
training stage cannot import the exporter (a later stage), so its caller hands this in. It exports
the best checkpoint with the project's exporter at ``seq_len = data.max_len`` into a temporary
folder and logs, without pickling anything, the pyfunc model of :mod:`hydroseq.forecast.pyfunc_model`
from its code file (MLflow's "models from code"), that folder as its artifact, the hydroseq package
as its code, a signature and an input example (real rows of the training data). Unlike the rest of
this stage it needs torch and the training code (the exporter's).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
from mlflow.environment_variables import MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR
from mlflow.models import infer_signature

import hydroseq
from hydroseq.config import Period, TrainConfig
from hydroseq.dataset import StationData, load_station_data
from hydroseq.export import ExportedModel, ExportMetadata
from hydroseq.export.exporter import DataProvenance, export_trained_model
from hydroseq.export.source import read_provenance
from hydroseq.forecast.pyfunc_model import (
    EXPORTED_MODEL_ARTIFACT,
    ISSUE_TIME_PARAM,
    forecast_frame,
    frame_from_station_data,
)
from hydroseq.training.checkpoint import Checkpoint

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

    The input example is the last ``seq_len`` steps of the validation period of the first
    stations; the signature is inferred from it and the model's output on it, with the param
    ``issue_time`` (default ``""``: the newest time of the input).
    """
    seq_len = checkpoint.config.data.max_len
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = Path(tmp) / EXPORTED_MODEL_ARTIFACT
        units = read_provenance(station_data.path).variable_units
        export_trained_model(checkpoint, seq_len, model_dir,
                             DataProvenance(station_data.grid, station_data.checksum, units), pt2=False)
        exported = ExportedModel(model_dir)
        _log_directory(name, exported, input_example(station_data, exported.metadata,
                                                     checkpoint.config.data.splits.validation))


def log_exported_model(name: str, model_dir: str | Path, data_path: str | Path) -> None:
    """Log an exported model directory (the shipped base model, say) as pyfunc model ``name`` of the active run.

    Its files are checked against their checksums first; the input example is the last ``seq_len``
    steps of the first stations of ``data_path``, an ingested file the model reads.
    """
    exported = ExportedModel(model_dir)
    data_config = TrainConfig.model_validate(exported.metadata.train_config).data.model_copy(update={"stations": None})
    station_data = load_station_data(data_path, data_config)
    _log_directory(name, exported, _example_ending(station_data, exported.metadata, station_data.n_times - 1))


def _log_directory(name: str, exported: ExportedModel, example: pd.DataFrame) -> None:
    with warnings.catch_warnings():  # the output's integer lead is never missing: MLflow's hint does not apply
        warnings.filterwarnings("ignore", "Hint: Inferred schema contains integer", UserWarning)
        signature = infer_signature(example, forecast_frame(exported, example), params={ISSUE_TIME_PARAM: ""})
    with _no_progress_bars():
        mlflow.pyfunc.log_model(name=name, python_model=str(MODEL_CODE),
                                artifacts={EXPORTED_MODEL_ARTIFACT: str(exported.model_dir)},
                                code_paths=[str(Path(hydroseq.__file__).parent)], signature=signature,
                                input_example=example, pip_requirements=serving_requirements())


@contextlib.contextmanager
def _no_progress_bars() -> Iterator[None]:
    """No MLflow artifact progress bar in the block (it validates the input example on a copy of the model it
    downloads, and would draw one into the training's output)."""
    name = MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR.name
    previous = os.environ.get(name)
    os.environ[name] = "false"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(name)
        else:
            os.environ[name] = previous


def input_example(station_data: StationData, metadata: ExportMetadata, period: Period) -> pd.DataFrame:
    """The model input of the first stations over the last ``seq_len`` steps of ``period``."""
    in_period = np.flatnonzero(station_data.grid.period_mask(station_data.times, period))
    return _example_ending(station_data, metadata, int(in_period[-1]) if len(in_period) else station_data.n_times - 1)


def _example_ending(station_data: StationData, metadata: ExportMetadata, end: int) -> pd.DataFrame:
    """The model input of the first stations over the ``seq_len`` steps ending at step ``end``."""
    return frame_from_station_data(station_data, metadata, np.arange(min(EXAMPLE_STATIONS, station_data.n_stations)),
                                   np.arange(max(0, end - metadata.seq_len + 1), end + 1))
