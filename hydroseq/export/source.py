"""Find what to export: a checkpoint file, or the best checkpoint of an MLflow run, and its data."""

from __future__ import annotations

from pathlib import Path

import xarray as xr

from hydroseq.config import TrainConfig
from hydroseq.errors import HydroseqError, InputDataError
from hydroseq.export.exporter import DataProvenance, export_trained_model
from hydroseq.export.metadata import ExportMetadata
from hydroseq.ingested import open_ingested
from hydroseq.training.checkpoint import Checkpoint
from hydroseq.training.tracking import load_run_checkpoint


def export_from_source(run_or_checkpoint: str | Path, seq_len: int, out_dir: str | Path,
                       tracking_uri: str | None = None, data_path: str | Path | None = None) -> ExportMetadata:
    """Load the checkpoint named by ``run_or_checkpoint`` and export it (see ``export_model``).

    ``data_path`` is the ingested file the model was trained on, read for its grid attributes and
    checksum; by default the run's ``data_path`` tag, or the checkpoint config's ``data.path``.
    """
    looks_like_file = str(run_or_checkpoint).endswith(".pt") or "/" in str(run_or_checkpoint)
    if looks_like_file and not Path(run_or_checkpoint).is_file():
        raise InputDataError(run_or_checkpoint, "checkpoint file not found")
    if Path(run_or_checkpoint).is_file():
        checkpoint = Checkpoint.load(run_or_checkpoint)
        run_data_path = None
    else:
        checkpoint, run_data_path = _load_run_checkpoint(str(run_or_checkpoint), tracking_uri)
    provenance = read_provenance(_data_path(checkpoint.config, data_path or run_data_path))
    return export_trained_model(checkpoint, seq_len, out_dir, provenance)


def _load_run_checkpoint(run_id: str, tracking_uri: str | None) -> tuple[Checkpoint, str | None]:
    checkpoint, run = load_run_checkpoint(run_id, tracking_uri)
    return checkpoint, run.data.tags.get("data_path")


def _data_path(config: TrainConfig, given: str | Path | None) -> Path:
    path = given or config.data.path
    if path is None:
        raise HydroseqError("cannot tell which dataset the model was trained on: the run has no data_path "
                            "tag and the config no data.path")
    return Path(path)


def read_provenance(path: Path) -> DataProvenance:
    """Grid, checksum and variable units of an ingested file (only its header and time coordinate are read).

    Raises
    ------
    InputDataError
        If the file is not an ingested dataset (:func:`hydroseq.ingested.open_ingested`).
    """
    dataset, grid = open_ingested(path)
    with dataset:
        return DataProvenance(grid=grid, dataset_checksum=str(dataset.attrs.get("dataset_checksum", "")),
                              variable_units=variable_units(dataset))


def variable_units(dataset: xr.Dataset) -> dict[str, str]:
    """``{variable: units attribute}`` of every variable of ``dataset`` that has one."""
    return {str(name): str(variable.attrs["units"]) for name, variable in dataset.variables.items()
            if "units" in variable.attrs}
