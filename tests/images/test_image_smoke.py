"""``make test``'s one image test: the forecast target built alone and the bundled basins forecast in it.

``images/build.sh local forecast`` builds ``hydroseq-forecast`` without the torch stand-in or the train target
(the cold build ``make test`` can afford on two cores). In the container, as user 10001 with the documented
volumes, a read-only root filesystem and no network: ``ingest`` of the 31 bundled basins, then ``forecast``
with the shipped probabilistic model. The same two commands with this checkout's ``hydroseq`` (a folder laid
out like the image's working directory) leave the same bytes. The rest of the image suite (the daily job,
SIGTERM, no torch, the train image) is ``make test-images``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from tests.images.conftest import REPO_ROOT, Built, Podman, data_volume, give_to_the_image_user

pytestmark = [pytest.mark.slow, pytest.mark.image_smoke]

MODEL = "models/caravan-camels-us-daily-probabilistic"
START, ISSUE = "2012-06-01", "2014-06-20"  # two years before the issue day: the model's climate indices
FORECAST = f"forecasts/forecast_{ISSUE}.nc"
COMMANDS = (("ingest", "--config", "data/ingest.yaml", "--out", "data/ingested.nc"),
            ("forecast", "--model", MODEL, "--data", "data/ingested.nc", "--issue-time", ISSUE, "--out", FORECAST))


def _outside(root: Path) -> list[subprocess.CompletedProcess[str]]:
    """COMMANDS with this checkout's hydroseq in ``root``, the shipped models beside the volumes as in the image."""
    (root / "models").symlink_to(REPO_ROOT / "models")
    hydroseq = str(Path(sys.executable).parent / "hydroseq")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_TRACKING", "HYDROSEQ_"))}
    return [subprocess.run([hydroseq, "-q", *command], cwd=root, env=env, capture_output=True, text=True,
                           timeout=300) for command in COMMANDS]


def test_the_forecast_image_built_alone_forecasts_the_bundled_basins_as_the_checkout_does(
        podman: Podman, forecast_image: Built, tmp_path: Path) -> None:
    log = forecast_image.log.read_text()
    assert f"building {forecast_image.forecast}" in log and "building hydroseq:" not in log, log[-3000:]
    assert "BASE_IMAGE=hydroseq-stand-in:torch" not in log, "the forecast build made the torch stand-in"

    container = data_volume(tmp_path / "container", START, ISSUE)
    give_to_the_image_user(container)
    for command in COMMANDS:
        finished = podman.run(container, forecast_image.forecast, "-q", *command)
        assert finished.returncode == 0, f"{command[0]} in the image: {finished.stderr[-3000:]}"

    with xr.open_dataset(container / FORECAST) as forecast:
        assert forecast.sizes["station"] == 31 and list(forecast["lead"].values) == [1, 2, 3]
        quantiles = forecast["streamflow_quantile"].transpose("station", "lead", "quantile").values
        assert np.isfinite(quantiles).all() and (quantiles >= 0).all()
        assert (np.diff(quantiles, axis=-1) >= 0).all(), "quantiles out of order"
        assert (forecast.attrs["model_name"], forecast.attrs["skipped_stations"]) == (Path(MODEL).name, "{}")

    host = data_volume(tmp_path / "host", START, ISSUE)
    for finished in _outside(host):
        assert finished.returncode == 0, f"{finished.args}: {finished.stderr[-3000:]}"
    for volume in ("data", "forecasts"):
        names = sorted(str(path.relative_to(host)) for path in (host / volume).rglob("*") if path.is_file())
        assert names == sorted(str(path.relative_to(container)) for path in (container / volume).rglob("*")
                               if path.is_file()), volume
        differing = [name for name in names if (container / name).read_bytes() != (host / name).read_bytes()]
        assert differing == [], f"not the same bytes in and outside the image: {differing}"
