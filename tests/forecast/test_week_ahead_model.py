"""The shipped week-ahead model (models/caravan-camels-us-daily-week-ahead/) forecasts 7 days from the example GRIB2
ensemble runs as the shipped daily configs ingest them; a run published after an issue time never changes that issue's
forecast; with no usable run it forecasts what the probabilistic base forecasts (it corrects that base) and says so."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml

from hydroseq.cli import main
from hydroseq.errors import ExitCode
from hydroseq.export import ExportedModel, ExportMetadata
from hydroseq.forecast import run_forecast
from tests.fixtures import REPO_ROOT
from tests.ingest.grib_builders import rewrite

WEEK_AHEAD_MODEL = REPO_ROOT / "models" / "caravan-camels-us-daily-week-ahead"
BASE_MODEL = REPO_ROOT / "models" / "caravan-camels-us-daily-probabilistic"
BUNDLED = set((REPO_ROOT / "data" / "daily_caravan_camels_us" / "basins.txt").read_text().split())
ISSUE = "2014-09-25"   # the local day whose end is the issue time: 2014-09-26T08:00Z on the daily grid
ISSUE_TIME = np.datetime64("2014-09-26T08:00", "ns")


def _ingest(folder: Path, runs_glob: str | None = None, kind: str = "ensemble") -> Path:
    """``configs/ingest_grib2_<kind>.yaml`` as shipped, its grid cut to the two years before the runs (the
    model's climate indices need at least 730 days)."""
    config = yaml.safe_load((REPO_ROOT / "configs" / f"ingest_grib2_{kind}.yaml").read_text())
    config["grid"].update(start="2012-09-01", end="2014-10-10")
    for section in (config["stations"], *config["sources"], *config["forecast_sources"]):
        if section.get("path"):
            section["path"] = str(REPO_ROOT / section["path"])
    config["stations"]["outlines"]["path"] = str(REPO_ROOT / config["stations"]["outlines"]["path"])
    if runs_glob is not None:
        config["forecast_sources"][0]["path"] = runs_glob
    path = folder / f"ingest_{kind}.yaml"
    path.write_text(yaml.safe_dump(config))
    out = folder / f"{kind}.nc"
    assert main(["ingest", "--config", str(path), "--out", str(out), "-q"]) == 0
    return out


@pytest.fixture(scope="module")
def ens(tmp_path_factory) -> Path:
    return _ingest(tmp_path_factory.mktemp("ens"), kind="ensemble")


def test_the_week_ahead_model_reads_seven_leads_of_forecast_precipitation_and_temperature() -> None:
    metadata = ExportMetadata.read(WEEK_AHEAD_MODEL)
    assert metadata.leads == [1, 2, 3, 4, 5, 6, 7] and metadata.lagged_target
    assert metadata.scalers["target"]["per_station"] == {}  # one scaling for every basin: new basins read
    assert metadata.train_config is not None
    data = metadata.train_config.data
    assert [item.variable for item in data.forecast_inputs] == ["total_precipitation_sum_forecast",
                                                                "temperature_2m_mean_forecast"]
    assert "caravan_regional" in str(data.path) and data.day_convention == "local_standard_day"
    correction = metadata.train_config.model.base_correction
    assert correction is not None and correction.base_leads == [1, 2, 3] and correction.base_members == 3
    assert metadata.train_config.training.init_from == "models/caravan-camels-us-daily-probabilistic"
    card = (WEEK_AHEAD_MODEL / "MODEL_CARD.md").read_text()
    assert "experiments.week_ahead_model" in card and "real forecast errors differ" in card.lower()
    ExportedModel(WEEK_AHEAD_MODEL)  # every release file matches SHA256SUMS


@pytest.mark.slow
def test_a_seven_day_forecast_from_the_example_runs(ens: Path, tmp_path: Path) -> None:
    run = run_forecast(WEEK_AHEAD_MODEL, ens, ISSUE, out=tmp_path / "forecast.nc", show_progress=False)
    assert set(run.result.stations) == BUNDLED and run.stations_forecast == 31
    assert list(run.result.leads) == [1, 2, 3, 4, 5, 6, 7]
    assert run.result.quantiles is not None and np.isfinite(run.result.quantiles).all()
    assert (run.result.quantiles >= 0).all()


@pytest.mark.slow
def test_runs_published_after_the_issue_time_leave_its_forecast_bit_identical(ens: Path, tmp_path: Path) -> None:
    """Perturb the future: every run published after the issue time (reference time + 8 h, the config's latency)
    gets other values; the week-ahead forecast of that issue is bit-identical, a later one changes."""
    runs = tmp_path / "runs"
    runs.mkdir()
    for source in sorted((REPO_ROOT / "data" / "forecast_grib2" / "ens").glob("*.grib2")):
        target = runs / source.name
        target.write_bytes(source.read_bytes())
        reference = np.datetime64(f"{source.name[:4]}-{source.name[4:6]}-{source.name[6:8]}T{source.name[8:10]}:00",
                                  "ns")
        if reference + np.timedelta64(8, "h") > ISSUE_TIME:
            rewrite(target, change=lambda keys, values: values * 3.0 if keys["shortName"] == "tp" else values + 5.0)
    perturbed = _ingest(tmp_path, str(runs / "*.grib2"))
    forecasts = {}
    for name, data in (("original", ens), ("perturbed", perturbed)):
        for day in (ISSUE, "2014-09-28"):
            forecasts[name, day] = run_forecast(WEEK_AHEAD_MODEL, data, day, out=tmp_path / f"{name}_{day}.nc",
                                                show_progress=False).result
    before, after = forecasts["original", ISSUE], forecasts["perturbed", ISSUE]
    np.testing.assert_array_equal(before.values, after.values)
    np.testing.assert_array_equal(before.quantiles, after.quantiles)
    assert not np.array_equal(forecasts["original", "2014-09-28"].quantiles,
                              forecasts["perturbed", "2014-09-28"].quantiles)


@pytest.mark.slow
def test_with_no_usable_run_it_forecasts_from_the_reanalysis_alone_and_says_so(ens: Path, tmp_path: Path,
                                                                               capsys) -> None:
    """Before the first example run no weather forecast exists: the model forecasts what the probabilistic base
    forecasts (leads 1-3; leads 4-7 its lead 3) and a scheduler's call reports those stations (exit 5, PARTIAL)."""
    status = main(["forecast", "--model", str(WEEK_AHEAD_MODEL), "--data", str(ens), "--issue-time", "2014-09-10",
                   "--out", str(tmp_path / "without.nc"), "--max-skipped-share", "0.2"])
    assert status == ExitCode.PARTIAL
    assert "weather forecast" in capsys.readouterr().err.lower()
    with xr.open_dataset(tmp_path / "without.nc") as ds:
        assert ds.sizes["lead"] == 7
    run = run_forecast(WEEK_AHEAD_MODEL, ens, "2014-09-10", out=tmp_path / "api.nc", show_progress=False)
    assert run.stations_forecast == 31 and set(run.result.fallback) == BUNDLED
    assert np.isfinite(run.result.quantiles).all()
    base = run_forecast(BASE_MODEL, ens, "2014-09-10", out=tmp_path / "base.nc", show_progress=False).result
    assert list(base.stations) == list(run.result.stations)
    anchored = base.quantiles[:, :, [0, 1, 2, 2, 2, 2, 2]]  # (issue, station, lead, level): 4-7 on lead 3
    np.testing.assert_allclose(run.result.quantiles, anchored, rtol=1e-5, atol=1e-6)
