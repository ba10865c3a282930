"""NeuralHydrology's own metric values on 100 real series: the reference that hydroseq's metrics are tested against.

What it reproduces: ``neuralhydrology.evaluation.metrics`` (release 1.13.0) ``fdc_fhv``, ``fdc_fms``,
``fdc_flv``, ``mean_peak_timing``, ``missed_peaks``, ``alpha_nse``, ``beta_nse``, ``pearsonr``, ``nse``,
``kge`` and ``mean_absolute_percentage_peak_error`` (Peak-MAPE), each with its defaults on a daily series
(``resolution="1D"``), computed by NeuralHydrology itself on xarray DataArrays with a ``date`` dimension.
``tests/scoring/test_nh_parity.py`` recomputes them with :mod:`hydroseq.scoring` and requires the same numbers
within 1e-6.

The series (100 CAMELS-US basins, the local days 2013-10-02 .. 2014-10-01, water year 2014):

* observed: Caravan's ``streamflow`` (mm/d) as the shared data holds it
  (``../shared/data/caravan_camels_us/timeseries/csv/camels/camels_<id>.csv``), gaps included;
* simulated: a real model output, the day-1 forecast of the shipped regional base model
  (``models/caravan-camels-us-daily``) issued every day of water year 2014 with the gauge on time,
  rounded to 4 decimals. That period was used neither for training nor for choosing the epoch. The
  forecasts are committed as ``tests/scoring/data/nh_parity_sim_wy2014.csv.gz``; the basins are
  every 4th of the 401 regional training basins with at least 200 observed days in the period (15 have
  gaps and 17 days of zero flow, which the metrics treat specially; one has no flow all year).

Two steps, in two environments (NeuralHydrology is never a dependency of hydroseq)::

    # 1. hydroseq's venv: the forecasts (about 3 minutes on 2 cores), from the regional ingest
    #    (CARAVAN_ROOT=../shared/data/caravan_camels_us hydroseq ingest \\
    #     --config configs/ingest_caravan_regional.yaml --out runs/regional/caravan_regional.nc)
    .venv/bin/python experiments/nh_metrics_reference.py series --data runs/regional/caravan_regional.nc

    # 2. a venv with neuralhydrology==1.13.0 (``python -m experiments.nh.venv`` makes one; the metrics
    #    module needs only numpy, pandas, scipy, xarray and ruamel.yaml, so ``pip install numpy pandas
    #    scipy xarray ruamel.yaml`` then ``pip install --no-deps neuralhydrology==1.13.0`` is enough:
    #    without torch the package's ``evaluation/__init__`` is bypassed, see nh_evaluation_module)
    NH_VENV/bin/python experiments/nh_metrics_reference.py reference

Step 2 writes ``tests/scoring/data/nh_metrics_reference.csv``: one row per basin, NeuralHydrology's
values to 17 significant digits (float64 exactly; empty where NeuralHydrology returns NaN), and a
first line with the versions used. It imports nothing from hydroseq.
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import tempfile
import types
import warnings
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT / "tests" / "scoring" / "data"
SIM_FIXTURE = FIXTURES / "nh_parity_sim_wy2014.csv.gz"
REFERENCE = FIXTURES / "nh_metrics_reference.csv"
CARAVAN_SERIES = REPO_ROOT.parent / "shared" / "data" / "caravan_camels_us" / "timeseries" / "csv" / "camels"
MODEL = REPO_ROOT / "models" / "caravan-camels-us-daily"
ISSUE_TIMES = "2013-10-01..2014-09-30"
N_BASINS = 100
MIN_OBSERVED_DAYS = 200
SIM_DECIMALS = 4
# NeuralHydrology's function per reference column, all with their defaults (daily resolution).
NH_FUNCTIONS = {"fhv": "fdc_fhv", "fms": "fdc_fms", "flv": "fdc_flv", "peak_timing": "mean_peak_timing",
                "missed_peaks": "missed_peaks", "alpha_nse": "alpha_nse", "beta_nse": "beta_nse",
                "r": "pearsonr", "nse": "nse", "kge": "kge", "peak_mape": "mean_absolute_percentage_peak_error"}


def observed(station: str, dates: pd.Index) -> np.ndarray:
    """Caravan's observed streamflow (mm/d, NaN where missing) of one basin on ``dates`` (YYYY-MM-DD)."""
    table = pd.read_csv(CARAVAN_SERIES / f"camels_{station}.csv", usecols=["date", "streamflow"], dtype={"date": str})
    return table.set_index("date")["streamflow"].reindex(dates).to_numpy(dtype=np.float64)


def read_simulations(path: Path = SIM_FIXTURE) -> pd.DataFrame:
    """The committed forecasts: index ``date`` (YYYY-MM-DD), one float64 column per basin id."""
    return pd.read_csv(path, index_col="date", dtype={"date": str}).astype(np.float64)


def make_series(data: Path, work: Path) -> None:
    """Step 1: forecast the chosen basins with the shipped model and write the simulation fixture."""
    with xr.open_dataset(data) as ingested:
        # valid_time T of a lead-1 forecast is the end of the local day T - 32 h (grid Etc/GMT+8, interval_end)
        period = ingested["streamflow"].sel(time=slice("2013-10-03T08:00", "2014-10-02T08:00"))
        enough = np.flatnonzero(period.notnull().sum("time").to_numpy() >= MIN_OBSERVED_DAYS)
        chosen = enough[[i * enough.size // N_BASINS for i in range(N_BASINS)]]
        work.mkdir(parents=True, exist_ok=True)
        # every station's full record stays: the hindcast's climatology baseline reads the training period
        ingested.isel(station=chosen).load().to_netcdf(work / "nh_parity_basins.nc")
    out = work / "nh_parity_hindcast.nc"
    subprocess.run([sys.executable, "-m", "hydroseq", "-q", "forecast", "--model", str(MODEL),
                    "--data", str(work / "nh_parity_basins.nc"), "--issue-time", ISSUE_TIMES, "--out", str(out)],
                   check=True)
    with xr.open_dataset(out) as hindcast:
        day1 = hindcast["streamflow"].sel(lead=1).transpose("forecast_reference_time", "station")
        valid = pd.DatetimeIndex(hindcast["time"].sel(lead=1).to_numpy())
        dates = pd.Index((valid - pd.Timedelta(hours=32)).strftime("%Y-%m-%d"), name="date")
        table = pd.DataFrame(np.round(day1.to_numpy().astype(np.float64), SIM_DECIMALS), index=dates,
                             columns=hindcast["station"].to_numpy().astype(str))
    FIXTURES.mkdir(parents=True, exist_ok=True)
    table.to_csv(SIM_FIXTURE, float_format=f"%.{SIM_DECIMALS}f")
    print(f"wrote {SIM_FIXTURE.relative_to(REPO_ROOT)}: {table.shape[1]} basins x {table.shape[0]} days")


def nh_evaluation_module(name: str = "metrics") -> types.ModuleType:
    """``neuralhydrology.evaluation.<name>`` (``metrics``, ``signatures``), also from an install without torch.

    The package's ``evaluation/__init__.py`` imports the tester (and with it torch); the metrics
    module itself needs only numpy, pandas, scipy and xarray (the signatures also numba). Without
    torch, the ``evaluation`` package is registered without running its ``__init__`` and the
    unmodified module is imported from it.
    """
    try:
        return importlib.import_module(f"neuralhydrology.evaluation.{name}")
    except ModuleNotFoundError as error:
        if error.name != "torch":
            raise
    sys.modules.pop("neuralhydrology.evaluation", None)
    package_root = Path(importlib.import_module("neuralhydrology").__file__ or "").parent
    evaluation = types.ModuleType("neuralhydrology.evaluation")
    evaluation.__path__ = [str(package_root / "evaluation")]
    sys.modules["neuralhydrology.evaluation"] = evaluation
    return importlib.import_module(f"neuralhydrology.evaluation.{name}")


def make_reference() -> None:
    """Step 2: NeuralHydrology's values for every basin of the simulation fixture."""
    nh = nh_evaluation_module()
    # NeuralHydrology's own code warns (xarray's argmax, a 0/0 on a basin without flow); the values stand as returned
    warnings.simplefilter("ignore", category=FutureWarning)
    warnings.simplefilter("ignore", category=RuntimeWarning)
    simulations = read_simulations()
    dates = pd.DatetimeIndex(pd.to_datetime(simulations.index, format="%Y-%m-%d"), name="date")
    rows = []
    for station in simulations.columns:
        obs = xr.DataArray(observed(station, simulations.index), coords={"date": dates}, dims="date")
        sim = xr.DataArray(simulations[station].to_numpy(), coords={"date": dates}, dims="date")
        row: dict[str, Any] = {"station": station, "n_valid": int((obs.notnull() & sim.notnull()).sum())}
        for column, name in NH_FUNCTIONS.items():
            function: Callable[[xr.DataArray, xr.DataArray], float] = getattr(nh, name)
            row[column] = float(function(obs, sim))
        rows.append(row)
    table = pd.DataFrame(rows)
    versions = ", ".join(f"{package} {metadata.version(package)}"
                         for package in ("neuralhydrology", "numpy", "scipy", "xarray", "pandas"))
    with REFERENCE.open("w") as stream:
        stream.write(f"# neuralhydrology.evaluation.metrics on {SIM_FIXTURE.name}; {versions}\n")
        table.to_csv(stream, index=False, float_format="%.17g")
    print(f"wrote {REFERENCE.relative_to(REPO_ROOT)}: {len(table)} basins ({versions})")


def main(argv: list[str] | None = None) -> int:
    """Command line: ``series`` (hydroseq's venv) or ``reference`` (NeuralHydrology's venv)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    steps = parser.add_subparsers(dest="step", required=True)
    series = steps.add_parser("series", help="forecast the basins with the shipped model (hydroseq's venv)")
    series.add_argument("--data", type=Path, default=REPO_ROOT / "runs" / "regional" / "caravan_regional.nc",
                        help="the regional ingest (configs/ingest_caravan_regional.yaml)")
    series.add_argument("--work", type=Path, default=None,
                        help="folder for the intermediate files (default: a temporary one)")
    steps.add_parser("reference", help="NeuralHydrology's metric values (a venv with neuralhydrology)")
    args = parser.parse_args(argv)
    if args.step == "series":
        if args.work is not None:
            make_series(args.data, args.work)
        else:
            with tempfile.TemporaryDirectory() as work:
                make_series(args.data, Path(work))
    else:
        make_reference()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
