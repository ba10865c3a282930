"""The training image (the default target), built on the CPU stand-in base and run: the ``docker run`` commands of
docs/container.md with podman in docker's place, then a forecast from the registered model on the mlflow volume.

The commands are read from the page and run as written in a folder that stands for the clone the page's
``$PWD`` is (the bundled raw data in ``data/``), with two exceptions: the run id the training prints
replaces ``<run id>``, and the training reads a one-epoch version of the page's config (three basins, hidden
8, two batches; written to the data volume), since the page's ten epochs of 31 basins take an hour on a CPU.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
import xarray as xr

from hydroseq.config import TrainConfig, dump_config, load_config
from tests.images.conftest import REPO_ROOT, Built, Podman, give_to_the_image_user, volumes

pytestmark = [pytest.mark.slow, pytest.mark.images]

PAGE = REPO_ROOT / "docs" / "container.md"
DOCS_CONFIG = "configs/train_caravan_per_step.yaml"
RUN_ID = "@RUN_ID@"


def _page_commands() -> list[list[str]]:
    """The ``docker run`` commands of the page's bash blocks, as argument lists (``$PWD`` kept as written,
    ``<run id>`` as RUN_ID)."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", PAGE.read_text(), re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        commands += [shlex.split(line.split(" #")[0].replace("<run id>", RUN_ID))
                     for line in joined.splitlines() if line.startswith("docker run")]
    return commands


def _one_epoch_config(path: Path) -> Path:
    values = load_config(REPO_ROOT / DOCS_CONFIG, TrainConfig).model_dump(mode="json")
    values["data"].update({"stations": ["01022500", "02064000", "03015500"], "seq_len": 60, "min_len": 10,
                           "spin_up": 5, "splits": {"train": {"start": "2012-10-01", "end": "2013-09-30"},
                                                    "validation": {"start": "2013-10-01", "end": "2014-03-31"},
                                                    "test": {"start": "2014-04-01", "end": "2014-09-30"}}})
    values["model"]["hidden_size"] = 8
    values["training"].update({"epochs": 1, "max_batches_per_epoch": 2, "threads": 1})
    path.write_text(dump_config(TrainConfig.model_validate(values)))
    return path


def test_the_pages_commands_train_export_and_forecast_then_the_registered_model_forecasts(
        podman: Podman, images: Built, tmp_path: Path) -> None:
    clone = volumes(tmp_path / "clone")
    for folder in ("stations", "daily_caravan_camels_us"):
        shutil.copytree(REPO_ROOT / "data" / folder, clone / "data" / folder)
    _one_epoch_config(clone / "data" / "train_one_epoch.yaml")
    give_to_the_image_user(clone)

    commands = _page_commands()
    assert [command[command.index(images.train) + 1] for command in commands if images.train in command] == [
        "ingest", "train", "export", "forecast"], "the page's commands changed: update this test"
    run_id = ""
    for command in commands:
        args = [word.replace("$PWD", str(clone)).replace(RUN_ID, run_id) for word in command[1:]]
        if "train" in args:
            args[args.index(DOCS_CONFIG)] = "data/train_one_epoch.yaml"
        finished = podman(*args)
        assert finished.returncode == 0, f"podman {shlex.join(args)}: {finished.stderr[-3000:]}"
        if "train" in args:
            printed = re.search(r"MLflow run id: (\w+)", finished.stdout)
            assert printed is not None, finished.stdout[-3000:]
            run_id = printed.group(1)
    assert (clone / "runs" / "model" / "metadata.json").is_file()
    assert (clone / "forecasts" / "forecast_2014-09-30.csv").is_file()
    assert (clone / "mlflow" / "mlruns.db").is_file() and (clone / "mlflow" / "mlartifacts").is_dir()

    name = load_config(REPO_ROOT / DOCS_CONFIG, TrainConfig).tracking.experiment  # registered under it
    promoted = podman.run(clone, images.train, "promote", "--model", name, "--version", "1", "--alias", "champion",
                          "--force")  # one epoch does not beat persistence: the gate would refuse it
    assert promoted.returncode == 0, promoted.stderr[-3000:]
    registered = podman.run(clone, images.train, "-q", "forecast", "--model", f"models:/{name}@champion",
                            "--data", "data/caravan_daily.nc", "--issue-time", "2014-09-30",
                            "--out", "forecasts/registered_2014-09-30.nc")
    assert registered.returncode == 0, registered.stderr[-3000:]
    with xr.open_dataset(clone / "forecasts" / "registered_2014-09-30.nc") as forecast:
        assert (forecast.attrs["model_name"], forecast.attrs["model_version"], forecast.attrs["model_alias"]) == (
            name, "1", "champion")
        assert forecast.sizes["station"] == 31
