"""The week-ahead regional model, in one command: make its training data, train it, choose its leads, export, score.

    CARAVAN_ROOT=/path/to/Caravan .venv/bin/python -m experiments.week_ahead_model
    .venv/bin/python -m experiments.week_ahead_model --score-only --model models/caravan-camels-us-daily-week-ahead
    .venv/bin/python -m experiments.week_ahead_model --quick      # a smoke run: minutes, figures meaningless

1. The regional basins of the probabilistic base (``configs/ingest_caravan_regional.yaml``: every CAMELS-US
   basin but the 31 bundled ones) less the basin holdout (``data/week_ahead_holdout_basins.txt``: one
   per water-resources region), with a GENERATED forecast product of their reanalysis whose errors are
   drawn from the ``family`` of error models (``pipelines/make_forecast_product.py``) for leads 1-7;
2. ``configs/train_caravan_regional_week_ahead.yaml`` trained on it (one torch thread, three members):
   a correction of the shipped probabilistic base, which it holds frozen;
3. the corrected leads chosen on the VALIDATION period (2001-10 .. 2005-09) of the basin holdout, with
   forecasts of the ``harsh`` error model (held out from training): a lead keeps its correction only if
   the holdout's median NSE with it is at least the base's; the others are the base (the gate is saved
   with the weights); exported to ``--model`` with ``SHA256SUMS``;
4. the 31 bundled basins (never trained on) on the test period (2005-10 .. 2014-09), with products of
   their own reanalysis under other seeds: the training family, the ``harsh`` errors that chose the
   leads, the ``nwp_like`` errors never trained or chosen on (the held-out family), and perfect
   forecasts; per lead, median / mean NSE and KGE, CRPSS against climatology, 50 / 90 % coverage,
   stations beating persistence and the base model without forecast inputs on the same days (leads
   4-7: its lead-3 forecast, the correction's anchor); written to ``--out``/scores.json and printed as
   the results page's table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
TRAIN_CONFIG = REPO_ROOT / "configs" / "train_caravan_regional_week_ahead.yaml"
FORECAST_INGEST = REPO_ROOT / "configs" / "ingest_caravan_regional_forecast.yaml"
BASE_MODEL = REPO_ROOT / "models" / "caravan-camels-us-daily-probabilistic"
WEEK_MODEL = REPO_ROOT / "models" / "caravan-camels-us-daily-week-ahead"
VARIABLES = ("total_precipitation_sum", "temperature_2m_mean")
HORIZON = 7
HYDROSEQ = [sys.executable, "-m", "hydroseq"]
REGIONAL_INGEST = REPO_ROOT / "configs" / "ingest_caravan_regional.yaml"
HOLDOUT = REPO_ROOT / "data" / "week_ahead_holdout_basins.txt"
BUNDLED = REPO_ROOT / "data" / "daily_caravan_camels_us" / "basins.txt"
TRAINING_ERRORS, SELECTION_ERRORS = "family", "harsh"
SCENARIOS = {"training_family": ("family", 11), "selection_errors_harsh": ("harsh", 12),
             "held_out_family_nwp_like": ("nwp_like", 13), "perfect": ("perfect", 0)}
QUICK_STATIONS = ["camels_01047000", "camels_01054200", "camels_01055000"]


def hydroseq(*args: str, env: dict[str, str] | None = None) -> dict:
    """Run ``hydroseq --json ARGS`` and return its summary (tables go to stderr)."""
    print("$ hydroseq " + " ".join(args), file=sys.stderr, flush=True)
    done = subprocess.run([*HYDROSEQ, "--json", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})
    if done.returncode not in (0, 5):
        sys.exit(f"{args[0]} exited with {done.returncode}: {done.stdout[-2000:]}{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def make_product(data: Path, out: Path, error_model: str, error_scale: float, seed: int) -> Path:
    """A generated 7-lead product of ``data``'s reanalysis (``perfect``: no error at all)."""
    errors = (["--noise-std", *["0"] * HORIZON] if error_model == "perfect"
              else ["--error-model", error_model, "--error-scale", str(error_scale)])
    command = [sys.executable, "pipelines/make_forecast_product.py", "--data", str(data), "--variables", *VARIABLES,
               "--out", str(out), "--horizon", str(HORIZON), "--latency", "6h", "--seed", str(seed), *errors]
    print("$ " + " ".join(command[1:]), file=sys.stderr, flush=True)
    subprocess.run(command, cwd=REPO_ROOT, check=True)
    return out


def listed_ids(path: Path) -> list[str]:
    """The station ids of a list file (one per line; ``#`` starts a comment)."""
    return [line.split("#")[0].strip() for line in path.read_text().splitlines() if line.split("#")[0].strip()]


def ingest_with_product(config: Path, product: Path, out: Path, caravan_root: str | None,
                        stations: dict[str, list[str]] | None = None) -> Path:
    """Ingest ``config`` with the forecast source of ``FORECAST_INGEST`` pointed at ``product`` to ``out``, once;
    ``stations`` updates the config's ``stations`` section (``ids``, ``exclude_ids``)."""
    if out.exists():
        return out
    settings = yaml.safe_load(config.read_text())
    settings["forecast_sources"] = yaml.safe_load(FORECAST_INGEST.read_text())["forecast_sources"]
    settings["forecast_sources"][0]["path"] = str(product)
    settings["stations"].update(stations or {})
    written = out.with_suffix(".ingest.yaml")
    written.write_text(yaml.safe_dump(settings, sort_keys=False))
    hydroseq("ingest", "--config", str(written), "--out", str(out),
             env={"CARAVAN_ROOT": caravan_root} if caravan_root else None)
    return out


def regional_data(out: Path, error_model: str, seed: int, caravan_root: str | None, part: str) -> Path:
    """The regional basins (``part``: ``training``, all but the bundled 31 and the holdout; ``holdout``) with a
    generated product of ``error_model`` (made once)."""
    observed = out / "caravan_regional.nc"
    if not observed.exists():
        hydroseq("ingest", "--config", str(REGIONAL_INGEST), "--out", str(observed),
                 env={"CARAVAN_ROOT": caravan_root} if caravan_root else None)
    ingested = out / f"caravan_regional_{part}_{error_model}_seed{seed}.nc"
    if not ingested.exists():
        product = make_product(observed, out / f"forecast_product_{part}_{error_model}_seed{seed}.nc", error_model,
                               1.0, seed)
        holdout = listed_ids(HOLDOUT)
        stations = ({"ids": holdout} if part == "holdout"
                    else {"exclude_ids": listed_ids(BUNDLED) + holdout})
        ingest_with_product(REGIONAL_INGEST, product, ingested, caravan_root, stations)
        product.unlink()  # 0.35 GB, re-made from the seed
    return ingested


def train_config(out: Path, data: Path, name: str, quick: bool, overrides: dict | None = None) -> Path:
    config = yaml.safe_load(TRAIN_CONFIG.read_text())
    config["data"].update(path=str(data), cache_dir=str(out / "cache"))
    config["training"].update(output_dir=str(out / f"train_{name}"), threads=1)
    config["tracking"].update(tracking_uri=f"sqlite:///{out / 'mlruns.db'}", artifact_root=str(out / "mlartifacts"))
    for section, values in (overrides or {}).items():
        config[section].update(values)
    if quick:
        config["data"]["stations"] = [station.removeprefix("camels_") for station in QUICK_STATIONS]
        config["training"].update(epochs=1, max_batches_per_epoch=2, ensemble=1)
    path = out / f"train_{name}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def score(model_dir: Path, data: Path, period: str, out_dir: Path, lead_gate: float | None = None) -> pd.DataFrame:
    """Per station and lead: the model's, persistence's and climatology's scores of ``period`` (Python API);
    ``lead_gate`` sets every lead's correction gate of a base correction (1: corrected, 0: the base)."""
    import torch

    from hydroseq.dataset import load_station_data
    from hydroseq.training.checkpoint import Checkpoint
    from hydroseq.training.report import report_split
    from hydroseq.training.runtime import set_threads

    checkpoint = Checkpoint.load(model_dir / "checkpoint.pt")
    config = checkpoint.config
    set_threads(config.training.model_copy(update={"threads": 1}))
    station_data = load_station_data(data, config.data)
    model = checkpoint.build_model()
    if lead_gate is not None:
        for gate in gates(model):
            gate.fill_(lead_gate)
    report = report_split(model, station_data, checkpoint.scalers, config, period,  # type: ignore[arg-type]
                          torch.device("cpu"), out_dir, n_plots=0, late_gauge=False, show_progress=False)
    table = report.scores.copy()
    if report.probabilistic is not None:
        prob = report.probabilistic.scores[["station", "lead", "crpss_climatology", "coverage50", "coverage90"]]
        table = table.merge(prob.assign(forecast="model"), on=["station", "lead", "forecast"], how="left")
    return table


def gates(model: object) -> list:
    """The ``lead_gate`` buffers of a base correction (one per ensemble member)."""
    members = getattr(model, "members", [model])
    return [member.lead_gate for member in members]


def choose_leads(trained: Path, data: Path, out: Path) -> tuple[Path, dict]:
    """Step 3: per lead, keep the correction where the holdout's validation median NSE with it is at least the
    base's; returns the checkpoint with that gate and the figures."""
    import torch

    from hydroseq.training.checkpoint import Checkpoint

    corrected = score(trained, data, "validation", out / "choose_corrected", lead_gate=1.0)
    base = score(trained, data, "validation", out / "choose_base", lead_gate=0.0)
    figures: dict = {}
    chosen = []
    for lead in sorted(set(corrected["lead"])):
        on = corrected[(corrected["lead"] == lead) & (corrected["forecast"] == "model")]["nse"].median()
        off = base[(base["lead"] == lead) & (base["forecast"] == "model")]["nse"].median()
        chosen.append(float(on >= off))
        figures[str(lead)] = {"corrected_median_nse": round(float(on), 3), "base_median_nse": round(float(off), 3),
                              "corrected": bool(on >= off)}
    checkpoint = Checkpoint.load(trained / "checkpoint.pt")
    gate = torch.tensor(chosen, dtype=torch.float32)
    for state in checkpoint.member_states or [checkpoint.model_state]:
        state["lead_gate"] = gate.clone()
    if checkpoint.member_states:
        checkpoint.model_state["lead_gate"] = gate.clone()
    gated = out / "week_ahead_gated.pt"
    checkpoint.save(gated)
    return gated, figures


def summarise(week: pd.DataFrame, base: pd.DataFrame | None) -> dict[str, dict[str, float]]:
    """Per lead: medians and means over stations, and the counts the results page reports."""
    rows: dict[str, dict[str, float]] = {}
    for lead, per_lead in week.groupby("lead"):
        wide = per_lead.pivot(index="station", columns="forecast", values="nse")
        model = per_lead[per_lead["forecast"] == "model"].set_index("station")
        row = {"model_median_nse": wide["model"].median(), "model_mean_nse": wide["model"].mean(),
               "model_median_kge": model["kge"].median(), "model_mean_kge": model["kge"].mean(),
               "persistence_median_nse": wide["persistence"].median(),
               "persistence_mean_nse": wide["persistence"].mean(),
               "climatology_median_nse": wide["climatology"].median(),
               "climatology_mean_nse": wide["climatology"].mean(),
               "beats_persistence": int((wide["model"] > wide["persistence"]).sum()),
               "stations": int(wide["model"].notna().sum())}
        if "crpss_climatology" in model:
            row.update(crpss_median=model["crpss_climatology"].median(),
                       crpss_positive=int((model["crpss_climatology"] > 0).sum()),
                       coverage50=model["coverage50"].median(), coverage90=model["coverage90"].median())
        if base is not None:  # leads past the base's last: its last lead's forecast, the correction's anchor
            base_lead = min(int(lead), int(base["lead"].max()))
            base_nse = base[(base["lead"] == base_lead) & (base["forecast"] == "model")].set_index("station")["nse"]
            row.update(base_median_nse=base_nse.median(), base_mean_nse=base_nse.mean(),
                       beats_base=int((wide["model"] > base_nse.reindex(wide.index)).sum()))
        rows[str(lead)] = {key: (round(float(value), 3) if isinstance(value, float) else value)
                           for key, value in row.items()}
    return rows


def table(figures: dict[str, dict[str, dict[str, float]]]) -> str:
    """The results page's table: one row per scenario and lead."""
    lines = ["| inputs | lead | model NSE median / mean | KGE median | persistence | climatology | "
             "beats persistence | base (no forecast input) | beats base | CRPSS (> 0) | coverage 50 / 90 % |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for scenario, per_lead in figures.items():
        for lead, row in per_lead.items():
            base = (f"{row['base_median_nse']:.3f} / {row['base_mean_nse']:.3f}" if "base_median_nse" in row else "")
            lines.append(
                f"| {scenario} | {lead} | {row['model_median_nse']:.3f} / {row['model_mean_nse']:.3f} | "
                f"{row['model_median_kge']:.3f} | {row['persistence_median_nse']:.3f} / "
                f"{row['persistence_mean_nse']:.3f} | {row['climatology_median_nse']:.3f} | "
                f"{row['beats_persistence']} of {row['stations']} | {base} | {row.get('beats_base', '')} | "
                f"{row.get('crpss_median', float('nan')):.3f} ({row.get('crpss_positive', '')}) | "
                f"{100 * row.get('coverage50', float('nan')):.1f} / {100 * row.get('coverage90', float('nan')):.1f} |")
    return "\n".join(lines)


def export(run_id: str, out: Path, model: Path) -> None:
    """Export the run's best checkpoint to ``model`` as a release: paths relative to the repository, SHA256SUMS."""
    hydroseq("export", "--run", run_id, "--seq-len", "365", "--out", str(model),
             "--tracking-uri", f"sqlite:///{out / 'mlruns.db'}")
    release(model)


def release(model: Path) -> None:
    """Make an exported model a release artifact (``hydroseq export --release``): paths relative to the
    repository, checksums in ``metadata.json`` and ``SHA256SUMS``."""
    from hydroseq.export import write_release

    write_release(model, REPO_ROOT)


def bundled_scores(out: Path, model: Path, quick: bool) -> dict:
    """Step 4: the 31 unseen basins, test period, four kinds of forecast input."""
    observed = out / "caravan_daily.nc"
    if not observed.exists():
        hydroseq("ingest", "--config", "configs/ingest_caravan_daily.yaml", "--out", str(observed))
    figures: dict = {}
    base = score(BASE_MODEL, observed, "test", out / "score_base")
    for scenario, (error_model, seed) in SCENARIOS.items():
        product = make_product(observed, out / f"bundled_product_{scenario}.nc", error_model, 1.0, seed)
        data = ingest_with_product(REPO_ROOT / "configs" / "ingest_caravan_daily.yaml", product,
                                   out / f"caravan_daily_{scenario}.nc", None)
        week = score(model, data, "test", out / f"score_{scenario}")
        week.to_csv(out / f"metrics_test_{scenario}.csv", index=False)
        figures[scenario] = summarise(week, base)
        if quick:
            break
    base.to_csv(out / "metrics_test_base.csv", index=False)
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "runs" / "week_ahead")
    parser.add_argument("--model", type=Path, default=WEEK_MODEL, help="where the model is exported")
    parser.add_argument("--run", default=None, help="a trained run id: choose, export and score it, train nothing")
    parser.add_argument("--score-only", action="store_true", help="score --model, train nothing")
    parser.add_argument("--release", action="store_true", help="make --model a release (relative paths, sums)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    caravan_root = os.environ.get("CARAVAN_ROOT")
    figures: dict = {}
    if args.release:
        release(args.model)
        return
    if not args.score_only:
        run_id = args.run
        if run_id is None:
            data = regional_data(out, TRAINING_ERRORS, 0, caravan_root, "training")
            started = time.perf_counter()
            trained = hydroseq("train", "--config", str(train_config(out, data, "week_ahead", args.quick)))
            run_id = trained["run_id"]
            figures["train"] = {"run_id": run_id, "best_epoch": trained["best_epoch"],
                                "wall_s": round(time.perf_counter() - started)}
        export(run_id, out, out / "model_ungated")
        holdout = regional_data(out, SELECTION_ERRORS, 101, caravan_root, "holdout")
        gated, figures["chosen_leads"] = choose_leads(out / "model_ungated", holdout, out)
        print(json.dumps(figures["chosen_leads"], indent=1), file=sys.stderr, flush=True)
        export(str(gated), out, args.model)
    figures["test"] = bundled_scores(out, args.model, args.quick)
    print(table(figures["test"]))
    text = json.dumps(figures, indent=1, default=str)
    (out / "scores.json").write_text(text + "\n")
    if args.json:
        args.json.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
