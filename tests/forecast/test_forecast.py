"""``hydroseq forecast`` on the real ingested data with the exported tiny model."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from hydroseq.cli import main
from hydroseq.errors import ExitCode, InputDataError
from hydroseq.forecast import run_forecast
from hydroseq.grid import GridSpec
from hydroseq.scoring.metrics import kge, nse
from hydroseq.scoring.peak_metrics import peak_mape
from hydroseq.scoring.signatures import SIGNATURES, all_signatures

ISSUE = "2014-06-30"  # local day; its grid label is 2014-07-01T08:00Z
ISSUE_LABEL = "2014-07-01T08:00"
DYNAMIC = ("total_precipitation_sum", "temperature_2m_mean", "potential_evaporation_sum")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def test_forecast_files_and_byte_identical_rerun(exported: Path, ingested: Path, tmp_path: Path) -> None:
    out = tmp_path / "f.nc"
    assert run_forecast(exported, ingested, ISSUE, out=out).stations_forecast > 0
    rows = _rows(out.with_suffix(".csv"))
    assert len(rows) == 31 and {row["issue_time"] for row in rows} == {"2014-07-01T08:00:00Z"}
    with xr.open_dataset(out) as ds:
        assert ds["streamflow"].shape == (31, 1)
        assert ds["forecast_reference_time"].values == np.datetime64(ISSUE_LABEL, "ns")
        assert ds.attrs["skipped_stations"] == "{}"
        by_station = dict(zip(ds["station"].values, ds["streamflow"].values[:, 0], strict=True))
        with xr.open_dataset(ingested) as source:
            assert ds["streamflow"].attrs["units"] == source["streamflow"].attrs["units"]
    for row in rows:
        assert np.float32(row["value"]) == by_station[row["station"]]
    hashes = _sha(out), _sha(out.with_suffix(".csv"))
    time.sleep(1.1)
    assert main(["forecast", "--model", str(exported), "--data", str(ingested), "--issue-time", ISSUE,
                 "--out", str(out)]) == 0
    assert (_sha(out), _sha(out.with_suffix(".csv"))) == hashes


def test_data_after_the_issue_time_do_not_move_the_forecast(exported, ingested, tmp_path, edited_copy, grid_index):
    end = grid_index(ingested, ISSUE_LABEL)
    rng = np.random.default_rng(0)

    def perturb_future(dataset: xr.Dataset) -> None:
        for name in (*DYNAMIC, "streamflow"):
            values = dataset[name].values
            values[:, end + 1:] = rng.normal(50.0, 30.0, values[:, end + 1:].shape)
            values[::3, end + 1:] = np.nan

    def perturb_last_step(dataset: xr.Dataset) -> None:
        dataset["total_precipitation_sum"].values[:, end] += 25.0

    assert run_forecast(exported, ingested, ISSUE, out=tmp_path / "base.nc").stations_forecast > 0
    future = edited_copy(ingested, tmp_path / "future.nc", perturb_future)
    assert run_forecast(exported, future, ISSUE, out=tmp_path / "future_fc.nc").stations_forecast > 0
    assert _sha(tmp_path / "future_fc.csv") == _sha(tmp_path / "base.csv")
    past = edited_copy(ingested, tmp_path / "past.nc", perturb_last_step)
    assert run_forecast(exported, past, ISSUE, out=tmp_path / "past_fc.nc").stations_forecast > 0
    pairs = zip(_rows(tmp_path / "past_fc.csv"), _rows(tmp_path / "base.csv"), strict=True)
    # the issue step itself is an input, so the test can tell a moved forecast (except where both
    # forecasts were clipped to zero discharge)
    changed = [a["value"] != b["value"] for a, b in pairs if float(a["value"]) > 0 or float(b["value"]) > 0]
    assert len(changed) > 0 and all(changed)


def test_stations_without_history_are_listed_with_the_reason(exported, ingested, tmp_path, edited_copy, grid_index):
    end = grid_index(ingested, ISSUE_LABEL)

    def gaps(dataset: xr.Dataset) -> None:
        stations = list(dataset["station"].values)
        dataset["temperature_2m_mean"].values[stations.index("01052500"), end] = np.nan
        dataset["total_precipitation_sum"].values[stations.index("02011460"), : end - 2] = np.nan

    data = edited_copy(ingested, tmp_path / "gaps.nc", gaps)
    assert run_forecast(exported, data, ISSUE, out=tmp_path / "f.nc").stations_forecast > 0
    with xr.open_dataset(tmp_path / "f.nc") as ds:
        skipped = json.loads(ds.attrs["skipped_stations"])
        assert np.isnan(ds["streamflow"].sel(station="01052500")).all()
    assert set(skipped) == {"01052500", "02011460"}
    assert "missing: temperature_2m_mean" in skipped["01052500"]
    assert "only 3 valid steps" in skipped["02011460"] and "at least 5" in skipped["02011460"]
    assert {row["station"] for row in _rows(tmp_path / "f.csv")}.isdisjoint(skipped)


def test_no_station_forecast_exits_1_and_writes_nothing(exported, ingested, tmp_path, edited_copy, grid_index):
    end = grid_index(ingested, ISSUE_LABEL)

    def blank(dataset: xr.Dataset) -> None:
        dataset["potential_evaporation_sum"].values[:, end] = np.nan

    data = edited_copy(ingested, tmp_path / "blank.nc", blank)
    out = tmp_path / "f.nc"
    assert main(["forecast", "--model", str(exported), "--data", str(data), "--issue-time", ISSUE,
                 "--out", str(out)]) == ExitCode.NOTHING_PRODUCED == 1
    assert not out.exists() and not out.with_suffix(".csv").exists()


def test_issue_time_after_the_data_forecasts_nothing(exported, ingested, tmp_path, capsys) -> None:
    """The newest days not ingested yet (their raw files late): no input at the issue step, as when
    it is all missing: nothing written, exit 1. A hindcast past the data, or an issue time before
    them, is an error of the data file."""
    run = run_forecast(exported, ingested, "2015-01-05", out=tmp_path / "f.nc")
    assert run.published is None and run.stations_forecast == 0 and len(run.result.skipped) == 31
    assert run.result.issue_times[0] == np.datetime64("2015-01-06T08:00", "ns")
    reason = ("no data at the issue step 2015-01-06T08:00:00Z: the data file ends 120 h before it, at "
              "2015-01-01T08:00:00Z (ingest the newest steps first")
    assert all(why.startswith(reason) for why in run.result.skipped.values())
    assert main(["--json", "forecast", "--model", str(exported), "--data", str(ingested), "--issue-time",
                 "2015-01-05", "--out", str(tmp_path / "f.nc")]) == ExitCode.NOTHING_PRODUCED
    summary = json.loads(capsys.readouterr().out)
    assert summary["stations"] == {"total": 31, "forecast": 0, "skipped": 31, "stale": 0} and summary["files"] == []
    assert not (tmp_path / "f.nc").exists()
    with pytest.raises(InputDataError, match="ingest the newest steps first"):
        run_forecast(exported, ingested, "2014-12-20..2015-01-05", out=tmp_path / "h.nc")
    assert main(["forecast", "--model", str(exported), "--data", str(ingested), "--issue-time", "1990-01-01",
                 "--out", str(tmp_path / "f.nc")]) == ExitCode.INPUT_DATA
    assert "before the first grid step" in capsys.readouterr().err


def test_grid_other_than_the_models_is_refused(exported, ingested, tmp_path, edited_copy) -> None:
    def other_zone(dataset: xr.Dataset) -> None:
        dataset.attrs.update(dataclasses.replace(GridSpec.from_attrs(dataset.attrs), timezone="UTC").to_attrs())

    data = edited_copy(ingested, tmp_path / "utc.nc", other_zone)
    with pytest.raises(InputDataError, match="utc.nc: grid time zone UTC differs from the model's Etc/GMT\\+8$"):
        run_forecast(exported, data, ISSUE, out=tmp_path / "f.nc")


def test_hindcast_scores_against_observations(exported, ingested, tmp_path) -> None:
    out = tmp_path / "h.nc"
    assert run_forecast(exported, ingested, "2014-05-01..2014-06-30", out=out).stations_forecast > 0
    with xr.open_dataset(out) as ds:
        assert ds["streamflow"].dims == ("forecast_reference_time", "station", "lead")
        assert ds.sizes["forecast_reference_time"] == 61
        sim = ds["streamflow"].sel(station="01022500", lead=0).values
        valid_times = ds["time"].values[:, 0]
    with xr.open_dataset(ingested) as data:
        obs = data["streamflow"].sel(station="01022500", time=valid_times).values
    scores = {(row["station"], row["lead"], row["forecast"]): row for row in _rows(tmp_path / "h_scores.csv")}
    row = scores[("01022500", "0", "model")]
    assert int(row["n"]) == 61
    assert float(row["nse"]) == pytest.approx(nse(obs, sim), abs=1e-4)
    assert float(row["kge"]) == pytest.approx(kge(obs, sim).kge, abs=1e-4)
    assert float(row["peak_mape"]) == pytest.approx(peak_mape(obs, sim), abs=1e-4)
    assert len(scores) == 31 * 3  # model, persistence, climatology
    assert pd.Timestamp(valid_times[0]) == pd.Timestamp("2014-05-02T08:00")
    table = pd.read_csv(tmp_path / "h_signatures.csv", dtype={"station": str}).set_index(
        ["station", "lead", "forecast", "signature"])
    assert len(table) == 31 * 3 * len(SIGNATURES) and "h_signatures.csv" in (tmp_path / "h.manifest.json").read_text()
    days = pd.date_range("2014-05-01", "2014-06-30", freq="D")  # local days of the lead-0 valid times
    with xr.open_dataset(ingested) as data:
        rain = data["total_precipitation_sum"].sel(station="01022500", time=valid_times).values
    expected = all_signatures(obs, days, rain)  # the model is forecast and observed every day here
    for name in ("q_mean", "q95", "baseflow_index", "slope_fdc", "runoff_ratio"):
        assert table.loc[("01022500", 0, "model", name), "observed"] == pytest.approx(expected[name], rel=1e-5)
    assert np.isnan(table.loc[("01022500", 0, "model", "hfd_mean"), "observed"])  # no full water year in 61 days


def test_negative_model_outputs_are_published_as_zero_discharge(exported: Path, ingested: Path) -> None:
    from hydroseq.dataset import Scalers
    from hydroseq.export import ExportedModel
    from hydroseq.forecast.core import to_target_units

    scalers = Scalers.from_dict(ExportedModel(exported).metadata.scalers)
    stations = [str(xr.open_dataset(ingested).station.values[0])] * 3
    scaled = np.array([[-50.0], [0.0], [3.0]], dtype=np.float32)
    raw = scalers.inverse_target(scaled, stations)
    published = to_target_units(scalers, scaled, stations)
    assert raw[0, 0] < 0 and published[0, 0] == 0.0
    np.testing.assert_array_equal(published[1:], raw[1:])
