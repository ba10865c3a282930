"""The model that reads weather-forecast runs, in one command: train, score with noisy and perfect inputs, and
hindcast from the example GRIB2 runs (deterministic and a 10-member ensemble).

    .venv/bin/python -m experiments.grib2_forecast_model [--out runs/grib2_model] [--json FILE]
    .venv/bin/python -m experiments.grib2_forecast_model --quick      # a smoke run: seconds, figures meaningless

Steps, each a ``hydroseq`` command (printed as it runs):

1. the 31 bundled basins ingested; a generated forecast product made from their reanalysis with noise
   growing with the lead (``--noise-std 0.25 0.5 0.75``, the stand-in for an archive of issued forecasts)
   and one without noise (perfect inputs), each ingested with ``configs/ingest_caravan_daily_forecast.yaml``;
2. ``configs/train_caravan_grib2_forecast.yaml`` trained on the noisy one (one torch thread);
3. scored on the test period (2005-10 .. 2014-09) with the noisy inputs and with the perfect ones
   (``hydroseq evaluate --data``);
4. exported, then a hindcast of 2014-09-21 .. 09-27 from the example runs of ``data/forecast_grib2/``
   ingested with ``configs/ingest_grib2_hres.yaml`` (deterministic) and ``configs/ingest_grib2_ensemble.yaml``
   (each of the 10 members drives the model, the forecast is their mixture).

The example runs are the reanalysis written as GRIB2 (members: perturbations of it), not a weather forecast:
the hindcast shows the path runs end to end and how the ensemble changes the spread, not the skill of a
numerical weather prediction.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
CONFIG = REPO_ROOT / "configs" / "train_caravan_grib2_forecast.yaml"
NOISE = ("0.25", "0.5", "0.75")
HINDCAST = "2014-09-21..2014-09-27"
HYDROSEQ = [sys.executable, "-m", "hydroseq"]


def hydroseq(*args: str) -> dict:
    """Run ``hydroseq --json ARGS`` and return its summary (tables go to stderr)."""
    command = [*HYDROSEQ, "--json", *args]
    print("$ hydroseq " + " ".join(args), file=sys.stderr, flush=True)
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True)
    if done.returncode not in (0, 5):
        sys.exit(f"{' '.join(args[:1])} exited with {done.returncode}: {done.stdout[-2000:]}{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def product(out: Path, data: Path, noise: tuple[str, ...], name: str) -> Path:
    """A generated product of ``data``'s reanalysis with ``noise``, ingested beside the observations."""
    product_path = out / f"forecast_product_{name}.nc"
    subprocess.run([sys.executable, "pipelines/make_forecast_product.py", "--data", str(data), "--variables",
                    "total_precipitation_sum", "temperature_2m_mean", "--out", str(product_path), "--noise-std",
                    *noise, "--horizon", "3", "--latency", "6h", "--seed", "0"], cwd=REPO_ROOT, check=True)
    config = yaml.safe_load((REPO_ROOT / "configs" / "ingest_caravan_daily_forecast.yaml").read_text())
    config["forecast_sources"][0]["path"] = str(product_path)
    # lead-3 noise of 0.75 standard deviations takes a 45 degC day past the 60 degC default bound
    temperature = config["forecast_sources"][0]["variables"]["temperature_2m_mean_forecast"]
    temperature.update(valid_min=173.15, valid_max=353.15)
    config_path = out / f"ingest_{name}.yaml"
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    ingested = out / f"caravan_daily_forecast_{name}.nc"
    hydroseq("ingest", "--config", str(config_path), "--out", str(ingested))
    return ingested


def train_config(out: Path, data: Path, quick: bool) -> Path:
    config = yaml.safe_load(CONFIG.read_text())
    config["data"].update(path=str(data), cache_dir=str(out / "cache"))
    config["training"].update(output_dir=str(out / "train"), threads=1)
    config["tracking"].update(tracking_uri=f"sqlite:///{out / 'mlruns.db'}", artifact_root=str(out / "mlartifacts"))
    if quick:
        config["data"].update(stations=["01022500", "01547700", "02064000"])
        config["training"].update(epochs=1, max_batches_per_epoch=2, ensemble=1)
    path = out / "train.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def distribution(path: Path) -> dict[str, dict[str, float]]:
    """Per lead, the median over stations of the hindcast's CRPS, CRPS skill and coverages."""
    import pandas as pd

    table = pd.read_csv(path, dtype={"station": str})
    columns = ["crps", "crps_climatology", "crpss_climatology", "crpss_persistence", "coverage50", "coverage90"]
    per_lead = table.groupby("lead")[columns].median().round(3)
    positive = table.groupby("lead")["crpss_climatology"].apply(lambda skill: int((skill > 0).sum()))
    return {str(lead): {**row.to_dict(), "crpss_climatology_positive": int(positive[lead]),
                        "stations": int((table["lead"] == lead).sum())} for lead, row in per_lead.iterrows()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "runs" / "grib2_model")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    figures: dict = {"noise_std": list(NOISE), "hindcast_issue_times": HINDCAST}
    data = out / "caravan_daily.nc"
    hydroseq("ingest", "--config", "configs/ingest_caravan_daily.yaml", "--out", str(data))
    noisy, perfect = product(out, data, NOISE, "noisy"), product(out, data, ("0", "0", "0"), "perfect")
    started = time.perf_counter()
    trained = hydroseq("train", "--config", str(train_config(out, noisy, args.quick)))
    figures["train"] = {"run_id": trained["run_id"], "best_epoch": trained["best_epoch"],
                        "epochs_completed": trained["epochs_completed"],
                        "wall_s": round(time.perf_counter() - started), "validation": trained["validation"]}
    tracking = ["--tracking-uri", f"sqlite:///{out / 'mlruns.db'}"]
    for name, path in (("test_noisy_inputs", noisy), ("test_perfect_inputs", perfect)):
        scored = hydroseq("evaluate", "--run", trained["run_id"], "--period", "test", "--data", str(path), *tracking)
        figures[name] = scored["summary"]
    model = out / "model"
    hydroseq("export", "--run", trained["run_id"], "--seq-len", "365", "--out", str(model), *tracking)
    for kind in ("hres", "ensemble"):
        ingested = out / f"grib2_{kind}.nc"
        hydroseq("ingest", "--config", f"configs/ingest_grib2_{kind}.yaml", "--out", str(ingested))
        hindcast = hydroseq("forecast", "--model", str(model), "--data", str(ingested), "--issue-time", HINDCAST,
                            "--out", str(out / f"hindcast_grib2_{kind}.nc"))
        scores = distribution(out / f"hindcast_grib2_{kind}_probabilistic.csv")
        figures[f"hindcast_grib2_{kind}"] = {"hindcast": hindcast.get("hindcast"), "files": hindcast["files"],
                                             "distribution": scores}
    text = json.dumps(figures, indent=1, default=str)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
