"""``hydroseq promote``'s gate and trail against a real MLflow SQLite store.

Each version is a run with the validation figures ``hydroseq train`` logs (``validation_<forecast>_lead<k>_median_nse``
and the validation period as params) and a model version of that run: what the gate reads, without training.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from hydroseq.cli import main
from hydroseq.errors import ConfigError, ExitCode, RefusedError
from hydroseq.forecast.hindcast import HindcastScores, write_scores_csv
from hydroseq.forecast.result import ForecastResult
from hydroseq.forecast.writers.netcdf import write_forecast_netcdf
from hydroseq.serving.promote import promote, promotion_history, rollback
from tests.fixtures import store_uri

MODEL = "demo"
PERIOD = ("2013-01-01", "2013-03-31")


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An empty store with an experiment and the registered model ``demo``; moves are made by ``ops``."""
    monkeypatch.setenv("HYDROSEQ_USER", "ops")
    uri = store_uri(tmp_path)
    client = MlflowClient(uri)
    client.create_experiment("demo", artifact_location=(tmp_path / "artifacts").as_uri())
    client.create_registered_model(MODEL)
    return uri


def _version(store: str, model: dict[int, float], persistence: dict[int, float],
             period: tuple[str, str] = PERIOD) -> str:
    """A new version of ``demo`` whose run logged these validation median NSEs; returns its number."""
    client = MlflowClient(store)
    experiment = client.get_experiment_by_name("demo")
    assert experiment is not None
    run_id = client.create_run(experiment.experiment_id).info.run_id
    for lead, value in model.items():
        client.log_metric(run_id, f"validation_model_lead{lead}_median_nse", value)
    for lead, value in persistence.items():
        client.log_metric(run_id, f"validation_persistence_lead{lead}_median_nse", value)
    client.log_param(run_id, "data.splits.validation.start", period[0])
    client.log_param(run_id, "data.splits.validation.end", period[1])
    return str(client.create_model_version(MODEL, source=f"runs:/{run_id}/model", run_id=run_id).version)


def _alias(store: str, alias: str = "champion") -> str | None:
    version = MlflowClient(store).get_registered_model(MODEL).aliases.get(alias)
    return None if version is None else str(version)


def _json(capsys: pytest.CaptureFixture[str]) -> dict:
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def _one_line_error(capfd: pytest.CaptureFixture[str]) -> str:
    err = capfd.readouterr().err
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_a_better_candidate_is_promoted_and_the_move_tagged(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    first = _version(store, {1: 0.60, 2: 0.40}, {1: 0.50, 2: 0.20})
    second = _version(store, {1: 0.65, 2: 0.40}, {1: 0.50, 2: 0.20})
    assert main(["--json", "-q", "promote", "--model", MODEL, "--version", first, "--tracking-uri", store]) == 0
    assert _json(capsys)["figures"] == [{"lead": 1, "candidate": 0.60, "champion": None, "persistence": 0.50},
                                        {"lead": 2, "candidate": 0.40, "champion": None, "persistence": 0.20}]
    assert main(["--json", "promote", "--model", MODEL, "--version", second, "--tracking-uri", store]) == 0
    summary = _json(capsys)
    assert (summary["version"], summary["previous_version"], summary["forced"], summary["moved"]) == ("2", "1", False,
                                                                                                    True)
    assert summary["evaluation"] == "validation 2013-01-01..2013-03-31" and summary["user"] == "ops"
    assert summary["figures"][0] == {"lead": 1, "candidate": 0.65, "champion": 0.60, "persistence": 0.50}
    assert _alias(store) == "2"

    client = MlflowClient(store)
    tagged = json.loads(client.get_model_version(MODEL, second).tags["hydroseq.promoted.champion"])
    assert (tagged["previous_version"], tagged["user"], tagged["forced"], tagged["rollback"]) == ("1", "ops", False,
                                                                                                False)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", tagged["time"]) and tagged["figures"] == summary["figures"]
    moves = {key: json.loads(value) for key, value in client.get_registered_model(MODEL).tags.items()}
    assert sorted(moves) == ["hydroseq.move.000001", "hydroseq.move.000002"]
    assert moves["hydroseq.move.000002"] == tagged

    # promoting the version the alias names already moves nothing
    assert promote(MODEL, second, "champion", store).move is None
    assert len(promotion_history(MODEL, tracking_uri=store)) == 2


def test_a_candidate_worse_than_the_champion_is_refused_with_both_figures(store: str, capfd) -> None:
    champion = _version(store, {1: 0.70, 2: 0.46}, {1: 0.50, 2: 0.20})
    worse = _version(store, {1: 0.72, 2: 0.41}, {1: 0.50, 2: 0.20})
    promote(MODEL, champion, tracking_uri=store)
    assert main(["promote", "--model", MODEL, "--version", worse, "--tracking-uri", store]) == ExitCode.REFUSED == 8
    assert _one_line_error(capfd).endswith(
        "error: version 2 is worse than the champion version 1 at lead 2: median NSE 0.410 against 0.460 "
        "(validation 2013-01-01..2013-03-31); --force to promote anyway")
    assert _alias(store) == champion and len(promotion_history(MODEL, tracking_uri=store)) == 1


def test_a_candidate_worse_than_persistence_is_refused_even_without_a_champion(store: str) -> None:
    candidate = _version(store, {1: 0.55, 2: 0.10, 3: -0.05}, {1: 0.50, 2: 0.20, 3: 0.0})
    with pytest.raises(RefusedError, match=r"^version 1 is worse than persistence at lead 2: median NSE 0.100 against "
                                          r"0.200 \(validation 2013-01-01..2013-03-31\) \(also at lead 3\); --force"):
        promote(MODEL, candidate, tracking_uri=store)
    assert _alias(store) is None and promotion_history(MODEL, tracking_uri=store) == []


def test_force_promotes_and_says_so(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    champion = _version(store, {1: 0.70}, {1: 0.50})
    worse = _version(store, {1: 0.60}, {1: 0.50})
    promote(MODEL, champion, tracking_uri=store)
    assert main(["promote", "--model", MODEL, "--version", worse, "--force", "--tracking-uri", store]) == 0
    printed = capsys.readouterr().out
    assert "models:/demo@champion -> version 2, forced (was version 1;" in printed
    assert "forced: version 2 is worse than the champion version 1 at lead 1: median NSE 0.600 against 0.700" in printed
    assert _alias(store) == worse
    (move, _) = promotion_history(MODEL, tracking_uri=store)
    assert move.forced and move.refusal is not None and move.refusal.startswith("version 2 is worse")
    assert move.figures == [{"lead": 1, "candidate": 0.60, "champion": 0.70, "persistence": 0.50}]


def test_a_version_without_validation_figures_names_the_command_that_logs_them(store: str, capfd) -> None:
    client = MlflowClient(store)
    experiment = client.get_experiment_by_name("demo")
    assert experiment is not None
    run_id = client.create_run(experiment.experiment_id).info.run_id
    bare = str(client.create_model_version(MODEL, source=f"runs:/{run_id}/model", run_id=run_id).version)
    assert main(["promote", "--model", MODEL, "--version", bare, "--tracking-uri", store]) == ExitCode.CONFIG
    line = _one_line_error(capfd)
    assert f"run hydroseq evaluate --run {run_id} --period validation" in line and "--force" in line
    assert _alias(store) is None
    forced = promote(MODEL, bare, tracking_uri=store, force=True)
    assert forced.forced and forced.figures == () and "logged no validation median NSE" in (forced.refusal or "")


def test_versions_validated_on_other_periods_are_not_compared(store: str) -> None:
    champion = _version(store, {1: 0.70}, {1: 0.50})
    other = _version(store, {1: 0.80}, {1: 0.50}, period=("2012-01-01", "2012-12-31"))
    promote(MODEL, champion, tracking_uri=store)
    with pytest.raises(ConfigError, match=r"not scored on the same evaluation: compare them on one hindcast each, "
                                          r"--hindcast CANDIDATE.nc CHAMPION.nc; --force"):
        promote(MODEL, other, tracking_uri=store)


def test_history_lists_the_moves_newest_first_and_rollback_restores(store: str,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    versions = [_version(store, {1: nse}, {1: 0.50}) for nse in (0.60, 0.65, 0.55)]
    promote(MODEL, versions[0], tracking_uri=store)
    promote(MODEL, versions[1], tracking_uri=store)
    promote(MODEL, versions[1], "staging", tracking_uri=store)
    promote(MODEL, versions[2], tracking_uri=store, force=True)

    assert main(["--json", "promote", "--model", MODEL, "--rollback", "--tracking-uri", store]) == 0
    rolled = _json(capsys)
    assert (rolled["version"], rolled["previous_version"], rolled["rollback"]) == ("2", "3", True)
    assert _alias(store) == "2" and _alias(store, "staging") == "2"

    assert main(["--json", "promote", "--history", MODEL, "--tracking-uri", store]) == 0
    moves = _json(capsys)["moves"]
    assert [(move["number"], move["alias"], move["version"], move["previous_version"]) for move in moves] == [
        (5, "champion", "2", "3"), (4, "champion", "3", "2"), (3, "staging", "2", None), (2, "champion", "2", "1"),
        (1, "champion", "1", None)]
    assert [(move["forced"], move["rollback"]) for move in moves[:2]] == [(False, True), (True, False)]
    assert {move["user"] for move in moves} == {"ops"}

    assert main(["promote", "--model", MODEL, "--history", "--alias", "staging", "--tracking-uri", store]) == 0
    table = capsys.readouterr().out
    assert "moves of @staging of 'demo', newest first" in table and "gate passed" in table and "champion" not in table

    assert rollback(MODEL, tracking_uri=store).version == "3"  # a second rollback undoes the first
    with pytest.raises(ConfigError, match="named no version before version 2 .*nothing to roll back to"):
        rollback(MODEL, "staging", tracking_uri=store)
    with pytest.raises(ConfigError, match="no recorded move of @canary"):
        rollback(MODEL, "canary", tracking_uri=store)
    MlflowClient(store).set_registered_model_alias(MODEL, "champion", versions[0])  # moved by other means
    with pytest.raises(ConfigError, match="names version 1, not version 3 that its last recorded move set"):
        rollback(MODEL, tracking_uri=store)


def _hindcast(folder: Path, run_id: str, model_nse: list[float], issues: int = 30) -> Path:
    """A hindcast file of two stations and leads 1-2 made by ``run_id``, its scores (the model's NSE per lead at
    both stations, persistence 0.5 and 0.3) beside it."""
    times = np.datetime64("2014-06-01T08:00", "ns") + np.arange(issues) * np.timedelta64(1, "D")
    stations, leads = ("01022500", "01547700"), np.array([1, 2])
    result = ForecastResult(issue_times=times, stations=stations, leads=leads, step=pd.Timedelta("1D"),
                            values=np.ones((issues, 2, 2), np.float32), variable="streamflow", units="mm/d",
                            long_name="forecast of streamflow", attributes={"model_run_id": run_id})
    path = write_forecast_netcdf(result, folder / f"hindcast_{run_id[:8]}.nc")
    nse = np.stack([np.tile(model_nse, (2, 1)), np.tile([0.5, 0.3], (2, 1)), np.full((2, 2), -0.1)])
    scores = HindcastScores(stations, leads, ("model", "persistence", "climatology"), np.full(nse.shape, issues), nse,
                            nse, np.full(nse.shape, np.nan))
    write_scores_csv(scores, path.with_name(f"{path.stem}_scores.csv"))
    return path


def test_the_gate_reads_one_hindcast_per_version(store: str, tmp_path: Path, capfd) -> None:
    client = MlflowClient(store)
    champion = _version(store, {1: 0.90, 2: 0.90}, {1: 0.50, 2: 0.20})
    candidate = _version(store, {1: 0.10, 2: 0.10}, {1: 0.50, 2: 0.20})  # worse on validation, better on the hindcast
    promote(MODEL, champion, tracking_uri=store)
    mine = _hindcast(tmp_path, client.get_model_version(MODEL, candidate).run_id, [0.8, 0.6])
    theirs = _hindcast(tmp_path, client.get_model_version(MODEL, champion).run_id, [0.7, 0.5])

    args = ["promote", "--model", MODEL, "--version", candidate, "--tracking-uri", store, "--hindcast"]
    assert main([*args, str(theirs), str(mine)]) == ExitCode.CONFIG
    assert f"--hindcast {theirs.name} was made by run" in _one_line_error(capfd)
    assert main([*args, str(mine)]) == ExitCode.CONFIG
    assert "@champion names version 1: give its hindcast too" in _one_line_error(capfd)
    assert main(["-q", *args, str(mine), str(theirs)]) == 0
    (move, _) = promotion_history(MODEL, tracking_uri=store)
    assert move.evaluation == "hindcast 2014-06-01T08:00Z..2014-06-30T08:00Z, 30 issue times"
    assert move.figures[1] == {"lead": 2, "candidate": 0.6, "champion": 0.5, "persistence": 0.3}

    # version 2 is the champion now: version 1 is judged against it, on the hindcasts of the same issue times
    earlier = client.get_model_version(MODEL, champion).run_id
    shorter = _hindcast(tmp_path / "shorter", earlier, [0.9, 0.9], issues=20)
    with pytest.raises(ConfigError, match="not scored on the same evaluation"):
        promote(MODEL, champion, tracking_uri=store, hindcast=[shorter, mine])
    worse = _hindcast(tmp_path / "worse", earlier, [0.9, 0.2])
    with pytest.raises(RefusedError, match=r"version 1 is worse than the champion version 2 at lead 2: median NSE "
                                          r"0.200 against 0.600 \(hindcast 2014-06-01T08:00Z..2014-06-30T08:00Z, 30 "
                                          r"issue times\); --force"):
        promote(MODEL, champion, tracking_uri=store, hindcast=[worse, mine])


@pytest.mark.parametrize(("args", "expected"), [
    (["--rollback", "--force"], "--rollback takes no --hindcast or --force"),
    (["--history", "--force"], "--history lists the moves"),
    (["--history", "other"], "name two models"),
    (["--version", "1", "--alias", "v2"], "--alias 'v2' is reserved"),
])
def test_promote_options_that_do_not_go_together(args: list[str], expected: str, store: str, capfd) -> None:
    assert main(["promote", "--model", MODEL, *args, "--tracking-uri", store]) == ExitCode.CONFIG
    assert expected in _one_line_error(capfd)


def test_promote_needs_one_of_version_rollback_history(store: str, capfd) -> None:
    for args in ([], ["--version", "1", "--rollback"]):
        with pytest.raises(SystemExit) as stopped:
            main(["promote", "--model", MODEL, *args, "--tracking-uri", store])
        assert stopped.value.code == ExitCode.USAGE
    capfd.readouterr()
    assert main(["promote", "--version", "1", "--tracking-uri", store]) == ExitCode.CONFIG
    assert "name the registered model: --model NAME" in _one_line_error(capfd)
    assert main(["promote", "--history", "absent", "--tracking-uri", store]) == ExitCode.CONFIG
    assert "no registered model 'absent'" in _one_line_error(capfd)
