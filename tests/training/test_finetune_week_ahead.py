"""Fine-tuning a week-ahead model on an archive of issued weather forecasts read as GRIB2.

Two months of daily 00 UTC runs (0-192 h by 12 h: lead 7 of an issue 8 h after the run ends at 176 h) are
written with ecCodes by the example runs' writer (``data/forecast_grib2/make_runs.py``: the reanalysis of
three bundled basins laid out as a run, not a forecast) and ingested with the shipped HRES config's
sources and static attributes, horizon 7, on a grid that starts two years earlier (the climate indices).
A tiny week-ahead model with the shipped fine-tuning config's layout (``configs/finetune_caravan_week_ahead.yaml``:
leads 1-7, a correction of a quantile base of leads 1-3 by both forecast inputs) is trained on two basins from a
tiny base and exported; ``hydroseq train --config ... --data <the GRIB2 ingest> --init-from <week-ahead>`` then
fine-tunes it on the third basin, and the fine-tuned model is exported and checked.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch
import xarray as xr
import yaml
from mlflow.tracking import MlflowClient

from benchmarks.grib_runs import run_writer
from hydroseq.cli import main
from hydroseq.config import TrainConfig, load_config, validate_config
from hydroseq.dataset import FeatureLayout
from hydroseq.errors import ExitCode
from hydroseq.export import METADATA_FILE, ExportMetadata
from hydroseq.export.exporter import export_trained_model
from hydroseq.export.source import read_provenance
from hydroseq.model import get_model
from hydroseq.training import train
from hydroseq.training.checkpoint import BEST_CHECKPOINT, WEIGHTS_FILE, Checkpoint
from hydroseq.training.init_from import check_same_layout
from tests.fixtures import store_uri
from tests.ingest.grib_builders import STATIONS

REFERENCES = pd.date_range("2014-08-01 00:00", "2014-10-01 00:00", freq="1D")  # due up to the last issue
STEPS = np.arange(0, 193, 12)
BASE_STATIONS, NEW_STATIONS = STATIONS[:2], STATIONS[2:]
INPUTS = ["total_precipitation_sum_forecast", "temperature_2m_mean_forecast"]
LEADS = [1, 2, 3, 4, 5, 6, 7]


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory, repo_root: Path) -> Path:
    """The basins' gauges and forcing with the written runs ingested beside them (horizon 7)."""
    folder = tmp_path_factory.mktemp("archive")
    writer = run_writer()
    basins = writer.Reanalysis.load(REFERENCES[0], REFERENCES[-1] + pd.Timedelta(hours=int(STEPS[-1])), STATIONS)
    files = writer.write_runs(folder / "runs", basins, REFERENCES, STEPS)
    assert len(files) == 62 and files[0].name == "20140801000000-192h-oper-fc.grib2"
    config = yaml.safe_load((repo_root / "configs" / "ingest_grib2_hres.yaml").read_text())
    config["stations"] = {**config["stations"], "path": str(repo_root / config["stations"]["path"]), "ids": STATIONS}
    del config["stations"]["outlines"]
    config["sources"][0]["path"] = str(repo_root / config["sources"][0]["path"])
    config["grid"].update(start="2012-07-01", end="2014-09-30")
    source = config["forecast_sources"][0]
    del source["extraction"]  # the cell holding each gauge (no outlines needed)
    source.update(name="archive of daily runs", path=str(folder / "runs" / "*.grib2"), steps=["0/192/12"],
                  latency="8h", issue_frequency="1D")
    (folder / "ingest.yaml").write_text(yaml.safe_dump(config))
    data = folder / "archive.nc"
    assert main(["ingest", "--config", str(folder / "ingest.yaml"), "--out", str(data), "-q"]) == 0
    return data


def _config(repo_root: Path, data: Path, work: Path, stations: list[str], **training: object) -> dict:
    """The shipped fine-tuning config at test size: the same inputs, leads, roll-out and quantile head."""
    config = yaml.safe_load((repo_root / "configs" / "finetune_caravan_week_ahead.yaml").read_text())
    config["data"].update(path=str(data), stations=stations, seq_len=30, min_len=5, spin_up=5,
                          cache_dir=str(work / "cache"),
                          splits={"train": {"start": "2014-08-01", "end": "2014-08-31"},
                                  "validation": {"start": "2014-09-01", "end": "2014-09-20"},
                                  "test": {"start": "2014-09-21", "end": "2014-09-30"}})
    config["model"].update(hidden_size=8, forecast_hidden_size=4, base_correction={"base_leads": [1, 2, 3],
                                                                                  "base_members": 1})
    config["training"].update(epochs=1, max_batches_per_epoch=3, ensemble=1, patience=None,
                              output_dir=str(work / "train"), **training)
    config["tracking"].update(tracking_uri=store_uri(work), artifact_root=str(work / "mlartifacts"))
    return config


def _export(checkpoint: Path, out: Path, data: Path) -> ExportMetadata:
    """The checkpoint exported as a model directory (ONNX and the weights; no torch.export program: seconds)."""
    return export_trained_model(Checkpoint.load(checkpoint), 30, out, read_provenance(data), pt2=False)


def test_the_finetuning_config_keeps_the_week_ahead_recipe_s_inputs_and_network(repo_root: Path) -> None:
    """What --init-from refuses to change: the fine-tuning config's data layout and network are the recipe's."""
    recipe = load_config(repo_root / "configs" / "train_caravan_regional_week_ahead.yaml", TrainConfig)
    config = load_config(repo_root / "configs" / "finetune_caravan_week_ahead.yaml", TrainConfig)
    base = SimpleNamespace(checkpoint=SimpleNamespace(config=recipe), source="the recipe")  # what the check reads
    check_same_layout(config, base)  # type: ignore[arg-type]
    assert config.training.init_from == "models/caravan-camels-us-daily-week-ahead"


@pytest.mark.slow
def test_the_week_ahead_model_is_finetuned_on_grib2_runs_from_its_base(archive: Path, repo_root: Path,
                                                                         tmp_path: Path, capsys) -> None:
    with xr.open_dataset(archive) as data:  # the archive as the fine-tuning reads it: a week of leads per issue
        forecast = data["total_precipitation_sum_forecast"]
        assert forecast.dims == ("station", "time", "lead") and data["lead"].values.tolist() == LEADS
        assert np.isfinite(forecast.sel(time="2014-08-15T08:00").values).all()

    base_config = _config(repo_root, archive, tmp_path / "base", BASE_STATIONS, seed=7)  # not the fine-tuning's seed
    del base_config["training"]["init_from"]  # the probabilistic base: no weather forecast, leads 1-3
    base_config["data"].update(forecast_inputs=[], leads=[1, 2, 3])
    base_config["model"].update(forecast_rollout=False, forecast_hidden_size=None, base_correction=None)
    base_run = train(validate_config(base_config, TrainConfig), show_progress=False)
    _export(base_run.output_dir / BEST_CHECKPOINT, tmp_path / "base_model", archive)
    week_config = _config(repo_root, archive, tmp_path / "week", BASE_STATIONS, seed=7,
                          init_from=str(tmp_path / "base_model"))
    week_run = train(validate_config(week_config, TrainConfig), show_progress=False)
    _export(week_run.output_dir / BEST_CHECKPOINT, tmp_path / "week_model", archive)
    base = Checkpoint.load(tmp_path / "week_model" / WEIGHTS_FILE)

    tuned_config = _config(repo_root, tmp_path / "elsewhere.nc", tmp_path / "tuned", NEW_STATIONS)
    (tmp_path / "finetune.yaml").write_text(yaml.safe_dump(tuned_config))
    capsys.readouterr()
    assert main(["train", "--config", str(tmp_path / "finetune.yaml"), "--data", str(archive), "--init-from",
                 str(tmp_path / "week_model"), "-q", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["base_val_median_nse"] is not None  # the base scored on the new basin first
    tags = MlflowClient(summary["tracking_uri"]).get_run(summary["run_id"]).data.tags
    assert tags["init_from"] == str(tmp_path / "week_model") and tags["base_run_id"] == base.run_id

    metadata = _export(Path(summary["output_dir"]) / BEST_CHECKPOINT, tmp_path / "tuned_model", archive)
    assert metadata.leads == LEADS and metadata.forecast_horizon == 7
    assert [item["variable"] for item in metadata.forecast_inputs] == INPUTS
    assert metadata.quantiles == [0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95]
    assert metadata.train_config is not None and metadata.train_config.model.base_correction is not None
    assert metadata.train_config.data.stations == NEW_STATIONS
    assert metadata.scalers == base.scalers.to_dict()  # the base's scalers, not refitted on the new basin

    tuned = Checkpoint.load(tmp_path / "tuned_model" / WEIGHTS_FILE)
    config = validate_config(tuned_config, TrainConfig)
    torch.manual_seed(config.training.seed)  # where a run of the fine-tuning config without --init-from starts
    fresh = get_model(config.model, len(FeatureLayout.from_config(config.data).names), 7, "per_step",
                      data=config.data).state_dict()
    assert tuned.model_state.keys() == base.model_state.keys() == fresh.keys()
    for name, start in base.model_state.items():  # three small steps from the week-ahead model's weights
        assert (tuned.model_state[name] - start).abs().max().item() < 0.05, name
        if name.startswith("base.") or name in ("base_scale", "lead_gate"):  # its frozen base and its gate
            assert torch.equal(tuned.model_state[name], start), name
    from_base = sum(float((tuned.model_state[name] - start).norm()) for name, start in base.model_state.items())
    from_fresh = sum(float((tuned.model_state[name] - start).norm()) for name, start in fresh.items())
    assert from_fresh > 10 * from_base  # not a fresh start
    head = [name for name in base.model_state if name.startswith("correction.head")]  # the correction's head
    assert head and all(tuned.model_state[name].shape == base.model_state[name].shape for name in head)
    assert tuned.quantile_scale is None  # a correction keeps its base's calibration (no forecast: the base exactly)


WEEK_AHEAD = Path("models") / "caravan-camels-us-daily-week-ahead"


def _shipped_base_config(repo_root: Path, data: Path, work: Path, base: Path) -> Path:
    """The shipped fine-tuning config, one epoch of the shipped week-ahead model (or ``base``) on the archive's
    three basins (``min_len`` 20: the splits hold a month of runs); the file written."""
    config = yaml.safe_load((repo_root / "configs" / "finetune_caravan_week_ahead.yaml").read_text())
    config["data"].update(path=str(data), stations=STATIONS, min_len=20, spin_up=5, cache_dir=str(work / "cache"),
                          splits={"train": {"start": "2014-08-01", "end": "2014-08-31"},
                                  "validation": {"start": "2014-09-01", "end": "2014-09-20"},
                                  "test": {"start": "2014-09-21", "end": "2014-09-30"}})
    config["training"].update(epochs=1, patience=None, output_dir=str(work / "train"), init_from=str(base))
    config["tracking"].update(tracking_uri=store_uri(work), artifact_root=str(work / "mlartifacts"))
    path = work / "finetune.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.slow
def test_the_shipped_week_ahead_model_is_finetuned_and_its_export_passes_the_parity_check(
        archive: Path, repo_root: Path, tmp_path: Path, capsys) -> None:
    """README step 3 with the shipped week-ahead model: one epoch on the GRIB2 archive's three basins ends with exit
    0. The run's model is exported (N = 365) and checked against torch relative to its outputs' size: on the random
    parity batch the fine-tuned network's outputs reach about 57 (scaled) and onnxruntime differed by 1.14e-5,
    which the former absolute tolerance of 1e-5 refused (exit 70)."""
    config = _shipped_base_config(repo_root, archive, tmp_path, repo_root / WEEK_AHEAD)
    capsys.readouterr()
    assert main(["train", "--config", str(config), "-q", "--json"]) == ExitCode.OK
    summary = json.loads(capsys.readouterr().out)
    assert summary["base_val_median_nse"] is not None and summary["epochs_completed"] == 1
    (logged,) = [path.parent for path in (tmp_path / "mlartifacts").rglob(METADATA_FILE)
                 if path.parent.name == "exported_model"]
    metadata = ExportMetadata.read(logged)
    assert metadata.seq_len == 365 and metadata.leads == LEADS and metadata.quantiles
    assert metadata.parity_max_abs_diff is not None and 0 < metadata.parity_max_abs_diff < 1e-3


def test_a_base_directory_with_metadata_that_is_not_json_is_refused_in_one_line(archive: Path, repo_root: Path,
                                                                               tmp_path: Path, capsys) -> None:
    """A damaged copy of the shipped model: metadata.json not JSON, or its weights changed, is refused before training
    (exit 4, one line naming the file); it was fine-tuned and failed at the export (exit 70)."""
    base = tmp_path / "base"
    shutil.copytree(repo_root / WEEK_AHEAD, base)
    (base / METADATA_FILE).write_text('{"seq_len": 365,')
    config = _shipped_base_config(repo_root, archive, tmp_path, base)
    capsys.readouterr()
    assert main(["train", "--config", str(config)]) == ExitCode.INPUT_DATA
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"hydroseq train: error: {base / METADATA_FILE}: unreadable model metadata (") and (
        "the base model directory is damaged" in error and "\n" not in error)
    shutil.copy(repo_root / WEEK_AHEAD / METADATA_FILE, base / METADATA_FILE)
    with (base / WEIGHTS_FILE).open("ab") as weights:
        weights.write(b"\0")
    assert main(["train", "--config", str(config)]) == ExitCode.INPUT_DATA
    assert capsys.readouterr().err.strip() == (f"hydroseq train: error: {base / WEIGHTS_FILE}: checksum differs from "
                                               "SHA256SUMS: the base model directory was modified or copied "
                                               "incompletely")


def test_a_file_in_other_units_than_the_base_s_is_refused_as_the_forecast_refuses_it(archive: Path, repo_root: Path,
                                                                                     tmp_path: Path, edited_copy,
                                                                                     capsys) -> None:
    """The archive's forecast precipitation in m (the values / 1000): the fine-tuning keeps the base's scalers (in
    mm), so it would train on amounts a thousand times too small; --init-from refuses the file in one line (exit 4),
    naming the variable as hydroseq forecast does with the same model and file."""
    name = "total_precipitation_sum_forecast"

    def in_metres(dataset: xr.Dataset) -> None:
        dataset[name] = (dataset[name] / 1000).assign_attrs({**dataset[name].attrs, "units": "m"})
    metres = edited_copy(archive, tmp_path / "archive_in_m.nc", in_metres)
    config = _shipped_base_config(repo_root, archive, tmp_path, repo_root / WEEK_AHEAD)
    capsys.readouterr()
    assert main(["train", "--config", str(config), "--data", str(metres)]) == ExitCode.INPUT_DATA
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"hydroseq train: error: {metres}: variable {name} is in m; the base model was trained "
                            "on mm (--init-from keeps the base's scalers") and "\n" not in error
    assert main(["forecast", "--model", str(repo_root / WEEK_AHEAD), "--data", str(metres), "--issue-time",
                 "2014-09-29", "--out", str(tmp_path / "f.nc")]) == ExitCode.INPUT_DATA
    assert f"{metres}: variable {name} is in m; the model was trained on mm" in capsys.readouterr().err
    assert not (tmp_path / "train" / BEST_CHECKPOINT).exists()
