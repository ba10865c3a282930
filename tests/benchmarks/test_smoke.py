"""Smoke test of ``benchmarks/`` in the default suite: it imports, parses its command lines, builds
its configs against hydroseq's public API and measures the padding of made-up lengths. The
benchmarks' own tests are in ``benchmarks/tests/`` (``make bench-test``)."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

import pytest

import benchmarks

MODULES = sorted(info.name for info in pkgutil.walk_packages(benchmarks.__path__, "benchmarks.")
                 if not info.name.startswith("benchmarks.tests"))
COMMANDS = ["experiments.compare", "benchmarks.bench_batching", "benchmarks.bench_forecast",
            "experiments.bench_forecast_training", "benchmarks.bench_ingest", "benchmarks.bench_lstm_paths",
            "experiments.bench_regional", "experiments.ddp_curves", "experiments.nh.venv", "experiments.noise_table"]


@pytest.mark.parametrize("name", MODULES)
def test_every_benchmark_module_imports(name: str) -> None:
    importlib.import_module(name)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_benchmark_command_answers_help(name: str, monkeypatch, capsys) -> None:
    main = importlib.import_module(name).main
    monkeypatch.setattr(sys, "argv", [name, "--help"])
    with pytest.raises(SystemExit) as exit_status:
        main()
    assert exit_status.value.code == 0
    assert "usage:" in capsys.readouterr().out


def test_compare_applies_its_command_line_to_the_protocol() -> None:
    from experiments.compare import _parse_args, with_overrides
    from experiments.protocol import full_protocol

    args = _parse_args(["--threads", "1", "--epochs", "2", "--updates-per-epoch", "0", "--max-basins", "4"])
    protocol = with_overrides(full_protocol(), args)
    assert (protocol.threads, protocol.epochs, protocol.max_updates_per_epoch, len(protocol.basins)) == (1, 2, None, 4)


def test_benchmark_configs_validate_against_hydroseq(tmp_path: Path) -> None:
    from benchmarks import bench_forecast
    from experiments import bench_forecast_training
    from experiments.hydroseq_side import BENCHMARK_MODES, hydroseq_config
    from experiments.protocol import full_protocol, quick_protocol

    for protocol in (full_protocol(), quick_protocol()):
        for mode in BENCHMARK_MODES:
            config = hydroseq_config(protocol, mode, tmp_path / "data.nc", tmp_path)
            assert config.data.stations == list(protocol.basins)
    for mode in bench_forecast_training.RECIPES:
        config = bench_forecast_training.recipe(mode, tmp_path / "data.nc", tmp_path, 8, quick=True)
        assert config.data.leads == [1, 2, 3]
    assert bench_forecast.train_config(tmp_path / "data.nc").data.mode == "per_step"


def test_ddp_curves_finds_its_probe() -> None:
    from experiments.ddp_curves import PROBE

    assert PROBE.is_file()


def test_padding_share_is_measured_on_made_up_lengths() -> None:
    import numpy as np

    from experiments.padding import epoch_batches, slot_counts

    lengths = np.random.default_rng(0).integers(30, 366, 2000)
    share = {}
    for strategy in ("random, padded", "bucketed, padded"):
        valid, slots = slot_counts(lengths, epoch_batches(lengths, strategy, 64, seed=0), packed=False)
        assert valid == int(lengths.sum())
        share[strategy] = 1 - valid / slots
    assert share["bucketed, padded"] < share["random, padded"]
