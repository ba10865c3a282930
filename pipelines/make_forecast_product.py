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

Errors (``--error-model``):

- ``independent`` (the default): noise independent for every station, reference time and step,
  with ``noise_std[l-1]`` for lead ``l`` (lead 1's for the first step): amounts are multiplied by
  ``exp(s e - s^2 / 2)``, ``e`` standard normal (log-normal, mean 1, never negative); mean
  variables get ``s * sd * e`` added, ``sd`` the station's standard deviation over the dataset.
- ``lead_growing`` (the stand-in for a numerical weather prediction's errors, scaled by
  ``--error-scale k``): errors correlated across the leads of one run and growing with the lead.
  Precipitation is *misplaced in time*: lead ``l`` takes the observed series at ``t + l + d_l``,
  linearly interpolated, ``d_l`` a random walk over the leads with steps of ``0.35 k`` days (so
  its spread is ``0.35 k sqrt(l)`` days: about a day at lead 7 with ``k = 1``), and its *amount*
  is multiplied by ``exp(s_l z_l - s_l^2 / 2)``, ``s_l = k (0.3 + 0.1 (l - 1))`` and ``z_l`` an
  AR(1) series over the leads (lag-one correlation 0.6, unit variance) clipped to +-3. Temperature gets
  ``k (0.6 + 0.25 (l - 1))`` kelvin times an AR(1) series (0.7) added: 0.6 K at lead 1, 2.1 K at
  lead 7. The first step (inside the latency) takes lead 1's amount and temperature errors and
  no displacement.
- ``harsh``: a different error model, for testing a model against errors it did not learn: the
  ``lead_growing`` structure with twice the displacement and amount spread, amounts independent
  between leads and 20 % too dry, and temperatures 1 K too warm with 1.5 times the spread.

- ``family`` (the week-ahead model's training errors): a *family* of error models, one drawn at
  random for every station and chunk of ``FAMILY_CHUNK_DAYS`` days: a precipitation timing random
  walk of 0-0.6 days per lead; amount spread ``a + b (l - 1)``, ``a`` in 0.1-0.6 and ``b`` in 0-0.15,
  correlated over the leads (lag one 0-0.9); an amount bias x0.70-1.42; misses (a wet day forecast
  dry, 0-20 %) and false alarms (a dry day given an exponential amount of mean 1.6-8 mm, 0-20 %);
  temperature bias -1.5..1.5 K and spread ``0.3-1.0 + (0.1-0.4)(l - 1)`` K;
  and the value issued is the mean of 1 or 5 such members (an ensemble mean: drizzle, lower peaks).
- ``nwp_like`` (held out: never trained or chosen on): another functional form. The whole run is
  late or early together (``z (0.2 + 0.1 l)`` days, one ``z`` per run); intensities are compressed
  towards 5 mm (``x (x / 5)^-0.3``: light rain too wet, storms too dry) with 0.3 mm of drizzle on dry
  days beside wet ones; amounts get independent gamma errors of variation ``0.25 + 0.1 (l - 1)``;
  temperatures a seasonal bias ``1.2 sin(2 pi doy / 365.25)`` K and an AR(1) error (0.9) of
  ``0.5 + 0.2 (l - 1)`` K.

No generated day holds more than 500 mm (``MAX_AMOUNT_MM``: a storm times a 3-sigma amount error of a late
lead would pass ingest's world-record bound). The noise of ``independent``, ``lead_growing`` and ``harsh``
depends only on the seed and the array's shape, never on the observations; ``family`` and ``nwp_like`` also
look at the observed amount of the day they displace (misses, false alarms, compression, drizzle). Every
model's product of one reference time uses the observations of its own valid times (a day either side for
timing errors) and nothing published later. The file's global attributes say that it is generated and how.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from hydroseq.errors import HydroseqError, InputDataError
from hydroseq.fileio import atomic_path
from hydroseq.ingested import open_ingested

EPOCH = np.datetime64("1970-01-01T00:00:00", "ns")


ERROR_MODELS = ("independent", "lead_growing", "harsh", "family", "nwp_like")
FAMILY_CHUNK_DAYS = 90
FAMILY_MEMBERS = (1, 5)
WET_DAY_MM = 1.0
FALSE_ALARM_MM = 8.0   # about the mean wet-day amount of the CAMELS-US basins
MAX_AMOUNT_MM = 500.0  # a generated day's cap (every error model), below ingest's world-record bound for 24 h


@dataclass(frozen=True)
class LeadErrors:
    """The sizes of a lead-growing error model (see the module docstring); ``k`` scales every spread."""

    displacement_step_days: float
    amount_spread: tuple[float, float]     # s_l = a + b (l - 1)
    amount_correlation: float              # lag-one correlation of the amount errors over the leads
    amount_factor: float                   # a bias: 1 is unbiased
    temperature_spread: tuple[float, float]
    temperature_correlation: float
    temperature_bias: float

    @classmethod
    def named(cls, error_model: str, k: float) -> LeadErrors:
        if error_model == "lead_growing":
            return cls(0.35 * k, (0.3 * k, 0.1 * k), 0.6, 1.0, (0.6 * k, 0.25 * k), 0.7, 0.0)
        if error_model == "harsh":
            return cls(0.7 * k, (0.6 * k, 0.2 * k), 0.0, 0.8, (0.9 * k, 0.375 * k), 0.7, 1.0)
        raise ValueError(f"no lead-growing error model {error_model!r}")


def make_product(data: Path, variables: Sequence[str], out: Path, noise_std: Sequence[float] | None, horizon: int,
                 latency: str, seed: int, error_model: str = "independent", error_scale: float = 1.0) -> xr.Dataset:
    """Write the generated product to ``out`` (atomically) and return it (see the module docstring).

    Raises
    ------
    InputDataError
        If a variable is not a dynamic variable of ``data``, the error model is unknown or
        ``noise_std`` does not give one value per lead (the ``independent`` model).
    """
    if error_model not in ERROR_MODELS:
        raise InputDataError(out, f"--error-model must be one of {', '.join(ERROR_MODELS)}, got {error_model!r}")
    if error_model == "independent" and (noise_std is None or len(noise_std) != horizon):
        raise InputDataError(out, f"--noise-std needs one value per lead ({horizon}), "
                                  f"got {0 if noise_std is None else len(noise_std)}")
    opened, grid = open_ingested(data)
    with opened:
        ds = opened.load()
    step, delay = grid.step, pd.Timedelta(latency)
    labels = ds["time"].values.astype("datetime64[ns]")
    ends = np.array([delay + lead * step for lead in range(horizon + 1)])
    rng = np.random.default_rng(seed)
    product: dict[str, tuple[tuple[str, ...], np.ndarray, dict[str, str]]] = {}
    for name in variables:
        if name not in ds.data_vars or ds[name].attrs.get("hydroseq_role") != "dynamic":
            raise InputDataError(data, f"{name!r} is not a dynamic variable of the dataset")
        observed = ds[name].values.astype(np.float64).T  # (time, station)
        is_amount = str(ds[name].attrs.get("cell_methods", "")).startswith("time: sum")
        first_fraction = (delay / step) if is_amount else 1.0
        if error_model == "independent":
            assert noise_std is not None
            noisy = _independent(observed, horizon, first_fraction, np.asarray(noise_std, np.float64), is_amount, rng)
        elif error_model == "family":
            noisy = _family(observed, horizon, first_fraction, is_amount, _is_temperature(ds[name], name), rng)
        elif error_model == "nwp_like":
            day_of_year = pd.DatetimeIndex(labels).day_of_year.to_numpy()
            noisy = _nwp_like(observed, horizon, first_fraction, is_amount, _is_temperature(ds[name], name),
                              day_of_year, rng)
        else:
            sizes = LeadErrors.named(error_model, error_scale)
            noisy = _lead_growing(observed, horizon, first_fraction, sizes, is_amount,
                                  _is_temperature(ds[name], name), rng)
        if is_amount:
            values, units, attrs = np.cumsum(noisy, axis=1) / 1000.0, "m", {"GRIB_stepType": "accum"}
        else:
            kelvin = ds[name].attrs.get("units") == "degC"
            values, units = (noisy + 273.15, "K") if kelvin else (noisy, str(ds[name].attrs.get("units", "1")))
            attrs = {"GRIB_stepType": "avg"}
        product[name] = (("time", "step", "station"), values.astype(np.float32),
                         {"units": units, "long_name": f"generated forecast of {name}", **attrs})
    references = labels - np.timedelta64(delay.value, "ns")
    hours = ends / pd.Timedelta(hours=1)
    valid = references[:, None] + ends.astype("timedelta64[ns]")[None, :]
    errors = (f"noise std per lead {list(noise_std or [])}: amounts x exp(s e - s^2/2), means + s sd e"
              if error_model == "independent" else f"error model {error_model} with scale k = {error_scale}")
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
        "hydroseq_error_model": error_model,
        "comment": (f"made by pipelines/make_forecast_product.py from {Path(data).name} (dataset_checksum "
                    f"{ds.attrs.get('dataset_checksum', '?')}); reference time = grid label - {latency}; "
                    f"{errors}; seed {seed}"),
        "Conventions": "CF-1.7",
    }
    with atomic_path(out) as tmp:
        result.to_netcdf(tmp, engine="netcdf4", encoding={"station": {"dtype": str}, **{
            name: {"_FillValue": np.float32(np.nan)} for name in product}})
    return result


def _independent(observed: np.ndarray, horizon: int, first_fraction: float, noise_std: np.ndarray,
                 is_amount: bool, rng: np.random.Generator) -> np.ndarray:
    """``(time, 1 + horizon, station)`` with noise independent for every value (the first step takes lead 1's)."""
    steps = _per_step_truth(observed, horizon, first_fraction)
    sigma = np.concatenate([noise_std[:1], noise_std])[None, :, None]
    noise = rng.standard_normal(steps.shape)
    if is_amount:
        return steps * np.exp(sigma * noise - sigma ** 2 / 2)
    return steps + sigma * np.nanstd(observed, axis=0)[None, None, :] * noise


def _ar1(rng: np.random.Generator, shape: tuple[int, int, int], correlation: float) -> np.ndarray:
    """Unit-variance AR(1) series along axis 1 of ``shape``, independent along the other axes."""
    shocks = rng.standard_normal(shape)
    series = np.empty(shape)
    series[:, 0] = shocks[:, 0]
    innovation = np.sqrt(1.0 - correlation ** 2)
    for lead in range(1, shape[1]):
        series[:, lead] = correlation * series[:, lead - 1] + innovation * shocks[:, lead]
    return series


def _lead_growing(observed: np.ndarray, horizon: int, first_fraction: float, sizes: LeadErrors, is_amount: bool,
                  is_temperature: bool, rng: np.random.Generator) -> np.ndarray:
    """``(time, 1 + horizon, station)``: errors correlated over one run's leads and growing with the lead."""
    count, stations = observed.shape
    shape = (count, horizon, stations)
    leads = np.arange(1, horizon + 1, dtype=np.float64)[None, :, None]
    truth = _per_step_truth(observed, horizon, first_fraction)
    if is_amount:
        displacement = np.cumsum(sizes.displacement_step_days * rng.standard_normal(shape), axis=1)
        position = np.arange(count, dtype=np.float64)[:, None, None] + leads + displacement
        index = np.clip(np.floor(position), 0, count - 2).astype(np.int64)
        weight = position - index
        columns = np.arange(stations)[None, None, :]
        moved = (1 - weight) * observed[index, columns] + weight * observed[index + 1, columns]
        moved[(position < 0) | (position > count - 1)] = np.nan
        moved[np.isnan(truth[:, 1:])] = np.nan   # past the end of the data stays missing
        spread = sizes.amount_spread[0] + sizes.amount_spread[1] * (leads - 1)
        # clipped at 3 standard deviations: an unclipped log-normal of spread 0.9 multiplies a storm by 25 now and then
        amount_error = np.clip(_ar1(rng, shape, sizes.amount_correlation), -3.0, 3.0)
        factor = sizes.amount_factor * np.exp(spread * amount_error - spread ** 2 / 2)
        first = truth[:, :1] * factor[:, :1]
        return np.minimum(np.concatenate([first, moved * factor], axis=1), MAX_AMOUNT_MM)
    spread = sizes.temperature_spread[0] + sizes.temperature_spread[1] * (leads - 1)
    bias = sizes.temperature_bias
    if not is_temperature:  # another mean variable: the same relative structure, in its own standard deviations
        scale = np.nanstd(observed, axis=0)[None, None, :] / 3.0
        spread, bias = spread * scale, 0.0
    error = bias + spread * _ar1(rng, shape, sizes.temperature_correlation)
    return truth + np.concatenate([error[:, :1], error], axis=1)


def _is_temperature(variable: xr.DataArray, name: str) -> bool:
    return name.startswith("temperature") or variable.attrs.get("units") in ("degC", "K")


def _displaced(observed: np.ndarray, position: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """``observed`` read at the fractional steps ``position [time, lead, station]``, linearly interpolated
    (NaN outside the record and where the true value is missing)."""
    count, stations = observed.shape
    index = np.clip(np.floor(position), 0, count - 2).astype(np.int64)
    weight = position - index
    columns = np.arange(stations)[None, None, :]
    moved = (1 - weight) * observed[index, columns] + weight * observed[index + 1, columns]
    moved[(position < 0) | (position > count - 1)] = np.nan
    moved[np.isnan(truth)] = np.nan
    return moved


def _chunk_draws(rng: np.random.Generator, count: int, stations: int, low: float, high: float) -> np.ndarray:
    """One uniform draw in ``[low, high)`` per station and chunk of days, repeated over it: ``[time, 1, station]``."""
    draws = rng.uniform(low, high, (count // FAMILY_CHUNK_DAYS + 1, stations))
    return np.repeat(draws, FAMILY_CHUNK_DAYS, axis=0)[:count, None, :]


def _ar1_varying(rng: np.random.Generator, shape: tuple[int, int, int], correlation: np.ndarray) -> np.ndarray:
    """:func:`_ar1` with a lag-one correlation per ``[time, 1, station]``."""
    shocks = rng.standard_normal(shape)
    series = np.empty(shape)
    series[:, 0] = shocks[:, 0]
    for lead in range(1, shape[1]):
        innovation = np.sqrt(1 - correlation[:, 0] ** 2)
        series[:, lead] = correlation[:, 0] * series[:, lead - 1] + innovation * shocks[:, lead]
    return series


def _family(observed: np.ndarray, horizon: int, first_fraction: float, is_amount: bool, is_temperature: bool,
            rng: np.random.Generator) -> np.ndarray:
    """``(time, 1 + horizon, station)``: the ``family`` error models (module docstring), drawn per chunk."""
    count, stations = observed.shape
    shape = (count, horizon, stations)
    leads = np.arange(1, horizon + 1, dtype=np.float64)[None, :, None]
    truth = _per_step_truth(observed, horizon, first_fraction)
    members = np.where(_chunk_draws(rng, count, stations, 0, 1) < 0.5, *FAMILY_MEMBERS)
    total = np.zeros(shape)
    if is_amount:
        walk = _chunk_draws(rng, count, stations, 0.0, 0.6)
        growth = _chunk_draws(rng, count, stations, 0, 0.15)
        spread = _chunk_draws(rng, count, stations, 0.1, 0.6) + growth * (leads - 1)
        correlation = _chunk_draws(rng, count, stations, 0.0, 0.9)
        bias = np.exp(_chunk_draws(rng, count, stations, -0.35, 0.35))
        miss, false_alarm = _chunk_draws(rng, count, stations, 0, 0.2), _chunk_draws(rng, count, stations, 0, 0.2)
        false_size = FALSE_ALARM_MM * _chunk_draws(rng, count, stations, 0.2, 1.0)
        for member in range(max(FAMILY_MEMBERS)):
            position = np.arange(count, dtype=np.float64)[:, None, None] + leads + np.cumsum(
                walk * rng.standard_normal(shape), axis=1)
            moved = _displaced(observed, position, truth[:, 1:])
            error = np.clip(_ar1_varying(rng, shape, correlation), -3.0, 3.0)
            value = np.minimum(moved * bias * np.exp(spread * error - spread ** 2 / 2), MAX_AMOUNT_MM)
            value = np.where((moved > WET_DAY_MM) & (rng.uniform(size=shape) < miss), 0.0, value)
            alarm = (moved <= WET_DAY_MM) & (rng.uniform(size=shape) < false_alarm)
            value = np.where(alarm, value + rng.exponential(1.0, shape) * false_size, value)
            total += np.where(member < members, value, 0.0)
        first = truth[:, :1] * bias[:, :1]
        return np.concatenate([first, total / members], axis=1)
    growth = _chunk_draws(rng, count, stations, 0.1, 0.4)
    spread = _chunk_draws(rng, count, stations, 0.3, 1.0) + growth * (leads - 1)
    bias = _chunk_draws(rng, count, stations, -1.5, 1.5)
    if not is_temperature:  # another mean variable: the same relative structure, in its own standard deviations
        scale = np.nanstd(observed, axis=0)[None, None, :] / 3.0
        spread, bias = spread * scale, bias * 0.0
    for member in range(max(FAMILY_MEMBERS)):
        total += np.where(member < members, spread * _ar1(rng, shape, 0.7), 0.0)
    error = bias + total / members
    return truth + np.concatenate([error[:, :1], error], axis=1)


def _nwp_like(observed: np.ndarray, horizon: int, first_fraction: float, is_amount: bool, is_temperature: bool,
              day_of_year: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``(time, 1 + horizon, station)``: the held-out ``nwp_like`` errors (module docstring)."""
    count, stations = observed.shape
    shape = (count, horizon, stations)
    leads = np.arange(1, horizon + 1, dtype=np.float64)[None, :, None]
    truth = _per_step_truth(observed, horizon, first_fraction)
    if is_amount:
        run_shift = rng.standard_normal((count, 1, stations)) * (0.2 + 0.1 * leads)
        moved = _displaced(observed, np.arange(count, dtype=np.float64)[:, None, None] + leads + run_shift,
                           truth[:, 1:])
        compressed = np.where(moved > 0, moved * np.power(np.maximum(moved, 1e-6) / 5.0, -0.3), 0.0)
        padded = np.concatenate([observed[:1], observed, np.full((horizon + 1, stations), np.nan)])
        valid_day = np.arange(count)[:, None] + np.arange(1, horizon + 1)[None, :]   # t + l, in padded: + 1
        beside = np.fmax(padded[valid_day], padded[valid_day + 2])                  # the days before and after
        compressed = np.where((moved <= 0.1) & (beside > WET_DAY_MM), compressed + 0.3, compressed)
        variation = 0.25 + 0.1 * (leads - 1)
        error = rng.gamma(1.0 / variation ** 2, variation ** 2, shape)
        return np.concatenate([truth[:, :1], compressed * error], axis=1)
    seasonal = 1.2 * np.sin(2 * np.pi * day_of_year / 365.25)[:, None, None]
    spread = 0.5 + 0.2 * (leads - 1)
    error = seasonal + spread * _ar1(rng, shape, 0.9)
    if not is_temperature:
        error = error * np.nanstd(observed, axis=0)[None, None, :] / 3.0
    return truth + np.concatenate([error[:, :1], error], axis=1)


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
    parser.add_argument("--noise-std", nargs="+", type=float, help="noise std per lead (--error-model independent)")
    parser.add_argument("--error-model", default="independent", choices=ERROR_MODELS, help="see the docstring")
    parser.add_argument("--error-scale", default=1.0, type=float, help="k of the lead_growing and harsh models")
    parser.add_argument("--horizon", required=True, type=int, help="leads (grid steps)")
    parser.add_argument("--latency", default="6h", help="publication delay after the reference time")
    parser.add_argument("--seed", default=0, type=int)
    args = parser.parse_args(argv)
    try:
        make_product(args.data, args.variables, args.out, args.noise_std, args.horizon, args.latency, args.seed,
                     args.error_model, args.error_scale)
    except HydroseqError as error:
        print(f"make_forecast_product: error: {error}", file=sys.stderr)
        return 2
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
