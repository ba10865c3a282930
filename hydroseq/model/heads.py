"""Model heads: what the network's last layer predicts per lead, how it is trained, and what it hands on.

A head is chosen by name (``model.head``; by default ``quantile`` when ``model.quantiles`` is set, else
``point``) from :data:`HEADS`, so a new kind of output (a mixture density, as NeuralHydrology's CMAL)
is one new class and one table line. The network asks its head how many raw numbers a lead needs
(:attr:`Head.outputs_per_lead`) and lets it shape them (:meth:`Head.shape`), add the observed-discharge
skip (:meth:`Head.shift`) and apply the spread calibration (:meth:`Head.calibrate`); the training step
asks :func:`get_loss` for the loss. Everything downstream of the network (prediction, calibration,
export, forecast, serving, the pages) sees one of two forms: a point forecast ``[..., leads]``
(:attr:`Head.levels` is None) or quantiles ``[..., leads, levels]`` at :attr:`Head.levels`, with the
median among them; a head of another kind hands on quantiles and trains on them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, Protocol

import torch
from torch import Tensor

from hydroseq.config import ModelConfig, TrainConfig
from hydroseq.errors import ConfigError
from hydroseq.model.losses import masked_mse, nse_loss
from hydroseq.model.quantile_head import ordered_quantiles, pinball_loss, scale_spread


class Loss(Protocol):
    """``loss(pred, target, mask, station_std) -> scalar`` for a batch (``station_std``: each sample's station)."""

    def __call__(self, pred: Tensor, target: Tensor, mask: Tensor | None, station_std: Tensor) -> Tensor:
        """The batch's loss."""
        ...


class Head:
    """A point forecast per lead (the base class is the ``point`` head): trained with MSE or NSE*."""

    name: ClassVar[str] = "point"

    def __init__(self, config: ModelConfig) -> None:
        self.config = config

    @property
    def levels(self) -> tuple[float, ...] | None:
        """The quantile levels handed on (None: a point forecast)."""
        return None

    @property
    def outputs_per_lead(self) -> int:
        """Raw numbers the network's last layer gives per lead."""
        return 1

    def shape(self, raw: Tensor, n_outputs: int) -> Tensor:
        """The output handed on from the last layer's ``raw [..., n_outputs * outputs_per_lead]``."""
        return raw

    def shift(self, output: Tensor, skip: Tensor) -> Tensor:
        """``output`` moved by the gated skip ``[..., n_outputs]`` (the newest observed discharge)."""
        return output + skip

    def calibrate(self, output: Tensor, scale: Tensor) -> Tensor:
        """``output`` with the spread calibration ``[n_outputs, levels]`` applied (nothing for a point)."""
        return output

    def loss(self, training: TrainConfig) -> Loss:
        """The loss of ``training.loss`` (``mse`` or ``nse``)."""
        if training.training.loss == "nse":
            return lambda pred, target, mask, station_std: nse_loss(pred, target, mask, station_std)
        return lambda pred, target, mask, station_std: masked_mse(pred, target, mask)


class QuantileHead(Head):
    """Quantiles at ``model.quantiles`` that never cross (:mod:`.quantile_head`), trained with the pinball loss
    plus ``training.median_nse_weight`` times the NSE* loss of the median."""

    name: ClassVar[str] = "quantile"

    @property
    def levels(self) -> tuple[float, ...]:
        """``model.quantiles``."""
        if not self.config.quantiles:
            raise ConfigError(f"model.head: {self.name} needs model.quantiles (the levels it predicts)")
        return tuple(self.config.quantiles)

    @property
    def median(self) -> int:
        """Index of the median among :attr:`levels`."""
        return self.levels.index(0.5)

    @property
    def outputs_per_lead(self) -> int:
        """One raw number per level."""
        return len(self.levels)

    def shape(self, raw: Tensor, n_outputs: int) -> Tensor:
        """The median and softplus distances outwards from it: quantiles that never cross."""
        return ordered_quantiles(raw.unflatten(-1, (n_outputs, len(self.levels))), self.median)

    def shift(self, output: Tensor, skip: Tensor) -> Tensor:
        """Every level moved alike."""
        return output + skip.unsqueeze(-1)

    def calibrate(self, output: Tensor, scale: Tensor) -> Tensor:
        """Each level's distance from the median scaled (:func:`.quantile_head.scale_spread`)."""
        return scale_spread(output, scale, self.median)

    def loss(self, training: TrainConfig) -> Loss:
        """The pinball loss of the levels, plus the median's NSE* loss times ``training.median_nse_weight``."""
        levels, median, weight = torch.tensor(self.levels), self.median, training.training.median_nse_weight

        def pinball(pred: Tensor, target: Tensor, mask: Tensor | None, station_std: Tensor) -> Tensor:
            loss = pinball_loss(pred, target, mask, levels.to(pred.device), station_std)
            if weight:
                loss = loss + weight * nse_loss(pred[..., median], target, mask, station_std)
            return loss

        return pinball


HEADS: dict[str, Callable[[ModelConfig], Head]] = {"point": Head, "quantile": QuantileHead}


def head_name(config: ModelConfig) -> str:
    """``model.head``, or its default: ``quantile`` with ``model.quantiles``, else ``point``."""
    return config.head or ("quantile" if config.quantiles else "point")


def get_head(config: ModelConfig) -> Head:
    """The head ``config`` names (:data:`HEADS`).

    Raises
    ------
    ConfigError
        If no head of that name is registered.
    """
    name = head_name(config)
    if name not in HEADS:
        raise ConfigError(f"model.head: no head {name!r} (known: {', '.join(sorted(HEADS))})")
    return HEADS[name](config)


def get_loss(config: TrainConfig) -> Loss:
    """The training loss of ``config``'s head and ``training.loss``."""
    return get_head(config.model).loss(config)
