"""Smoke test of ``benchmarks/`` in the default suite: it imports, parses its command lines, builds
its configs against hydroseq's public API and times one tiny step. The benchmarks' own tests are
in ``benchmarks/tests/`` (``make bench-test``)."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

import pytest

import benchmarks

MODULES = sorted(info.name for info in pkgutil.walk_packages(benchmarks.__path__, "benchmarks.")
                 if not info.name.startswith("benchmarks.tests"))
COMMANDS = ["benchmarks.compare", "benchmarks.bench_batching", "benchmarks.bench_forecast",
            "benchmarks.bench_forecast_training", "benchmarks.bench_ingest", "benchmarks.bench_lstm_paths",
            "benchmarks.ddp_curves", "benchmarks.nh.venv"]


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
    from benchmarks.compare import _parse_args, with_overrides
    from benchmarks.protocol import full_protocol

    args = _parse_args(["--threads", "1", "--epochs", "2", "--updates-per-epoch", "0", "--max-basins", "4"])
    protocol = with_overrides(full_protocol(), args)
    assert (protocol.threads, protocol.epochs, protocol.max_updates_per_epoch, len(protocol.basins)) == (1, 2, None, 4)


def test_benchmark_configs_validate_against_hydroseq(tmp_path: Path) -> None:
    from benchmarks import bench_forecast, bench_forecast_training
    from benchmarks.hydroseq_side import BENCHMARK_MODES, hydroseq_config
    from benchmarks.protocol import full_protocol, quick_protocol

    for protocol in (full_protocol(), quick_protocol()):
        for mode in BENCHMARK_MODES:
            assert hydroseq_config(protocol, mode, tmp_path / "data.nc", tmp_path).data.stations == list(protocol.basins)
    for mode in bench_forecast_training.RECIPES:
        assert bench_forecast_training.recipe(mode, tmp_path / "data.nc", tmp_path, 8, quick=True).data.leads == [1, 2, 3]
    assert bench_forecast.train_config(tmp_path / "data.nc").data.mode == "per_step"


def test_ddp_curves_finds_its_probe() -> None:
    from benchmarks.ddp_curves import PROBE

    assert PROBE.is_file()


def test_one_tiny_lstm_step_is_timed() -> None:
    import torch

    from benchmarks.bench_lstm_paths import make_batch, time_steps

    batch = make_batch(batch_size=4, max_len=40, n_features=3)
    assert time_steps("padded", 8, torch.device("cpu"), batch, repeats=1) > 0
