"""NeuralHydrology's own hydrological signatures of real series: the reference for ``hydroseq.scoring.signatures``.

What it reproduces: every signature of ``neuralhydrology.evaluation.signatures`` (release 1.13.0,
``get_available_signatures``), each called with its defaults on an xarray DataArray with a daily
``date`` dimension, the precipitation as a DataArray of the same dates. ``tests/scoring/test_signatures.py``
recomputes them with :mod:`hydroseq.scoring.signatures` and requires the same numbers within 1e-6.

Three series per basin, for the 100 CAMELS-US basins of ``nh_metrics_reference.py``:

* ``observed_wy2014`` and ``simulated_wy2014``: the observed streamflow and the day-1 forecasts of the
  metrics' reference (local days 2013-10-02 .. 2014-10-01), the series the metrics are compared on;
* ``observed_1989_2009``: Caravan's observed streamflow over the local days 1989-10-01 .. 2009-10-01,
  20 full water years and 19 full calendar years, for the signatures computed per year (a one-year
  series starting on 2 October has no full year: NeuralHydrology and hydroseq give NaN there).

Precipitation is Caravan's ``total_precipitation_sum`` (mm/d, like the streamflow) of the same basin and
days. Where hydroseq departs from NeuralHydrology on purpose (steps with a missing flow), the reference
also holds NeuralHydrology's value on the observed steps only (``<signature>_observed_steps``: the
series with its missing steps dropped, the precipitation of the same days).

Run in a venv with neuralhydrology==1.13.0 and numba (``python -m experiments.nh.venv`` makes one)::

    NH_VENV/bin/python -m experiments.nh_signatures_reference

It writes ``tests/scoring/data/nh_signatures_reference.csv``: one row per basin and series,
NeuralHydrology's values to 17 significant digits (empty where NaN), and a first line with the
versions used. It imports nothing from hydroseq.
"""

from __future__ import annotations

import argparse
import warnings
from importlib import metadata
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from experiments.nh_metrics_reference import (
    CARAVAN_SERIES,
    FIXTURES,
    REPO_ROOT,
    SIM_FIXTURE,
    nh_evaluation_module,
    read_simulations,
)

REFERENCE = FIXTURES / "nh_signatures_reference.csv"
LONG_PERIOD = ("1989-10-01", "2009-10-01")
# Signatures whose hydroseq value is NeuralHydrology's on the observed steps only.
OBSERVED_STEPS = ("zero_q_freq", "slope_fdc", "runoff_ratio")


def caravan_series(station: str, dates: pd.Index) -> tuple[np.ndarray, np.ndarray]:
    """Caravan's observed streamflow (NaN where missing) and precipitation (mm/d) of one basin on ``dates``."""
    table = pd.read_csv(CARAVAN_SERIES / f"camels_{station}.csv", usecols=["date", "total_precipitation_sum",
                                                                           "streamflow"], dtype={"date": str})
    table = table.set_index("date").reindex(dates)
    return table["streamflow"].to_numpy(np.float64), table["total_precipitation_sum"].to_numpy(np.float64)


def nh_signatures(nh: Any, flow: np.ndarray, rain: np.ndarray, dates: pd.DatetimeIndex) -> dict[str, float]:
    """NeuralHydrology's value of every signature (NaN where it raises), and the observed-steps variants."""
    da = xr.DataArray(flow, coords={"date": dates}, dims="date")
    prcp = xr.DataArray(rain, coords={"date": dates}, dims="date")
    observed = da.dropna("date")
    observed_prcp = prcp.sel(date=observed["date"])
    values: dict[str, float] = {}
    for name in nh.get_available_signatures():
        values[name] = _value(lambda name=name: nh.calculate_signatures(da, [name], "date", prcp)[name])
    for name in OBSERVED_STEPS:
        values[f"{name}_observed_steps"] = _value(
            lambda name=name: nh.calculate_signatures(observed, [name], "date", observed_prcp)[name])
    return values


def _value(compute: Any) -> float:
    try:
        return float(compute())
    except (ValueError, ZeroDivisionError, IndexError) as error:  # e.g. numba's 0/0 on a basin without flow
        print(f"  NeuralHydrology raised {type(error).__name__}: {error}")
        return float("nan")


def make_reference() -> None:
    """NeuralHydrology's signatures of the three series of every basin of the simulation fixture."""
    nh = nh_evaluation_module("signatures")
    # NeuralHydrology's code warns on empty means (no full year) and on 0/0; the values stand as returned
    warnings.simplefilter("ignore", category=RuntimeWarning)
    simulations = read_simulations()
    short = pd.DatetimeIndex(pd.to_datetime(simulations.index, format="%Y-%m-%d"), name="date")
    long = pd.date_range(*LONG_PERIOD, freq="D", name="date")
    rows = []
    for station in simulations.columns:
        flow, rain = caravan_series(station, simulations.index)
        long_flow, long_rain = caravan_series(station, long.strftime("%Y-%m-%d"))
        series = {"observed_wy2014": (flow, rain, short),
                  "simulated_wy2014": (simulations[station].to_numpy(np.float64), rain, short),
                  "observed_1989_2009": (long_flow, long_rain, long)}
        for name, (values, precipitation, dates) in series.items():
            row: dict[str, Any] = {"station": station, "series": name,
                                   "n_valid": int(np.isfinite(values).sum()), "n_steps": values.size}
            row.update(nh_signatures(nh, values, precipitation, dates))
            rows.append(row)
    table = pd.DataFrame(rows)
    versions = ", ".join(f"{package} {metadata.version(package)}"
                         for package in ("neuralhydrology", "numpy", "numba", "scipy", "xarray", "pandas"))
    with REFERENCE.open("w") as stream:
        stream.write(f"# neuralhydrology.evaluation.signatures on {SIM_FIXTURE.name} and Caravan's "
                     f"camels_<id>.csv ({LONG_PERIOD[0]}..{LONG_PERIOD[1]}); {versions}\n")
        table.to_csv(stream, index=False, float_format="%.17g")
    print(f"wrote {REFERENCE.relative_to(REPO_ROOT)}: {len(table)} series ({versions})")


def main(argv: list[str] | None = None) -> int:
    """Command line: no arguments (run in NeuralHydrology's venv)."""
    argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0]).parse_args(argv)
    make_reference()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
