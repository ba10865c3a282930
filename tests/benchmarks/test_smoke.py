"""The per-stage benchmarks of ``benchmarks/`` run at tiny sizes and report figures that make sense:
every time and rate finite and positive, the rows of their tables the stages they time, and what
does not depend on the clock (observation counts, padding, CPU agreement) exact. Their growth
with stations (``bench_scale``) is tested in ``benchmarks/tests/`` (``make bench-test``)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from benchmarks import (
    bench_batching,
    bench_forecast,
    bench_grib_ingest,
    bench_ingest,
    bench_lstm_paths,
    bench_week_ahead_hindcast,
)


def positive(value: float) -> bool:
    return math.isfinite(value) and value > 0


@pytest.fixture(autouse=True)
def wide_console_and_torch_threads(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Tables printed unabridged; the benchmark's torch thread count undone afterwards."""
    monkeypatch.setenv("COLUMNS", "200")
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def test_lstm_paths_times_both_paths_and_the_cpu_agrees_with_itself(tmp_path: Path, capsys) -> None:
    out = tmp_path / "lstm_paths.json"
    bench_lstm_paths.main(["--device", "cpu", "--hidden", "8", "16", "--batch-size", "4", "--seq-len", "40",
                           "--repeats", "1", "--json", str(out)])
    figures = json.loads(out.read_text())
    assert [(row["hidden"], row["path"]) for row in figures["rows"]] == [
        (8, "packed"), (8, "padded"), (16, "packed"), (16, "padded")]
    for row in figures["rows"]:
        assert positive(row["step_s"])
        assert row["samples_per_s"] == pytest.approx(4 / row["step_s"])
        # lengths in [30, 40]: between 30 and 40 valid steps per sample
        assert 30 * row["samples_per_s"] <= row["valid_timesteps_per_s"] <= 40 * row["samples_per_s"]
    assert figures["max_abs_cpu_device_difference"] == 0.0  # the same model on the same path
    printed = capsys.readouterr().out
    assert "LSTM training step" in printed and "packed" in printed and "padded" in printed


def test_ingest_counts_every_hourly_observation_and_times_each_step(tmp_path: Path, capsys) -> None:
    out = tmp_path / "ingest.json"
    bench_ingest.main(["--stations", "2", "--repeats", "1", "--workers", "--json", str(out)])
    figures = json.loads(out.read_text())
    assert figures["hours_per_station"] == 87_650  # 10 years of the Ebnit hourly series (data/README.md)
    assert figures["observations"] == 2 * 2 * 87_650  # 2 stations x (rain + discharge)
    for key in ("pandas_read_s", "grid_only_s", "ingest_s", "pandas_obs_per_s", "ingest_obs_per_s",
                "ingest_over_pandas"):
        assert positive(figures[key]), key
    assert figures["ingest_obs_per_s"] == pytest.approx(figures["observations"] / figures["ingest_s"], rel=0.01)
    assert figures["dask"] == {}
    printed = capsys.readouterr().out
    for row in ("pandas read_csv + parse times", "hydroseq per-station gridding", "hydroseq ingest (all of it)"):
        assert row in printed


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:--seq-len 30 differs from the training data.seq_len")  # an untrained model anyway
def test_forecast_times_the_forecast_and_both_bare_models(tmp_path: Path, capsys) -> None:
    out = tmp_path / "forecast.json"  # a 30-step export: about a quarter of the export time of 365 steps
    bench_forecast.main(["--stations", "40", "--days", "365", "--seq-len", "30", "--batch-size", "64",
                         "--repeats", "1", "--json", str(out)])
    figures = json.loads(out.read_text())
    assert figures["stations"] == 62  # the 31 bundled basins, copied until there are at least 40
    assert set(figures["seconds"]) == {"hydroseq forecast", "bare onnxruntime", "bare torch"}
    for what, seconds in figures["seconds"].items():
        assert positive(seconds), what
        assert figures["stations_per_second"][what] == pytest.approx(62 / seconds)
    printed = capsys.readouterr().out
    assert "forecast of 62 stations" in printed
    for row in figures["seconds"]:
        assert row in printed


@pytest.mark.slow
def test_batching_times_assembly_and_loaders_and_counts_padding(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)  # the benchmark changes to the project root; undone after the test
    out = tmp_path / "batching.json"
    bench_batching.main(["--data", str(tmp_path / "caravan.nc"), "--repeats", "1", "--loader-batches", "2",
                         "--out", str(out), "--cache-dir", str(tmp_path / "cache")])
    figures = json.loads(out.read_text())
    for mode in ("sequence", "per_step"):
        mode_figures = figures[mode]
        assert mode_figures["samples"] > 0 and mode_figures["features"] > 0
        assert all(positive(value) for value in mode_figures["collate"].values())
        assert [loader["workers"] for loader in mode_figures["loader"]] == [0, 2]
        for loader in mode_figures["loader"]:
            assert loader["samples"] == 2 * mode_figures["batch_size"]
            assert positive(loader["samples_per_s"]) and positive(loader["first_pass_samples_per_s"])
        padding = mode_figures["padding"]
        assert set(padding) == {"global_pad", "random", "bucket"}
        assert len({strategy["valid_steps"] for strategy in padding.values()}) == 1  # the same samples
        assert all(strategy["samples"] == mode_figures["samples"] for strategy in padding.values())
        assert all(0 <= strategy["padding_ratio"] < 1 for strategy in padding.values())
        assert padding["bucket"]["padding_ratio"] <= padding["random"]["padding_ratio"]
    printed = capsys.readouterr().out
    assert "Batch assembly" in printed and "Padding per strategy" in printed


@pytest.mark.slow
def test_grib_ingest_reads_every_daily_run_and_counts_its_messages(tmp_path: Path, capsys) -> None:
    out = tmp_path / "grib_ingest.json"
    figures = bench_grib_ingest.main(["--days", "3", "--last-step", "192", "--step-hours", "12", "--json", str(out)])
    assert json.loads(out.read_text()) == json.loads(json.dumps(figures))
    assert (figures["runs"], figures["steps_per_run"], figures["messages"]) == (3, 17, 3 * 17 * 2)
    assert (figures["stations"], figures["leads"], figures["issues_with_a_forecast"]) == (31, 7, 3)
    for key in ("ingest_s", "ingest_cpu_s", "runs_per_s", "messages_per_s", "grib_bytes", "output_bytes"):
        assert positive(figures[key]), key
    assert figures["messages_per_s"] == pytest.approx(figures["messages"] / figures["ingest_s"])
    assert "ingest of 3 daily GRIB2 runs" in capsys.readouterr().out


@pytest.mark.slow
def test_week_ahead_hindcast_forecasts_every_basin_issue_and_lead(tmp_path: Path, capsys) -> None:
    """Three issue days (the shipped week-ahead model if models/ holds it, else the stand-in trained for two
    batches and exported: most of the time)."""
    figures = bench_week_ahead_hindcast.main(["--days", "3", "--json", str(tmp_path / "hindcast.json")])
    assert (figures["stations"], figures["issues"], figures["leads"]) == (31, 3, [1, 2, 3, 4, 5, 6, 7])
    assert figures["forecasts"] == 93 and figures["seq_len"] == 365
    assert figures["forecast_inputs"] == ["total_precipitation_sum_forecast", "temperature_2m_mean_forecast"]
    assert positive(figures["hindcast_s"]) and positive(figures["hindcast_cpu_s"])
    assert figures["forecasts_per_s"] == pytest.approx(93 / figures["hindcast_s"])
    printed = capsys.readouterr().out
    assert "hindcast of 31 basins x 3 issue days" in printed and "hydroseq forecast (s, median)" in printed
