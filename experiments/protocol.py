"""The experiment both tools run: basins, inputs, split, model size, batch size, loss, threads.

One :class:`Protocol` object drives NeuralHydrology and hydroseq alike, so the two cannot drift
apart. The full protocol is the one of the training issue (31 Caravan CAMELS-US basins, water
years 1982-2001 for training, 2002-2005 for validation, 2006-2014 for testing); the quick one is
CI-sized (a few basins, short periods, one epoch) and only proves that the harness works.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace
from pathlib import Path

from benchmarks.timing import default_threads

REPO_ROOT = Path(__file__).resolve().parents[1]
CARAVAN_DIR = REPO_ROOT / "data" / "daily_caravan_camels_us"
HYDROSEQ_PER_STEP_CONFIG = REPO_ROOT / "configs" / "train_caravan_per_step.yaml"

DYNAMIC_INPUTS = ("total_precipitation_sum", "temperature_2m_mean", "potential_evaporation_sum")
# Used until the hydroseq per-step config exists; from then on that config is the source of truth.
STATIC_INPUTS = (
    "area_km2", "elev_mean_m", "slope_mean_m_per_km", "p_mean", "pet_mean", "aridity", "frac_snow",
    "moisture_index", "seasonality", "high_prec_freq", "high_prec_dur", "low_prec_freq", "low_prec_dur",
)
QUICK_BASINS = ("01022500", "01547700", "02064000")


@dataclass(frozen=True)
class Span:
    """A closed interval of whole days, ``start <= day <= end``."""

    start: dt.date
    end: dt.date

    def days(self) -> int:
        """Number of days in the span."""
        return (self.end - self.start).days + 1


@dataclass(frozen=True)
class Protocol:
    """Everything that must be identical for the two tools.

    Attributes
    ----------
    basins
        Station ids (Caravan CSV stems, leading zeros kept).
    train, validation, test
        The split; the validation and test periods never feed training.
    seq_length
        Input length of one NeuralHydrology sample, and hydroseq's ``seq_len``.
    epochs
        Epochs of NeuralHydrology and of hydroseq's sequence mode (one sample per target day).
    per_step_epochs
        Epochs of hydroseq's per-step mode (one sample per year-long chunk: an epoch is about
        365 times fewer samples, so it takes more of them).
    max_updates_per_epoch
        Cap on optimiser steps per epoch for the one-sample-per-day tools (NeuralHydrology,
        hydroseq sequence): an "epoch" is then a random share of the samples, which gives the
        time-to-accuracy curve more points. ``None`` for full epochs.
    threads
        torch intra-op threads for both tools.
    lagged_target
        Observed target up to the day before the target day as an input. hydroseq forecasts
        Q(t+1) from inputs up to t (``data.lagged_target``, lead 1); NeuralHydrology predicts Q(t)
        from every input shifted by one day (``lagged_features``), so both see the same days.
    """

    basins: tuple[str, ...]
    train: Span
    validation: Span
    test: Span
    dynamic_inputs: tuple[str, ...] = DYNAMIC_INPUTS
    static_inputs: tuple[str, ...] = STATIC_INPUTS
    target: str = "streamflow"
    seq_length: int = 365
    hidden_size: int = 64
    batch_size: int = 256
    learning_rate: float = 1e-3
    epochs: int = 30
    per_step_epochs: int = 100
    max_updates_per_epoch: int | None = None
    seed: int = 0
    lagged_target: bool = False
    threads: int = field(default_factory=lambda: default_threads())
    name: str = "full"

    def with_threads(self, threads: int) -> Protocol:
        """The same protocol with another thread count."""
        return replace(self, threads=threads)

    def with_basins(self, basins: tuple[str, ...]) -> Protocol:
        """The same protocol on other basins."""
        return replace(self, basins=tuple(basins))


def all_basins(caravan_dir: Path = CARAVAN_DIR) -> tuple[str, ...]:
    """The basin ids listed in the bundled ``basins.txt``."""
    lines = (caravan_dir / "basins.txt").read_text().split()
    return tuple(line.strip() for line in lines if line.strip())


def full_protocol(caravan_dir: Path = CARAVAN_DIR) -> Protocol:
    """The issue's protocol (all bundled basins, the water-year split), sized for 2 shared CPU cores.

    A whole NeuralHydrology epoch over 31 basins x 20 years is about 226,000 samples, 5-20 minutes
    on 2 cores; so an epoch here is capped at 60 updates (15,360 random samples) and there are 8
    of them (per-step hydroseq: up to 200 whole epochs of its 620 year-long chunks, with its own
    early stopping). The whole run, with both sequence runs, took 15 minutes on the 2 cores.
    ``python -m experiments.compare --epochs 30 --updates-per-epoch 0`` runs whole epochs (hours).
    """
    return Protocol(
        basins=all_basins(caravan_dir),
        train=Span(dt.date(1981, 10, 1), dt.date(2001, 9, 30)),
        validation=Span(dt.date(2001, 10, 1), dt.date(2005, 9, 30)),
        test=Span(dt.date(2005, 10, 1), dt.date(2014, 9, 30)),
        static_inputs=hydroseq_static_inputs(),
        epochs=8,
        per_step_epochs=200,
        max_updates_per_epoch=60,
        name="full",
    )


def quick_protocol() -> Protocol:
    """CI-sized: three basins, one water year per period, one capped epoch."""
    return Protocol(
        basins=QUICK_BASINS,
        train=Span(dt.date(2000, 10, 1), dt.date(2001, 9, 30)),
        validation=Span(dt.date(2001, 10, 1), dt.date(2002, 3, 31)),
        test=Span(dt.date(2005, 10, 1), dt.date(2006, 3, 31)),
        static_inputs=hydroseq_static_inputs(),
        epochs=1,
        per_step_epochs=1,
        max_updates_per_epoch=2,
        name="quick",
    )


def hydroseq_static_inputs(config_path: Path = HYDROSEQ_PER_STEP_CONFIG) -> tuple[str, ...]:
    """Static attributes of hydroseq's per-step Caravan config, or the issue's list before it exists."""
    if not config_path.exists():
        return STATIC_INPUTS
    from hydroseq.config import TrainConfig, load_config

    statics = load_config(config_path, TrainConfig).data.static_inputs
    return tuple(statics) if statics else STATIC_INPUTS
