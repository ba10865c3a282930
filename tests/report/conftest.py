"""The forecasts the page tests read, made once per test run (shared by the xdist workers through a file lock).

A per-step quantile model of the shared chain's config (seven levels, leads 1-3, the lagged discharge with
its "observed" flag; untrained, as the parity tests use it) is exported and run with ``hydroseq forecast``'s
API on the bundled basins (2011-2014): a forecast issued 2014-09-30, the one of the day before, and a
hindcast of 2014-07-01..2014-09-30 with its scores. In the data file one station has no observed discharge
at all (ungauged), another carries a name that is HTML and a third lacks the precipitation of the issue day
(not forecast); the thresholds table leaves one station out.
The chain's own deterministic model forecasts the same day. Then the three pages are written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from filelock import FileLock

from benchmarks.browser import PageSession, file_url, page_session
from tests.conftest import TrainedRun
from tests.fixtures import shared_dir

LEVELS = [0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95]
ISSUE, PREVIOUS, HINDCAST = "2014-09-30", "2014-09-29", "2014-07-01..2014-09-30"
UNGAUGED = "01052500"
HTML_NAMED = "01547700"
HTML_NAME = "<img src=x onerror=\"window.injected=1\">Marsh Creek</td><script>window.injected=2</script>"
NO_THRESHOLDS = "02064000"
SKIPPED = "02011460"  # no precipitation at the issue step: not forecast


@pytest.fixture(scope="session")
def report_inputs(trained: TrainedRun, ingested: Path, exported: Path,
                  tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Paths of the data file, the forecasts, the hindcast and the pages (see the module docstring)."""
    folder = shared_dir(tmp_path_factory, "report_pages")
    with FileLock(str(folder / "build.lock")):
        done = folder / "paths.json"
        if not done.exists():
            done.write_text(json.dumps({name: str(path) for name, path in
                                        _build(trained, ingested, exported, folder).items()}))
        return {name: Path(path) for name, path in json.loads(done.read_text()).items()}


def _build(trained: TrainedRun, ingested: Path, exported: Path, folder: Path) -> dict[str, Path]:
    from hydroseq.forecast import run_forecast
    from hydroseq.report import write_report

    data = _data_file(ingested, folder / "data.nc")
    thresholds = _thresholds(data, folder / "thresholds.csv")
    model = _quantile_model(trained, data, folder / "model")
    paths = {"data": data, "model": model, "thresholds": thresholds, "forecast": folder / "forecast_2014-09-30.nc",
             "previous": folder / "forecast_2014-09-29.nc", "hindcast": folder / "hindcast.nc",
             "deterministic": folder / "deterministic_2014-09-30.nc"}
    for name, issue in (("forecast", ISSUE), ("previous", PREVIOUS), ("hindcast", HINDCAST)):
        run_forecast(model, data, issue, out=paths[name], thresholds=thresholds, show_progress=False)
    run_forecast(exported, ingested, ISSUE, out=paths["deterministic"], show_progress=False)
    pages = {"forecast_page": folder / "forecast.html", "deterministic_page": folder / "deterministic.html",
             "verification_page": folder / "verification.html"}
    write_report(pages["forecast_page"], forecast=paths["forecast"], data=data, hindcast=paths["hindcast"],
                 previous=paths["previous"])
    write_report(pages["deterministic_page"], forecast=paths["deterministic"], data=ingested)
    write_report(pages["verification_page"], hindcast=paths["hindcast"], data=data)
    return {**paths, **pages, "ingested": ingested}


def _data_file(ingested: Path, out: Path) -> Path:
    """The bundled data with one station's discharge removed and another's name made of HTML."""
    with xr.open_dataset(ingested) as dataset:
        copy = dataset.load()
    stations = list(copy["station"].values)
    copy["streamflow"][stations.index(UNGAUGED)] = np.nan
    names = copy["station_name"].values.astype(object)
    names[stations.index(HTML_NAMED)] = HTML_NAME
    copy["station_name"] = ("station", names.astype(str))
    issue_step = int(np.flatnonzero(copy["time"].values == np.datetime64("2014-10-01T08:00", "ns"))[0])
    copy["total_precipitation_sum"][stations.index(SKIPPED), issue_step] = np.nan
    copy.to_netcdf(out)
    return out


def _thresholds(data: Path, out: Path) -> Path:
    """Two levels per station at its 80th and 97th percentile of 2013-2014 (probabilities that differ between
    stations), none for :data:`NO_THRESHOLDS`."""
    with xr.open_dataset(data) as dataset:
        flows = dataset["streamflow"].sel(time=slice("2013-01-01", "2014-12-31")).load()
    column = f"discharge [{flows.attrs['units']}]"  # the table names its units
    rows = []
    for station in flows["station"].values:
        series = flows.sel(station=station).values
        if station == NO_THRESHOLDS or not np.isfinite(series).any():
            continue
        rows += [{"station": station, "level": level, column: float(np.nanquantile(series, q))}
                 for level, q in (("action", 0.8), ("flood", 0.97))]
    pd.DataFrame(rows).to_csv(out, index=False)
    return out


def _quantile_model(trained: TrainedRun, data: Path, out: Path) -> Path:
    import torch

    from hydroseq.dataset import FeatureLayout, Scalers, load_station_data
    from hydroseq.export.exporter import export_trained_model
    from hydroseq.export.source import read_provenance
    from hydroseq.model import get_model
    from hydroseq.training.checkpoint import Checkpoint

    config = trained.config.model_copy(deep=True)
    config.data = config.data.model_copy(update={"leads": [1, 2, 3], "lagged_target": True})
    config = config.model_copy(update={
        "model": config.model.model_copy(update={"observed_skip": True, "quantiles": LEVELS}),
        "training": config.training.model_copy(update={"loss": "quantile"})})
    station_data = load_station_data(data, config.data)
    names = FeatureLayout.from_config(config.data).names
    torch.manual_seed(7)
    network = get_model(config.model, len(names), 3, "per_step", data=config.data)
    checkpoint = Checkpoint(network.state_dict(), config, names, 3, Scalers.fit(station_data, config.data),
                            "untrained", quantile_scale=[[2.0, 1.8, 1.4, 1.0, 1.4, 1.8, 2.0]] * 3)
    export_trained_model(checkpoint, config.data.seq_len, out, read_provenance(data), pt2=False)
    return out


@pytest.fixture(scope="module")
def browser():  # type: ignore[no-untyped-def]
    """Headless Chromium (Debian's; ``make install-test`` installs it). Without one the page tests are skipped,
    except under ``make test`` (``HYDROSEQ_REQUIRE_BROWSER=1``), where that is a failure."""
    from benchmarks.browser import chromium, chromium_path

    if chromium_path() is None:
        message = "no Chromium: apt-get install chromium chromium-driver (make install-test does)"
        if os.environ.get("HYDROSEQ_REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    with chromium() as launched:
        yield launched


@contextmanager
def opened(browser, page: Path, screenshot: Path) -> Iterator[PageSession]:  # type: ignore[no-untyped-def]
    """A browser session on ``page`` (loaded, interactive), its full-page screenshot saved as ``screenshot``."""
    with page_session(browser) as session:
        session.open(file_url(page))
        session.page.screenshot(path=str(screenshot), full_page=True)
        yield session


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """Where the page tests leave a screenshot of each page (``runs/test-artifacts/report/``, not committed)."""
    folder = Path(__file__).resolve().parents[2] / "runs" / "test-artifacts" / "report"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
