"""A forecast's thresholds: derived from the model's training period in the data file (nothing later feeds
them), or the user's table (stages through a rating curve), which takes precedence; the earlier fit on request."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from hydroseq.cli import main
from hydroseq.config.train import Period
from hydroseq.errors import ConfigError, ExitCode
from hydroseq.export import ExportMetadata
from hydroseq.forecast.data_window import IngestedFile
from hydroseq.forecast.probabilistic import training_record
from hydroseq.ingest import ingest
from hydroseq.scoring.return_periods import FrequencyAnalysis, annual_maxima
from hydroseq.scoring.thresholds import derived_thresholds
from tests.fixtures import REPO_ROOT, caravan_ingest_config

STATIONS = ["01022500", "01547700", "02064000"]
TRAIN = Period(start=dt.date(1995, 10, 1), end=dt.date(2008, 9, 30))  # water years 1996-2008
LEVELS = (0.05, 0.5, 0.95)


@pytest.fixture(scope="module")
def long_record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three bundled basins ingested for 1995-2014 (the project's config), so a training period holds 13 water
    years and six more follow it."""
    path = tmp_path_factory.mktemp("long_record") / "caravan.nc"
    ingest(caravan_ingest_config(dt.date(1995, 1, 1), dt.date(2014, 12, 31), STATIONS), path, show_progress=False)
    return path


@pytest.fixture(scope="module")
def metadata(exported: Path) -> ExportMetadata:
    """The shared chain's exported model, as if trained on :data:`TRAIN`."""
    model = ExportMetadata.read(exported)
    assert model.train_config is not None
    config = model.train_config.model_copy(deep=True)
    config.data.splits.train = TRAIN
    return dataclasses.replace(model, train_config=config)


def test_thresholds_are_derived_from_the_training_period_alone(long_record: Path, metadata: ExportMetadata,
                                                               tmp_path: Path, edited_copy) -> None:
    with IngestedFile(long_record, metadata) as source:
        record = training_record(source, LEVELS, None, with_climatology=False)
        times = source.times
    inside = metadata.grid.period_mask(times, TRAIN)

    def perturb(dataset: xr.Dataset) -> None:  # every day before and after the training period ten times larger
        dataset["streamflow"].values[:, ~inside] *= 10.0
    with IngestedFile(edited_copy(long_record, tmp_path / "perturbed.nc", perturb), metadata) as source:
        perturbed = training_record(source, LEVELS, None, with_climatology=False).thresholds
    thresholds = record.thresholds
    assert thresholds.levels == ("2-year", "5-year", "q95", "q99") and thresholds.confidence == 0.9
    assert thresholds.years[:, 0].tolist() == [13, 13, 13]
    for name in ("values", "lower", "upper", "years"):
        np.testing.assert_array_equal(getattr(perturbed, name), getattr(thresholds, name))
    with xr.open_dataset(long_record) as dataset:  # the same from the training days read independently
        target = dataset["streamflow"].sel(station=STATIONS).transpose("station", "time").values[:, inside]
    independent = derived_thresholds(target, times[inside], STATIONS)
    np.testing.assert_allclose(thresholds.values, independent.values, rtol=1e-6)
    np.testing.assert_allclose(thresholds.lower, independent.lower, rtol=1e-6)


def test_a_user_table_takes_precedence_and_stages_go_through_the_rating_curve(long_record: Path,
                                                                              metadata: ExportMetadata,
                                                                              tmp_path: Path) -> None:
    table = tmp_path / "thresholds.csv"
    table.write_text("station,level,discharge [mm/d],stage [m]\n01022500,action,3.5,\n01022500,flood,,2.0\n")
    rating = tmp_path / "rating.csv"
    rating.write_text("station,stage [m],discharge [mm/d]\n01022500,1.0,2.0\n01022500,2.0,6.0\n01022500,3.0,12.0\n")
    with IngestedFile(long_record, metadata) as source:
        record = training_record(source, LEVELS, table, False, rating_curve_file=rating)
        with pytest.raises(ConfigError, match="--rating-curve .* give the table too"):
            training_record(source, LEVELS, None, False, rating_curve_file=rating)
        earlier = training_record(source, LEVELS, None, False, analysis=FrequencyAnalysis(method="mle"))
        times, inside = source.times, metadata.grid.period_mask(source.times, TRAIN)
        target = source.read_target(0, len(times))[:, inside]
    assert record.thresholds.levels == ("action", "flood")  # the agency's levels only: no 2-year flow beside them
    assert record.thresholds.values[0].tolist() == [3.5, 6.0] and np.isnan(record.thresholds.values[1:]).all()
    assert record.base_rates.shape == (3, 2)
    # the earlier maximum-likelihood fit, on request: scipy's Gumbel fit of the same water-year maxima
    from scipy import stats

    _, maxima = annual_maxima(target, times[inside])
    for s, row in enumerate(maxima):
        np.testing.assert_allclose(earlier.thresholds.values[s, :2],
                                   stats.gumbel_r.isf([0.5, 0.2], *stats.gumbel_r.fit(row[np.isfinite(row)])),
                                   rtol=1e-12)
    assert "maximum likelihood" in earlier.thresholds.source and earlier.thresholds.confidence is None


PROBABILISTIC_BASE_MODEL = REPO_ROOT / "models" / "caravan-camels-us-daily-probabilistic"


def test_alert_levels_in_m3s_are_read_as_m3s_and_a_table_without_units_is_refused(
        ingested: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """An agency's alert levels in m³/s were read as mm/d ("alert 4.73 ... 100 %", exit 0); now the header names the
    units, the forecast compares them in m³/s, and a table that names none (or has a units column) stops the
    forecast with one line naming the file (exit 4), nothing written."""
    table = tmp_path / "alert_levels.csv"
    table.write_text("station,level,discharge [m3/s]\n01022500,alert,45.77\n01547700,alert,10\n")
    command = ["forecast", "--model", str(PROBABILISTIC_BASE_MODEL), "--data", str(ingested), "--issue-time",
               "2014-09-30", "-q"]
    assert main([*command, "--thresholds", str(table), "--out", str(tmp_path / "forecast.nc")]) == 0
    with xr.open_dataset(tmp_path / "forecast.nc") as forecast:
        alert = forecast.sel(threshold="alert")
        np.testing.assert_allclose(alert["threshold_discharge_m3s"].sel(station=["01022500", "01547700"]),
                                   [45.77, 10.0], rtol=1e-6)  # the agency's numbers back, through the areas
        area = alert["area_km2"].sel(station="01022500").item()
        assert alert["threshold_discharge"].sel(station="01022500").item() == pytest.approx(45.77 * 86.4 / area,
                                                                                           rel=1e-6)
        assert "discharge in m3/s" in forecast["threshold"].attrs["source"]
    capsys.readouterr()
    for name, text in (("bare", "station,level,discharge\n01022500,alert,45.77\n"),
                       ("units_column", "station,level,discharge,units\n01022500,alert,45.77,m3/s\n")):
        bad = tmp_path / f"{name}.csv"
        bad.write_text(text)
        out = tmp_path / f"{name}_forecast.nc"
        assert main([*command, "--thresholds", str(bad), "--out", str(out)]) == ExitCode.INPUT_DATA
        error = capsys.readouterr().err.strip()
        assert str(bad) in error and "units" in error and len(error.splitlines()) == 1, error
        assert not out.exists() and not out.with_suffix(".csv").exists()
