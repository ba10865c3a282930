"""Model heads: chosen by name from one table; a head registered by the test suite alone trains, predicts,
calibrates and exports through the unchanged training, prediction and export code."""

from __future__ import annotations

import math
from pathlib import Path
from statistics import NormalDist

import pytest
import torch
from torch import Tensor

from hydroseq.config import ModelConfig, TrainConfig, validate_config
from hydroseq.dataset import FeatureLayout
from hydroseq.errors import ConfigError
from hydroseq.export.exporter import export_trained_model
from hydroseq.export.metadata import ExportMetadata
from hydroseq.export.source import read_provenance
from hydroseq.model import HEADS, Head, get_head, get_model
from hydroseq.model.heads import Loss, QuantileHead
from hydroseq.training import train
from hydroseq.training.checkpoint import BEST_CHECKPOINT, Checkpoint
from tests.conftest import train_config

LEVELS = (0.1, 0.5, 0.9)


class GaussianHead(Head):
    """A toy head: a mean and a log standard deviation per lead, trained by the Gaussian negative
    log-likelihood, handed on as the quantiles of that normal distribution at ``model.quantiles``."""

    name = "gaussian"

    @property
    def levels(self) -> tuple[float, ...]:
        return tuple(self.config.quantiles or LEVELS)

    @property
    def outputs_per_lead(self) -> int:
        return 2

    def _z(self, like: Tensor) -> Tensor:
        """The standard normal's quantiles at the levels (constants: ONNX has no inverse erf)."""
        return torch.tensor([NormalDist().inv_cdf(level) for level in self.levels], dtype=like.dtype)

    def shape(self, raw: Tensor, n_outputs: int) -> Tensor:
        pairs = raw.unflatten(-1, (n_outputs, 2))
        mean, std = pairs[..., :1], torch.nn.functional.softplus(pairs[..., 1:]) + 1e-3
        return mean + std * self._z(raw)

    def shift(self, output: Tensor, skip: Tensor) -> Tensor:
        return output + skip.unsqueeze(-1)

    def loss(self, training: TrainConfig) -> Loss:
        upper = len(self.levels) - 1

        def negative_log_likelihood(pred: Tensor, target: Tensor, mask: Tensor | None, station_std: Tensor) -> Tensor:
            median = pred[..., self.levels.index(0.5)]
            std = (pred[..., upper] - median) / self._z(pred)[upper]
            valid = torch.isfinite(target) & (mask if mask is not None else True)
            error = torch.where(valid, target.nan_to_num(0.0) - median, torch.zeros_like(median))
            terms = torch.log(std) + 0.5 * (error / std) ** 2 + 0.5 * math.log(2 * math.pi)
            return torch.where(valid, terms, torch.zeros_like(terms)).sum() / valid.sum().clamp_min(1)

        return negative_log_likelihood


def test_the_head_defaults_to_the_model_s_quantiles() -> None:
    assert type(get_head(ModelConfig())) is Head and get_head(ModelConfig()).levels is None
    quantile = get_head(ModelConfig(quantiles=[0.1, 0.5, 0.9]))
    assert isinstance(quantile, QuantileHead) and quantile.levels == (0.1, 0.5, 0.9)
    with pytest.raises(ConfigError, match="no head 'cmal' \\(known: point, quantile\\)"):
        get_head(ModelConfig(head="cmal"))


def test_a_head_registered_by_the_tests_trains_predicts_and_exports(monkeypatch: pytest.MonkeyPatch, ingested: Path,
                                                                    tmp_path: Path) -> None:
    monkeypatch.setitem(HEADS, "gaussian", GaussianHead)
    settings = train_config(ingested, tmp_path).model_dump(mode="json")
    settings["model"].update(head="gaussian", quantiles=list(LEVELS))
    settings["training"].update(loss="mse", epochs=2, calibrate_quantiles=True)
    config = validate_config(settings, TrainConfig)
    network = get_model(config.model, len(FeatureLayout.from_config(config.data).names), 1, "per_step",
                        data=config.data)
    assert network.output_head.outputs_per_lead == 2 and network.head is not None
    assert network.head.out_features == 2  # the layer sized by the head: a mean and a spread

    run = train(config, show_progress=False)
    assert all(math.isfinite(epoch["train_loss"]) for epoch in run.history)
    assert run.history[-1]["train_loss"] < run.history[0]["train_loss"]
    checkpoint = Checkpoint.load(run.output_dir / BEST_CHECKPOINT)
    assert checkpoint.quantile_scale is not None  # calibrated like any quantile model
    model = checkpoint.build_model()
    x = torch.randn(2, 20, len(checkpoint.feature_names))
    with torch.no_grad():
        out = model(x, torch.tensor([20, 15]))
    assert out.shape == (2, 20, 1, 3) and (out.diff(dim=-1) >= 0).all()

    metadata = export_trained_model(checkpoint, 30, tmp_path / "model", read_provenance(ingested), pt2=False)
    assert metadata.quantiles == list(LEVELS)
    assert ExportMetadata.read(tmp_path / "model").quantiles == list(LEVELS)
