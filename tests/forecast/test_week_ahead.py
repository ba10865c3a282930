"""Leads 1-7 end to end (issue 47): a model trained on ingested 7-day weather forecasts (:mod:`tests.week_ahead`)
carries its seven leads through the run's metrics, the export, the forecast NetCDF, CSV and PI-XML, the threshold
table, and the hindcast's scores and figures, each lead at its own valid time."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from lxml import etree
from matplotlib.image import imread
from rich.console import Console

from hydroseq.cli import main
from hydroseq.cli.forecast_tables import print_exceedance
from hydroseq.errors import ExitCode
from hydroseq.export import ExportedModel
from hydroseq.fileio.pi_xml import read_pi_series
from hydroseq.forecast.netcdf_reader import read_forecast_netcdf
from tests.week_ahead import FORECAST_INPUTS, ISSUE_LABEL, LEADS, STATIONS, WeekAhead

SCHEMAS = Path(__file__).resolve().parents[1] / "data" / "fews_pi"
DAY = np.timedelta64(1, "D")


@pytest.fixture(scope="module")
def csv(week_ahead: WeekAhead) -> pd.DataFrame:
    return pd.read_csv(week_ahead["forecast"].with_suffix(".csv"), dtype={"station": str})


def test_the_run_scores_and_the_export_declare_seven_leads(week_ahead: WeekAhead) -> None:
    from mlflow.tracking import MlflowClient

    metrics = MlflowClient(week_ahead.tracking_uri).get_run(week_ahead.run_id).data.metrics
    assert {f"validation_model_lead{lead}_median_nse" for lead in LEADS} <= set(metrics)
    metadata = ExportedModel(week_ahead["model"]).metadata
    assert metadata.leads == LEADS and metadata.forecast_horizon == 7
    assert [item.variable for item in metadata.forecast_input_specs] == FORECAST_INPUTS
    assert set(metadata.feature_names) >= {f"{name}_forecast_lead{lead}" for name in FORECAST_INPUTS for lead in LEADS}
    import onnxruntime as ort

    props = ort.InferenceSession(str(week_ahead["model"] / "model.onnx")).get_modelmeta().custom_metadata_map
    assert json.loads(props["leads"]) == LEADS and int(props["forecast_horizon"]) == 7


def test_the_forecast_netcdf_and_csv_hold_seven_leads_at_their_valid_times(week_ahead: WeekAhead,
                                                                           csv: pd.DataFrame) -> None:
    with xr.open_dataset(week_ahead["forecast"]) as forecast:
        assert forecast["lead"].values.tolist() == LEADS
        assert forecast["forecast_reference_time"].values == ISSUE_LABEL
        np.testing.assert_array_equal(forecast["time"].values, ISSUE_LABEL + np.arange(1, 8) * DAY)
        assert forecast["forecast_period"].values.tolist() == [24.0 * lead for lead in LEADS]
        assert forecast["streamflow_quantile"].sizes["lead"] == 7
        assert forecast["streamflow_exceedance_probability"].dims == ("station", "lead", "threshold")
        assert np.isfinite(forecast["streamflow"].values).all()  # every station, every lead
        assert forecast["forecast_input_read"].values.all()  # each read its 7-day product
    assert csv.groupby("station")["lead"].apply(list).to_dict() == {station: LEADS for station in STATIONS}
    valid = pd.to_datetime(csv["valid_time"].str.removesuffix("Z"))
    issued = pd.to_datetime(csv["issue_time"].str.removesuffix("Z"))
    assert (issued == pd.Timestamp(ISSUE_LABEL)).all()
    assert ((valid - issued) == pd.to_timedelta(csv["lead"], unit="D")).all()


def test_pi_xml_holds_seven_daily_events_per_series_valid_against_the_schema(week_ahead: WeekAhead,
                                                                            csv: pd.DataFrame) -> None:
    path = week_ahead["forecast"].with_suffix(".xml")
    schema = etree.XMLSchema(etree.parse(str(SCHEMAS / "pi_timeseries.xsd")))
    assert schema.validate(etree.parse(str(path))), schema.error_log
    document = read_pi_series(path)
    assert len(document.series) == len(STATIONS) * (1 + 7)  # the median and seven quantiles
    expected = pd.DatetimeIndex(ISSUE_LABEL + np.arange(1, 8) * DAY)
    for series in document.series:
        assert series.step == pd.Timedelta(days=1) and series.forecast_date == pd.Timestamp(ISSUE_LABEL)
        assert (series.stamps == expected).all(), series.label
    medians = {series.location: series.values for series in document.series if not series.qualifiers}
    for station, rows in csv.groupby("station"):
        np.testing.assert_allclose(medians[station], rows.sort_values("lead")["value_m3s"], rtol=1e-6)


def test_the_threshold_table_names_the_lead_of_each_highest_probability(week_ahead: WeekAhead) -> None:
    result = read_forecast_netcdf(week_ahead["forecast"])
    console = Console(record=True, width=250)
    print_exceedance(result, console, min_probability=0.01)
    text = console.export_text()
    assert "leads 1 d to 7 d" in text and "highest P" in text and "at lead" in text
    assert result.exceedance is not None and result.thresholds is not None
    shown, station = {}, None
    for line in text.splitlines():  # (station, threshold) -> the row's last two cells: highest P, at lead
        cells = [cell.strip() for cell in line.strip("│").split("│")]
        if len(cells) < 4 or cells[-1] in ("", "at lead"):
            continue
        station = cells[0] or station
        shown[(station, cells[2])] = (cells[-2], cells[-1])
    expected = {}
    for s, code in enumerate(result.stations):
        for k, label in enumerate(result.thresholds.labels):
            chances = result.exceedance[0, s, :, k]
            if np.nanmax(chances) >= 0.01:
                lead = int(result.leads[int(np.nanargmax(chances))])
                expected[(code, label)] = (f"{np.nanmax(chances):.0%}", f"{lead} d")
    assert shown == expected and expected
    assert max(int(lead.removesuffix(" d")) for _, lead in expected.values()) >= 4  # the highest chance days ahead


def test_the_hindcast_scores_and_figures_cover_seven_leads(week_ahead: WeekAhead) -> None:
    hindcast = week_ahead["hindcast"]
    scores = pd.read_csv(hindcast.with_name(f"{hindcast.stem}_scores.csv"), dtype={"station": str})
    assert sorted(scores["lead"].unique()) == LEADS
    assert set(scores["forecast"]) == {"model", "persistence", "climatology"}
    assert scores.loc[scores["lead"] == 7, "nse"].notna().sum() > 0  # the observations reach a week ahead
    probabilistic = pd.read_csv(hindcast.with_name(f"{hindcast.stem}_probabilistic.csv"))
    assert sorted(probabilistic["lead"].unique()) == LEADS
    with xr.open_dataset(hindcast) as data:
        issues = data["forecast_reference_time"].values
        np.testing.assert_array_equal(data["time"].values, issues[:, None] + np.arange(1, 8)[None, :] * DAY)
    plume = imread(hindcast.with_name(f"{hindcast.stem}_plume.png"))
    assert plume.shape[0] > plume.shape[1] / 4  # seven lead panels in two rows of four, not one strip of seven


def test_the_cli_summary_and_hindcast_table_list_seven_leads(week_ahead: WeekAhead, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "hindcast.nc"
    status = main(["--json", "forecast", "--model", str(week_ahead["model"]), "--data", str(week_ahead["data"]),
                   "--issue-time", "2014-09-01..2014-09-10", "--out", str(out)])
    captured = capsys.readouterr()
    assert status == ExitCode.OK, captured.err
    summary = json.loads(captured.out)
    assert summary["leads"] == LEADS
    assert [row["lead"] for row in summary["hindcast"]] == LEADS
    assert all(f"{lead} d" in captured.err for lead in LEADS)  # the printed hindcast table, one row per lead
