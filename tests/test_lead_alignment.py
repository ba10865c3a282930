"""Lead-time alignment end to end: the value labelled "lead l, valid time t + l" is Q(t + l) everywhere.

A station's discharge here is a known function of its local day, Q(d) = c + a sin(2 pi n(d) / P)
(n: days since the first day; P = 9 or 13 days, so a one-step shift changes every score), written as
Caravan-style CSVs beside real forcing and ingested with the real ``ingest`` on the project's daily
grid (local day d in UTC-8, labelled at d + 1 08:00 UTC). A per-step model with leads 1-3 and the
observed discharge as an input is trained for a few seconds (60 one-batch epochs: it learns the waves),
tracked in MLflow (its pyfunc model logged and registered, as ``hydroseq train`` does), and exported.
Its skill must peak at the lead each output is labelled with, and each path must label and score its
numbers the same way:

* ingest: the file's discharge at label v is Q(day of v) (the premise of every other check);
* training targets: in the batches the loader yields, the observed-discharge input at step t is Q(t)
  and the target of lead l is Q(t + l) (masked exactly where t + l leaves the training period);
* training: the model's lead-l output at step t matches Q(t + l) better than Q(t + l +- 1);
* export: the exported network's lead-l output at issue t equals the training model's lead-l output
  at step t (the per-step head, read at the step the training loss compared with Q(t + l)), and the
  exporter's own parity check passed;
* ``evaluate``: its model NSE per station and lead is the NSE of those outputs against Q(t + l),
  its persistence NSE that of Q(v - l) against Q(v);
* hindcast: CSV and NetCDF say valid_time = issue_time + l steps and hold the model's lead-l output
  at that issue time; the scores file's model and persistence NSE are those of the published values
  (and of Q(issue)) against Q(valid_time), and equal ``evaluate``'s on the same steps;
* the served pyfunc model: issue_time, valid_time = issue + l and the same values per lead.

Each check also asserts that a one-step shift would have changed what it compares (the model's
output varies from step to step, the NSE of a shifted pairing differs), so a shift cannot pass
unnoticed because the numbers happen to be flat.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import mlflow
import netCDF4
import numpy as np
import pandas as pd
import pytest
import torch
from mlflow.tracking import MlflowClient

from hydroseq.batching.loader import make_loader
from hydroseq.config import IngestConfig, TrainConfig, validate_config
from hydroseq.dataset import SequenceDataset, StationData, build_sample_index, load_station_data
from hydroseq.export import ExportedModel, ExportMetadata, export_model
from hydroseq.forecast import IngestedFile, run_forecast
from hydroseq.ingest import ingest
from hydroseq.serving.pyfunc_logging import log_forecast_model
from hydroseq.serving.pyfunc_model import frame_from_station_data
from hydroseq.training import evaluate, train
from hydroseq.training.checkpoint import Checkpoint
from hydroseq.training.data import load_training_data
from hydroseq.training.tracking import use_tracking_uri
from tests.fixtures import store_uri

pytestmark = pytest.mark.slow  # ingest, 60 tiny epochs, MLflow logging and export: about a minute

REPO_ROOT = Path(__file__).resolve().parents[1]
CARAVAN_DIR = REPO_ROOT / "data" / "daily_caravan_camels_us"
# Two eastern basins (local standard time UTC-5); their discharge is replaced by WAVES.
STATIONS = {"01022500": (44.60797, -67.93524, 619.1), "01547700": (41.05951, -77.60583, 115.04)}
# c, a, period P in days. No P divides 2l +- 1 for a lead l: the wave l steps ahead and l +- 1 steps ahead
# then never correlate alike with the wave now (with P = 7, Q(t - 3) and Q(t - 4) would), so every shift shows.
WAVES = {"01022500": (12.0, 6.0, 9), "01547700": (25.0, 9.0, 13)}
FORCING = ["total_precipitation_sum", "temperature_2m_mean", "potential_evaporation_sum"]
FIRST_DAY, LAST_DAY = dt.date(2011, 1, 1), dt.date(2012, 5, 31)
SPLITS = {"train": {"start": "2011-01-01", "end": "2011-12-31"},
          "validation": {"start": "2012-01-01", "end": "2012-02-29"},
          "test": {"start": "2012-03-01", "end": "2012-05-31"}}
LEADS = (1, 2, 3)
SEQ_LEN = 30
DAY = np.timedelta64(1, "D")
GRID_OFFSET = np.timedelta64(8, "h")  # grid days in Etc/GMT+8: local day d ends at d + 1 08:00 UTC
VALUE_ATOL = 2e-4  # discharge units (values 3-34): ONNX against torch, float32 on both sides
NSE_ATOL = 2e-4  # the scores files round to 4 decimals
MIN_SHIFT_EFFECT = 0.02  # a one-step shift must move each NSE checked by more than this


def local_day(labels: np.ndarray) -> np.ndarray:
    """The local day (``datetime64[D]``) each grid label ends."""
    return (np.asarray(labels, dtype="datetime64[ns]") - GRID_OFFSET - DAY).astype("datetime64[D]")


def discharge(station: str, labels: np.ndarray) -> np.ndarray:
    """Q of ``station`` at the grid labels ``labels`` (float64, as written to the CSVs to 3 decimals)."""
    level, amplitude, period = WAVES[station]
    days = (local_day(labels) - np.datetime64(FIRST_DAY, "D")).astype(np.int64)
    return np.round(level + amplitude * np.sin(2 * np.pi * days / period), 3)


def nse(sim: np.ndarray, obs: np.ndarray) -> float:
    """Nash-Sutcliffe efficiency, written out here so that no product code scores the product."""
    sim, obs = np.asarray(sim, np.float64), np.asarray(obs, np.float64)
    return 1.0 - float(np.sum((sim - obs) ** 2)) / float(np.sum((obs - obs.mean()) ** 2))


def assert_shift_matters(sim: np.ndarray, obs_now: np.ndarray, obs_shifted: np.ndarray, what: str) -> None:
    """The pairing checked scores differently from the same values paired one step off."""
    assert abs(nse(sim, obs_now) - nse(sim, obs_shifted)) > MIN_SHIFT_EFFECT, f"{what}: a shift would not show"


@dataclass(frozen=True)
class Chain:
    """The ingested file, the tracked run and its export, and the training model's reference outputs."""

    data: Path
    config: TrainConfig
    run_id: str
    tracking_uri: str
    model_dir: Path
    station_data: StationData
    issues: np.ndarray  # grid indices t the test split predicts from (t + 1 .. t + 3 inside it)
    reference: np.ndarray  # [station, issue, lead]: the training model's per-step output at t, in discharge units
    work: Path


def _write_csvs(folder: Path) -> tuple[Path, Path]:
    """Caravan-style CSVs (real forcing, discharge replaced by WAVES) and their station table."""
    folder.mkdir()
    for station in STATIONS:
        frame = pd.read_csv(CARAVAN_DIR / f"{station}.csv", parse_dates=["date"])
        frame = frame[(frame["date"] >= pd.Timestamp(FIRST_DAY)) & (frame["date"] <= pd.Timestamp(LAST_DAY))]
        labels = frame["date"].to_numpy("datetime64[ns]") + DAY + GRID_OFFSET
        frame = frame[["date", *FORCING]].assign(streamflow=discharge(station, labels))
        frame.to_csv(folder / f"{station}.csv", index=False, date_format="%Y-%m-%d", float_format="%.3f")
    table = folder.parent / "stations.csv"
    pd.DataFrame([{"station_id": station, "name": f"wave {station}", "lat": lat, "lon": lon, "area_km2": area,
                   "timezone": "America/New_York"} for station, (lat, lon, area) in STATIONS.items()]
                 ).to_csv(table, index=False)
    return folder, table


def _ingest(work: Path) -> Path:
    csv_dir, table = _write_csvs(work / "csv")
    units = {"total_precipitation_sum": "mm/d", "temperature_2m_mean": "degC", "potential_evaporation_sum": "mm/d",
             "streamflow": "mm/d"}
    config = validate_config({
        "title": "lead alignment",
        "stations": {"path": str(table)},
        "sources": [{"name": "waves", "path": str(csv_dir / "[0-9]*.csv"), "format": "caravan_csv",
                     "frequency": "1D", "timestamp": "interval_start", "timezone": "station_standard",
                     "time_column": "date", "time_format": "%Y-%m-%d",
                     "variables": {name: {"source": name, "units": unit,
                                          "aggregation": "mean" if name in ("temperature_2m_mean", "streamflow")
                                          else "sum", **({"valid_min": -20} if "evaporation" in name else {})}
                                   for name, unit in units.items()}}],
        "grid": {"frequency": "1D", "timezone": "Etc/GMT+8", "day_boundary": "00:00",
                 "start": FIRST_DAY.isoformat(), "end": LAST_DAY.isoformat()},
        "on_bad_station": "fail",
    }, IngestConfig)
    out = work / "waves.nc"
    ingest(config, out, show_progress=False)
    return out


def _train_config(data: Path, work: Path) -> TrainConfig:
    return validate_config({
        "data": {"path": str(data), "dynamic_inputs": FORCING, "static_inputs": [], "mode": "per_step",
                 "leads": list(LEADS), "lagged_target": True, "seq_len": SEQ_LEN, "min_len": 5, "splits": SPLITS,
                 "cache_dir": str(work / "cache")},
        "batching": {"batch_size": 16},
        "model": {"hidden_size": 8},
        "training": {"epochs": 60, "learning_rate": 0.03, "threads": 1, "output_dir": str(work / "train"),
                     "seed": 3, "eval_stride": 1},
        "tracking": {"tracking_uri": store_uri(work), "artifact_root": str(work / "mlartifacts")},
    }, TrainConfig)


def _reference(config: TrainConfig, run_dir: Path, station_data: StationData) -> tuple[np.ndarray, np.ndarray]:
    """The issue steps of the test split and the training model's outputs there, ``[station, issue, lead]``.

    Built the way training sees the data: the dataset stage's per-step-evaluation index and
    ``SequenceDataset.gather``, through the whole per-step output of the packed model (not its
    last-step shortcut), read at each window's last step.
    """
    checkpoint = Checkpoint.load(run_dir / "best.pt")
    model = checkpoint.build_model().eval()
    index = build_sample_index(station_data, config.data, "test", cache_dir=None, mode="sequence")
    issues = np.unique(index.end)
    dataset = SequenceDataset(station_data, checkpoint.scalers, index, config.data)
    batch = dataset.gather(np.arange(len(index)))
    with torch.no_grad():
        out = model(batch.x, batch.lengths).numpy()
    last = out[np.arange(len(batch)), batch.lengths.numpy() - 1]
    reference = np.full((station_data.n_stations, len(issues), len(LEADS)), np.nan)
    station, end = batch.station.numpy(), batch.end.numpy()
    for row in range(len(batch)):
        ids = [station_data.station_ids[station[row]]]
        reference[station[row], np.searchsorted(issues, end[row])] = checkpoint.scalers.inverse_target(
            last[row][None, :], ids)[0]
    assert np.isfinite(reference).all()
    return issues, reference


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> Chain:
    """Ingest, train (a few seconds), export: the real stages, once for the module."""
    work = tmp_path_factory.mktemp("lead_alignment")
    data = _ingest(work)
    config = _train_config(data, work)
    result = train(config, show_progress=False, log_model=log_forecast_model)
    model_dir = work / "model"
    export_model(result.run_id, seq_len=SEQ_LEN, out_dir=model_dir, tracking_uri=result.tracking_uri)
    station_data = load_station_data(data, config.data)
    issues, reference = _reference(config, result.output_dir, station_data)
    return Chain(data, config, result.run_id, result.tracking_uri, model_dir, station_data, issues, reference, work)


def _labels(chain: Chain, steps: np.ndarray) -> np.ndarray:
    return chain.station_data.times[steps]


def test_the_ingested_discharge_is_the_known_function_of_the_label(chain: Chain) -> None:
    data = chain.station_data
    assert (np.diff(data.times) == DAY).all()
    assert data.times[0] == np.datetime64(FIRST_DAY, "ns") + DAY + GRID_OFFSET
    for row, station in enumerate(data.station_ids):
        np.testing.assert_allclose(data.target[row], discharge(station, data.times), rtol=1e-6)


def test_training_targets_are_the_discharge_lead_steps_after_each_input_step(chain: Chain) -> None:
    config = chain.config
    training = load_training_data(config)
    layout, scalers = training.train_set.layout, training.scalers
    times = training.station_data.times
    last_train_label = np.datetime64(SPLITS["train"]["end"], "ns") + DAY + GRID_OFFSET
    loader = make_loader(training.train_set, config.batching, shuffle=True, seed=0)
    loader.sampler.set_epoch(0)
    checked = np.zeros(len(LEADS), np.int64)
    for batch in loader:
        x, y, mask = batch.x.numpy(), batch.y.numpy(), batch.mask.numpy()
        for row in range(len(batch)):
            station = training.station_data.station_ids[int(batch.station[row])]
            length, end = int(batch.lengths[row]), int(batch.end[row])
            labels = times[end - length + 1: end + 1]
            assert not mask[row, length:].any(), "padding carries a loss"
            lagged = scalers.inverse_target(x[row, :length, layout.lagged_column][None, :], [station])[0]
            np.testing.assert_allclose(lagged, discharge(station, labels), rtol=1e-5,
                                       err_msg="the observed-discharge input at step t is not Q(t)")
            assert (x[row, :length, layout.flag_column] == 1).all()
            for column, lead in enumerate(LEADS):
                valid = labels + lead * DAY
                np.testing.assert_array_equal(mask[row, :length, column], valid <= last_train_label,
                                              err_msg=f"lead {lead}: targets masked off the training period")
                keep = mask[row, :length, column]
                target = scalers.inverse_target(y[row, :length, column][None, :], [station])[0]
                np.testing.assert_allclose(target[keep], discharge(station, valid[keep]), rtol=1e-5,
                                           err_msg=f"lead {lead}: the target at step t is not Q(t + {lead})")
                checked[column] += int(keep.sum())
    assert (checked > 300).all()


def test_the_export_reads_each_lead_at_the_issue_step(chain: Chain) -> None:
    """The exporter's parity check passed, and on real windows the exported network's lead-l output at
    issue t is the training model's lead-l output at step t."""
    exported = ExportedModel(chain.model_dir)
    metadata = exported.metadata
    assert metadata.leads == list(LEADS) and metadata.seq_len == SEQ_LEN
    assert metadata.parity_max_abs_diff is not None and metadata.parity_max_abs_diff <= 1e-5
    run = run_forecast(chain.model_dir, chain.data, _range(chain), out=chain.work / "export_check.nc",
                       show_progress=False)
    np.testing.assert_array_equal(run.result.issue_times, _labels(chain, chain.issues))
    values = run.result.values.transpose(1, 0, 2)  # [station, issue, lead]
    np.testing.assert_allclose(values, chain.reference, rtol=0, atol=VALUE_ATOL,
                               err_msg="the exported lead outputs at issue t are not the training model's at step t")
    for row in range(len(STATIONS)):
        for column in range(len(LEADS)):  # the outputs vary: a one-issue shift would not match
            assert np.max(np.abs(np.diff(chain.reference[row, :, column]))) > 100 * VALUE_ATOL


def _range(chain: Chain) -> str:
    first, last = (pd.Timestamp(label).isoformat() for label in _labels(chain, chain.issues[[0, -1]]))
    return f"{first}Z..{last}Z"


def _model_nse(chain: Chain, row: int, column: int, shift: int = 0) -> float:
    """NSE of the reference lead output at every issue t against Q(t + lead + shift)."""
    station = chain.station_data.station_ids[row]
    valid = _labels(chain, chain.issues) + (LEADS[column] + shift) * DAY
    return nse(chain.reference[row, :, column], discharge(station, valid))


def test_the_model_forecasts_best_the_discharge_its_lead_labels(chain: Chain) -> None:
    """Skill peaks at the labelled lead: the training model's lead-l output at step t matches Q(t + l)
    better than Q(t + l - 1) or Q(t + l + 1), so training taught each output the lead it is labelled with."""
    for row in range(len(STATIONS)):
        for column, lead in enumerate(LEADS):
            aligned = _model_nse(chain, row, column)
            assert aligned > 0.8, f"lead {lead}: the model did not learn (NSE {aligned:.3f})"
            for shift in (-1, 1):
                assert aligned > _model_nse(chain, row, column, shift) + MIN_SHIFT_EFFECT, (
                    f"lead {lead}: the output matches Q(t + {lead + shift}) as well as Q(t + {lead})")


def test_evaluate_scores_each_lead_against_the_discharge_at_its_valid_time(chain: Chain) -> None:
    evaluation = evaluate(chain.run_id, "test", tracking_uri=chain.tracking_uri, show_progress=False)
    scores = pd.read_csv(evaluation.report.csv_path, dtype={"station": str}).set_index(["station", "lead", "forecast"])
    data = chain.station_data
    in_test = data.times[data.grid.period_mask(data.times, chain.config.data.splits.test)]
    for row, station in enumerate(data.station_ids):
        for column, lead in enumerate(LEADS):
            expected = _model_nse(chain, row, column)
            assert abs(_model_nse(chain, row, column, shift=1) - expected) > MIN_SHIFT_EFFECT
            assert scores.loc[(station, lead, "model"), "nse"] == pytest.approx(expected, abs=NSE_ATOL), (
                f"evaluate's model NSE of {station} lead {lead} is not that of the lead output against Q(t + {lead})")
            persistence = discharge(station, in_test - lead * DAY)
            assert_shift_matters(persistence, discharge(station, in_test), discharge(station, in_test + DAY),
                                 "evaluate persistence")
            assert scores.loc[(station, lead, "persistence"), "nse"] == pytest.approx(
                nse(persistence, discharge(station, in_test)), abs=NSE_ATOL), f"persistence {station} lead {lead}"


def test_hindcast_files_label_and_score_each_lead_at_its_valid_time(chain: Chain) -> None:
    out = chain.work / "hindcast" / "hindcast.nc"
    run = run_forecast(chain.model_dir, chain.data, _range(chain), out=out, show_progress=False)
    assert run.published is not None
    issues = _labels(chain, chain.issues)
    table = pd.read_csv(out.with_suffix(".csv"), dtype={"station": str})
    issue_time = pd.to_datetime(table["issue_time"]).dt.tz_localize(None).to_numpy("datetime64[ns]")
    valid_time = pd.to_datetime(table["valid_time"]).dt.tz_localize(None).to_numpy("datetime64[ns]")
    np.testing.assert_array_equal(valid_time, issue_time + table["lead"].to_numpy() * DAY,
                                  err_msg="CSV valid_time is not issue_time + lead steps")
    assert sorted(set(table["lead"])) == list(LEADS)
    scores = pd.read_csv(out.with_name("hindcast_scores.csv"), dtype={"station": str}).set_index(
        ["station", "lead", "forecast"])
    with netCDF4.Dataset(out) as nc:
        reference_time = nc["forecast_reference_time"][:].filled(np.nan)
        nc_valid = nc["time"][:].filled(np.nan)
        nc_values = nc["streamflow"][:].filled(np.nan)
        np.testing.assert_array_equal(nc["lead"][:], LEADS)
        np.testing.assert_array_equal(nc["forecast_period"][:], 24.0 * np.array(LEADS))
        nc_stations = list(nc["station"][:])
    np.testing.assert_array_equal(reference_time, issues.astype("datetime64[s]").astype(np.int64))
    np.testing.assert_array_equal(nc_valid, reference_time[:, None] + 86400.0 * np.array(LEADS)[None, :],
                                  err_msg="NetCDF time is not forecast_reference_time + lead steps")
    for row, station in enumerate(chain.station_data.station_ids):
        rows = table[table["station"] == station]
        for column, lead in enumerate(LEADS):
            at_lead = rows[rows["lead"] == lead]
            np.testing.assert_array_equal(issue_time[at_lead.index], issues)
            values = at_lead["value"].to_numpy()
            np.testing.assert_allclose(values, chain.reference[row, :, column], rtol=0, atol=VALUE_ATOL,
                                       err_msg=f"CSV {station} lead {lead}: not the lead-{lead} output at issue t")
            np.testing.assert_allclose(nc_values[:, nc_stations.index(station), column], values, rtol=1e-6)
            observed = discharge(station, valid_time[at_lead.index])
            assert_shift_matters(values, observed, discharge(station, valid_time[at_lead.index] + DAY), "hindcast")
            assert scores.loc[(station, lead, "model"), "n"] == len(issues)
            assert scores.loc[(station, lead, "model"), "nse"] == pytest.approx(nse(values, observed), abs=NSE_ATOL), (
                f"hindcast model NSE of {station} lead {lead} is not that of the values against Q(valid_time)")
            assert scores.loc[(station, lead, "model"), "nse"] == pytest.approx(_model_nse(chain, row, column),
                                                                                abs=NSE_ATOL)
            persisted = discharge(station, issues)
            assert scores.loc[(station, lead, "persistence"), "nse"] == pytest.approx(
                nse(persisted, observed), abs=NSE_ATOL), f"hindcast persistence {station} lead {lead}"


def test_evaluate_and_the_hindcast_count_the_same_stations_beating_persistence(chain: Chain) -> None:
    """Over the same test period the two tables agree on how many stations beat persistence, lead by lead."""
    evaluation = evaluate(chain.run_id, "test", tracking_uri=chain.tracking_uri, show_progress=False)
    out = chain.work / "hindcast_count" / "hindcast.nc"
    run = run_forecast(chain.model_dir, chain.data, _range(chain), out=out, show_progress=False)
    assert run.published is not None and run.published.scores is not None
    for row in run.published.scores.summary():
        summary = evaluation.report.summary
        counted = (int(summary[f"test_lead{row.lead}_stations_beating_persistence"]),
                   int(summary[f"test_lead{row.lead}_stations_compared_with_persistence"]))
        assert row.beats_persistence == counted, f"lead {row.lead}: hindcast {row.beats_persistence} vs {counted}"
        assert counted[1] == len(STATIONS)


def test_the_served_model_labels_each_lead_with_its_valid_time(chain: Chain) -> None:
    with use_tracking_uri(chain.tracking_uri):
        (registered,) = MlflowClient().search_model_versions(f"run_id = '{chain.run_id}'")
        model = mlflow.pyfunc.load_model(f"models:/{registered.name}/{registered.version}")
    metadata = ExportMetadata.read(chain.model_dir)
    first, last = int(chain.issues[0]) - SEQ_LEN - 5, int(chain.issues[-1]) + 3
    with IngestedFile(chain.data, metadata) as source:
        window = source.read(first, last + 1)
    frame = frame_from_station_data(window, metadata)
    for position in (0, len(chain.issues) // 2, len(chain.issues) - 1):
        issue = chain.station_data.times[chain.issues[position]]
        served = model.predict(frame, params={"issue_time": f"{pd.Timestamp(issue).isoformat()}Z"})
        assert (pd.to_datetime(served["issue_time"]).to_numpy("datetime64[ns]") == issue).all(), (
            f"served issue_time is not the requested {issue}")
        valid = pd.to_datetime(served["valid_time"]).to_numpy("datetime64[ns]")
        np.testing.assert_array_equal(valid, issue + served["lead"].to_numpy() * DAY,
                                      err_msg="served valid_time is not issue_time + lead steps")
        for row, station in enumerate(chain.station_data.station_ids):
            mine = served[served["station"] == station].set_index("lead")["value"]
            assert list(mine.index) == list(LEADS)
            np.testing.assert_allclose(mine.to_numpy(), chain.reference[row, position], rtol=0, atol=VALUE_ATOL,
                                       err_msg=f"served {station} at {issue}: not the lead outputs at issue t")
