"""The ``tracking`` section of a training config: the MLflow store, the run's name and the registered model."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from hydroseq.config.base import StrictModel
from hydroseq.config.dates import IsoDate


class TrackingConfig(StrictModel):
    """MLflow tracking: a local SQLite store unless a server is named."""

    tracking_uri: str = "sqlite:///mlruns.db"
    artifact_root: Path = Path("mlartifacts")
    experiment: str = "hydroseq"
    run_name: str | None = Field(None, description="the MLflow run's name (default: hydroseq train names it after "
                                                    "the config file, train_demo_cpu; the Python API after the "
                                                    "experiment); an ensemble's members add -member<i>")
    store_lock_retries: int = Field(5, ge=0, description="tries after the first while the store is locked")
    store_lock_backoff_s: float = Field(1.0, gt=0, description="wait before the first retry; doubles each time")
    register_model: bool = Field(True, description="register the model of every finished run as a new version in "
                                                   "the MLflow model registry")
    registered_model_name: str | None = Field(None, description="its name in the registry (default: the experiment)")
    example_issue_time: IsoDate | None = Field(
        None, description="the logged model's input example ends at the end of this local day of the grid, an "
                          "issue time your forecasts use (the demo's 2014-09-30); default: the end of the "
                          "validation period. It must lie within the data")
