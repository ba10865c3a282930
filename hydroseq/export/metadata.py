"""The metadata file of an exported model directory (JSON; reading it needs only the standard library).

The directory holds ``model.onnx`` (the network), optionally ``model.pt2`` (``torch.export``), and
``metadata.json``, which says everything a forecast needs besides the network: the feature order,
the scalers, the grid, the leads, the fixed sequence length and where the model came from, plus a
SHA-256 of every other file so that a copied or corrupted directory is detected before use. ``model.onnx``
carries what a forecast needs of it in its own ``metadata_props`` (:mod:`hydroseq.export.onnx_props`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from hydroseq.config.derived import ClimateSources
from hydroseq.config.train import ForecastInput, Period, TrainConfig
from hydroseq.dataset.features import FeatureLayout
from hydroseq.errors import ConfigError, InputDataError
from hydroseq.grid import GRID_ATTRIBUTES, GridSpec

METADATA_FILE = "metadata.json"
ONNX_FILE = "model.onnx"
PT2_FILE = "model.pt2"
METADATA_FORMAT_VERSION = 1


@dataclass
class ExportMetadata:
    """Everything about an exported model except its weights.

    Attributes
    ----------
    seq_len
        The fixed input length N: inputs are ``x[B, N, F]`` right-padded, with ``lengths[B]``.
    feature_names
        The F input features in model order (:class:`hydroseq.dataset.FeatureLayout`): dynamic
        inputs, then the lagged target and its "observed" flag if used, then static attributes
        (repeated on every step).
    dynamic_inputs, static_inputs, target, lagged_target
        The data config's variables, as trained.
    mode, leads
        Both predict the target ``lead`` steps after the last input step, one output per lead
        (lead 0: a per-step simulation of the last step itself).
    min_len
        Fewest valid steps a sequence needed in training; shorter histories are not forecast.
    scalers
        The training scalers as :meth:`hydroseq.dataset.scalers.Scalers.to_dict` writes them.
    grid
        The time grid of the training data, stored as the ingested file's grid attributes.
    run_id, dataset_checksum, hydroseq_version
        Provenance: the training run, the checksum of its ingested data, the exporting version.
    parity_max_abs_diff
        Largest |onnxruntime - torch| difference measured at export time on real inputs.
    files
        ``{file name: sha256}`` of every other file in the directory.
    train_config
        The resolved train config of the run, typed (parsed once, when the metadata is read): its data
        section holds the periods, inputs, forecast inputs and leads the model was trained with
        (:attr:`training_period`). None when the directory records none, or one this version cannot read.
    forecast_inputs, forecast_horizon
        The weather-forecast inputs the model reads for leads 1..``forecast_horizon`` (as
        :class:`hydroseq.config.train.ForecastInput` dicts; empty for a model without them).
    quantiles
        Quantile levels the network outputs per lead (``y[B, lead, level]``, the median among them);
        empty for a point forecast (``y[B, lead]``).
    members
        Ensemble members; with two or more the graph also returns ``members[B, member, ...]``
        (each member's output) beside their mean ``y`` (0: one network).
    input_units
        ``{variable: units}`` of the dynamic and static inputs, the target and the weather-forecast
        inputs, as the training data's ``units`` attributes gave them (variables without one are not
        listed; empty for models exported before units were recorded). A forecast refuses a file
        whose units differ.
    day_convention
        ``grid``: the model reads files on its own grid only; ``local_standard_day``: its steps are local
        standard-time days, and a daily file in any zone without daylight saving serves (the agency's own).
    """

    seq_len: int
    feature_names: list[str]
    dynamic_inputs: list[str]
    static_inputs: list[str]
    target: str
    lagged_target: bool
    mode: str
    leads: list[int]
    min_len: int
    scalers: dict[str, Any]
    grid: GridSpec
    run_id: str
    dataset_checksum: str
    hydroseq_version: str
    opset: int = 0
    parity_max_abs_diff: float | None = None
    files: dict[str, str] = field(default_factory=dict)
    train_config: TrainConfig | None = None
    forecast_inputs: list[dict[str, Any]] = field(default_factory=list)
    forecast_horizon: int = 0
    quantiles: list[float] = field(default_factory=list)
    members: int = 0
    input_units: dict[str, str] = field(default_factory=dict)
    day_convention: str = "grid"
    format_version: int = METADATA_FORMAT_VERSION

    @property
    def forecast_input_specs(self) -> list[ForecastInput]:
        """The forecast inputs as config objects."""
        return [ForecastInput.model_validate(item) for item in self.forecast_inputs]

    @property
    def training_period(self) -> Period | None:
        """The local days the model was trained on (the train config's training split); None if not recorded."""
        return self.train_config.data.splits.train if self.train_config is not None else None

    @property
    def climate_sources(self) -> ClimateSources:
        """The variables the model's derived inputs are computed from (:mod:`hydroseq.climate`)."""
        return self.train_config.data.climate_sources if self.train_config is not None else ClimateSources()

    @property
    def perfect_forecast_inputs(self) -> bool:
        """The model was trained on observed values over the lead window (an upper bound, not operational)."""
        return any(item.source == "perfect" for item in self.forecast_input_specs)

    def feature_layout(self) -> FeatureLayout:
        """The features this model reads, as the dataset stage builds them."""
        return FeatureLayout.of(self.dynamic_inputs, self.static_inputs, self.target, self.mode, self.lagged_target,
                                self.forecast_input_specs, self.forecast_horizon)

    def to_json(self) -> str:
        """JSON text of all fields, in field order, the grid as its attributes (flat, in its place).

        Keys are not sorted: the scalers' key order is the feature order.
        """
        data: dict[str, Any] = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, TrainConfig) or item.name == "train_config":
                value = value.model_dump(mode="json") if value is not None else {}
            data.update(value.to_attrs() if isinstance(value, GridSpec) else {item.name: value})
        return json.dumps(data, indent=2) + "\n"

    @classmethod
    def read(cls, model_dir: str | Path) -> ExportMetadata:
        """Read ``metadata.json`` from an exported model directory.

        Raises
        ------
        ConfigError
            If ``model_dir`` or its metadata file is missing: the path names no exported model (a setup error).
        InputDataError
            If the file is not JSON, of a newer format or lacks a field.
        """
        path = Path(model_dir) / METADATA_FILE
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            if not Path(model_dir).is_dir():
                raise ConfigError(f"{model_dir}: no such model directory (an exported model's folder, made by "
                                  "hydroseq export)") from None
            raise ConfigError(f"{path}: not an exported model directory (metadata.json missing)") from None
        except (OSError, ValueError) as error:
            raise InputDataError(path, f"unreadable model metadata ({error})") from None
        version = data.get("format_version") if isinstance(data, dict) else None
        if not isinstance(version, int) or version > METADATA_FORMAT_VERSION:
            raise InputDataError(path, f"metadata format {version!r} is not one this hydroseq reads "
                                       f"(<= {METADATA_FORMAT_VERSION})")
        try:
            grid = GridSpec.from_attrs(data)
            fields_read = {key: value for key, value in data.items() if key not in GRID_ATTRIBUTES}
            fields_read["train_config"] = _train_config(fields_read.get("train_config"))
            return cls(grid=grid, **fields_read)
        except (TypeError, ValueError) as error:
            raise InputDataError(path, f"malformed model metadata ({error})") from None


def _train_config(stored: object) -> TrainConfig | None:
    """The recorded train config, typed; None when there is none or this version cannot read it (a model
    exported by an earlier hydroseq forecasts all the same, without its training period)."""
    if not stored:
        return None
    data = stored.get("data") if isinstance(stored, dict) else None
    if isinstance(stored, dict) and isinstance(data, dict) and "max_len" in data:  # before 0.1.0 named it seq_len
        stored = {**stored, "data": {("seq_len" if key == "max_len" else key): value for key, value in data.items()}}
    try:
        return TrainConfig.model_validate(stored)
    except ValidationError:
        return None
