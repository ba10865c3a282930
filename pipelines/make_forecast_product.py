"""Build a GENERATED forecast product (not a real forecast) from an ingested dataset's observed forcings.

    python pipelines/make_forecast_product.py --data runs/demo/caravan_daily.nc \\
        --variables total_precipitation_sum temperature_2m_mean --out runs/demo/forecast_product.nc \\
        --noise-std 0.1 0.2 0.3 --horizon 3 --latency 6h --seed 0

No archive of issued weather forecasts is bundled with hydroseq, so the tests and the demo build
one from the observations plus noise, in the layout cfgrib writes for an ECMWF product at
stations: dimensions ``time`` (reference time), ``step`` (hours after it) and ``station``; a
``valid_time(time, step)`` coordinate; ``units`` and ``GRIB_stepType`` attributes; amounts (grid
variables aggregated by ``sum``, in mm) written in ``m`` accumulated since the reference time, as
ECMWF's ``tp``; temperatures (``degC``) written in ``K``; other mean variables unchanged.

Timing: one product per grid label ``t``, with reference time ``t - latency`` (so it is published at
``t``) and steps ``latency, latency + 1 step, ..., latency + horizon steps``: at issue ``t`` step ``l + 1``
covers exactly lead ``l``, the grid interval ``(t + (l-1) step, t + l step]``, whose value is the
observation labelled ``t + l`` (NaN past the end of the data). The first step, ``(t - latency, t]``,
is that much of the observation labelled ``t`` (an amount: ``latency / step`` of it).

Noise, independent for every station, reference time and step, with ``noise_std[l-1]`` for lead
``l`` (lead 1's for the first step): amounts are multiplied by ``exp(s e - s^2 / 2)``, ``e`` standard
normal (log-normal, mean 1, never negative); mean variables get ``s * sd * e`` added, ``sd`` the
station's standard deviation of the variable over the dataset. The file's global attributes say
that it is generated and how.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from hydroseq.errors import HydroseqError, InputDataError
from hydroseq.fileio import atomic_path
from hydroseq.ingested import open_ingested

EPOCH = np.datetime64("1970-01-01T00:00:00", "ns")


def make_product(data: Path, variables: Sequence[str], out: Path, noise_std: Sequence[float], horizon: int,
                 latency: str, seed: int) -> xr.Dataset:
    """Write the generated product to ``out`` (atomically) and return it (see the module docstring).

    Raises
    ------
    InputDataError
        If a variable is not a dynamic variable of ``data`` or ``noise_std`` does not give one
        value per lead.
    """
    if len(noise_std) != horizon:
        raise InputDataError(out, f"--noise-std needs one value per lead ({horizon}), got {len(noise_std)}")
    opened, grid = open_ingested(data)
    with opened:
        ds = opened.load()
    step, delay = grid.step, pd.Timedelta(latency)
    labels = ds["time"].values.astype("datetime64[ns]")
    ends = np.array([delay + lead * step for lead in range(horizon + 1)])
    rng = np.random.default_rng(seed)
    sigma = np.array([noise_std[0], *noise_std], dtype=np.float64)  # the first step takes lead 1's
    product: dict[str, tuple[tuple[str, ...], np.ndarray, dict[str, str]]] = {}
    for name in variables:
        if name not in ds.data_vars or ds[name].attrs.get("hydroseq_role") != "dynamic":
            raise InputDataError(data, f"{name!r} is not a dynamic variable of the dataset")
        observed = ds[name].values.astype(np.float64).T  # (time, station)
        is_amount = str(ds[name].attrs.get("cell_methods", "")).startswith("time: sum")
        steps = _per_step_truth(observed, horizon, (delay / step) if is_amount else 1.0)  # (time, step, station)
        noise = rng.standard_normal(steps.shape)
        if is_amount:
            noisy = steps * np.exp(sigma[None, :, None] * noise - sigma[None, :, None] ** 2 / 2)
            values, units, attrs = np.cumsum(noisy, axis=1) / 1000.0, "m", {"GRIB_stepType": "accum"}
        else:
            spread = np.nanstd(observed, axis=0)[None, None, :]
            noisy = steps + sigma[None, :, None] * spread * noise
            kelvin = ds[name].attrs.get("units") == "degC"
            values, units = (noisy + 273.15, "K") if kelvin else (noisy, str(ds[name].attrs.get("units", "1")))
            attrs = {"GRIB_stepType": "avg"}
        product[name] = (("time", "step", "station"), values.astype(np.float32),
                         {"units": units, "long_name": f"generated forecast of {name}", **attrs})
    references = labels - np.timedelta64(delay.value, "ns")
    hours = ends / pd.Timedelta(hours=1)
    valid = references[:, None] + ends.astype("timedelta64[ns]")[None, :]
    result = xr.Dataset(product, coords={
        "time": ("time", (references - EPOCH) / np.timedelta64(1, "s"),
                 {"units": "seconds since 1970-01-01", "standard_name": "forecast_reference_time",
                  "long_name": "initial time of forecast", "calendar": "proleptic_gregorian"}),
        "step": ("step", hours, {"units": "hours", "standard_name": "forecast_period",
                                 "long_name": "time since forecast_reference_time"}),
        "station": ("station", np.array([str(s) for s in ds["station"].values], dtype=object)),
        "valid_time": (("time", "step"), (valid - EPOCH) / np.timedelta64(1, "s"),
                       {"units": "seconds since 1970-01-01", "standard_name": "time", "long_name": "time"}),
    })
    result.attrs = {
        "title": "GENERATED forecast product (observed forcings plus noise): not a real forecast",
        "hydroseq_generated": "true",
        "comment": (f"made by pipelines/make_forecast_product.py from {Path(data).name} (dataset_checksum "
                    f"{ds.attrs.get('dataset_checksum', '?')}); reference time = grid label - {latency}; "
                    f"noise std per lead {list(noise_std)}: amounts x exp(s e - s^2/2), means + s sd e; seed {seed}"),
        "Conventions": "CF-1.7",
    }
    with atomic_path(out) as tmp:
        result.to_netcdf(tmp, engine="netcdf4", encoding={"station": {"dtype": str}, **{
            name: {"_FillValue": np.float32(np.nan)} for name in product}})
    return result


def _per_step_truth(observed: np.ndarray, horizon: int, first_fraction: float) -> np.ndarray:
    """``(time, 1 + horizon, station)``: step 0 is ``first_fraction`` of the observation at ``t``,
    step ``l`` the observation at ``t + l`` (NaN past the end)."""
    count = observed.shape[0]
    padded = np.concatenate([observed, np.full((horizon, observed.shape[1]), np.nan)])
    steps = np.stack([padded[lead:lead + count] for lead in range(horizon + 1)], axis=1)
    steps[:, 0] *= first_fraction
    return steps


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry (see the module docstring); exit status 2 with a message on bad input."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, type=Path, help="ingested NetCDF")
    parser.add_argument("--variables", required=True, nargs="+", help="dynamic variables to forecast")
    parser.add_argument("--out", required=True, type=Path, help="product NetCDF to write")
    parser.add_argument("--noise-std", required=True, nargs="+", type=float, help="noise std per lead")
    parser.add_argument("--horizon", required=True, type=int, help="leads (grid steps)")
    parser.add_argument("--latency", default="6h", help="publication delay after the reference time")
    parser.add_argument("--seed", default=0, type=int)
    args = parser.parse_args(argv)
    try:
        make_product(args.data, args.variables, args.out, args.noise_std, args.horizon, args.latency, args.seed)
    except HydroseqError as error:
        print(f"make_forecast_product: error: {error}", file=sys.stderr)
        return 2
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
