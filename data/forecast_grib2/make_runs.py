"""Write the example GRIB2 forecast runs of data/forecast_grib2/ with ecCodes (run once; the files are committed).

    python data/forecast_grib2/make_runs.py            # from the project root; rewrites hres/ and ens/

THE VALUES ARE NOT A WEATHER FORECAST. They are the bundled ERA5-Land reanalysis series of the 31
Caravan CAMELS-US basins (daily_caravan_camels_us/), laid out on a 0.5-degree grid as ECMWF's open
data would deliver a forecast, so that hydroseq's GRIB2 path can be exercised end to end:

- grid: 0.5 degrees, latitudes 48.5 N .. 27 N (north to south, as ECMWF writes them), longitudes
  125 W .. 67.5 W; a cell takes the series of the nearest gauge within 1 degree, other cells are
  missing (a GRIB bitmap), which keeps the files small;
- time: each basin's daily value (a local standard-time day, as Caravan's) is spread evenly over the
  day's hours in UTC; total precipitation ``tp`` is accumulated from the reference time in metres
  (``stepType accum``), 2 m temperature ``2t`` is the value at the step's valid time in kelvin
  (``instant``);
- ``hres/``: a deterministic run (``dataType fc``) at 00 and 12 UTC of every day, steps 0-96 h by
  6 h, from the reanalysis unperturbed;
- ``ens/``: an ensemble run (control ``cf`` = member 0, unperturbed, and 9 perturbed members
  ``pf`` 1..9) at 00 UTC, steps 0-96 h by 12 h. A perturbed member multiplies each basin's
  precipitation of a step by ``exp(s e - s^2/2)`` and adds ``2 s e'`` kelvin to its temperature
  (``e``, ``e'`` standard normal, drawn per run, member, step and basin), with ``s`` growing with
  the step as the noise table of docs/experiments.md: 0.25 per day of lead;
- runs from 2014-09-20 12 UTC to 2014-09-30 12 UTC (hres) and 2014-09-21 .. 2014-09-30 00 UTC
  (ens): the last ten days of the bundled test period, the demo's forecast days.

One file per run: ``{yyyymmdd}{HH}0000-96h-{oper|enfo}-{fc|ef}.grib2``, the name ECMWF's open data
gives a step's file, its step replaced by the run's last step (hydroseq reads one file per run; a
run fetched step by step is the concatenation of its step files: GRIB messages stand alone).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
LATITUDES = np.round(np.arange(48.5, 26.99, -0.5), 2)
LONGITUDES = np.round(np.arange(-125.0, -67.49, 0.5), 2)
REACH_DEGREES = 1.0
MISSING = 9999.0
NOISE_PER_DAY = 0.25
MEMBERS = 10
HRES_STEPS = np.arange(0, 97, 6)
ENS_STEPS = np.arange(0, 97, 12)


def hourly_utc(stations: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp) -> tuple[np.ndarray, np.ndarray]:
    """``(hour, basin)`` precipitation in m per hour and temperature in K over ``start .. end`` (UTC hours,
    each value standing for the hour that ends at it)."""
    hours = pd.date_range(start, end, freq="1h")
    rain = np.zeros((len(hours), len(stations)))
    temperature = np.zeros_like(rain)
    for column, row in enumerate(stations.itertuples()):
        series = pd.read_csv(ROOT / "data" / "daily_caravan_camels_us" / f"{row.station_id}.csv", parse_dates=["date"])
        series = series.set_index("date")
        offset = pd.Timestamp("2014-01-15").tz_localize(row.timezone).utcoffset()  # standard time, as Caravan
        local_day = (hours - pd.Timedelta(hours=1) + offset).normalize()  # the hour (h-1, h] in local standard time
        rain[:, column] = series["total_precipitation_sum"].reindex(local_day).to_numpy() / 24.0 / 1000.0
        temperature[:, column] = series["temperature_2m_mean"].reindex(local_day).to_numpy() + 273.15
    return rain, temperature


def nearest_basin() -> np.ndarray:
    """``(lat, lon)`` index of the nearest gauge, -1 beyond :data:`REACH_DEGREES`."""
    stations = station_table()
    lat, lon = np.meshgrid(LATITUDES, LONGITUDES, indexing="ij")
    distance = np.hypot(lat[..., None] - stations["lat"].to_numpy(), lon[..., None] - stations["lon"].to_numpy())
    return np.where(distance.min(axis=-1) <= REACH_DEGREES, distance.argmin(axis=-1), -1)


def station_table() -> pd.DataFrame:
    return pd.read_csv(ROOT / "data" / "stations" / "caravan_camels_us.csv", dtype={"station_id": str})


def message(handle, *, parameter: str, reference: pd.Timestamp, step: int, field: np.ndarray,
            member: int | None) -> None:
    import eccodes

    gid = eccodes.codes_grib_new_from_samples("regular_ll_sfc_grib2")
    eccodes.codes_set_key_vals(gid, {
        "centre": "ecmf", "Ni": len(LONGITUDES), "Nj": len(LATITUDES),
        "latitudeOfFirstGridPointInDegrees": float(LATITUDES[0]),
        "longitudeOfFirstGridPointInDegrees": float(LONGITUDES[0]),
        "latitudeOfLastGridPointInDegrees": float(LATITUDES[-1]),
        "longitudeOfLastGridPointInDegrees": float(LONGITUDES[-1]),
        "iDirectionIncrementInDegrees": 0.5, "jDirectionIncrementInDegrees": 0.5,
        "dataDate": int(reference.strftime("%Y%m%d")), "dataTime": reference.hour * 100,
    })
    accumulated = parameter == "tp"
    if member is None:
        eccodes.codes_set(gid, "productDefinitionTemplateNumber", 8 if accumulated else 0)
    else:
        eccodes.codes_set(gid, "productDefinitionTemplateNumber", 11 if accumulated else 1)
        eccodes.codes_set(gid, "typeOfProcessedData", 3 if member == 0 else 4)
        eccodes.codes_set(gid, "typeOfEnsembleForecast", 1 if member == 0 else 3)
        eccodes.codes_set(gid, "perturbationNumber", member)
        eccodes.codes_set(gid, "numberOfForecastsInEnsemble", MEMBERS)
    eccodes.codes_set(gid, "shortName", parameter)
    if accumulated:
        eccodes.codes_set(gid, "stepRange", f"0-{step}" if step else "0")
    else:
        eccodes.codes_set(gid, "step", step)
    eccodes.codes_set(gid, "packingType", "grid_complex_spatial_differencing")
    eccodes.codes_set(gid, "bitsPerValue", 16)
    eccodes.codes_set(gid, "bitmapPresent", 1)
    eccodes.codes_set(gid, "missingValue", MISSING)
    eccodes.codes_set_values(gid, np.where(np.isnan(field), MISSING, field).ravel())
    eccodes.codes_write(gid, handle)
    eccodes.codes_release(gid)


def write_run(out: Path, reference: pd.Timestamp, steps: np.ndarray, members: list[int] | None,
              rain: np.ndarray, temperature: np.ndarray, hours: pd.DatetimeIndex, cells: np.ndarray,
              rng: np.random.Generator) -> None:
    """One run file: for each member (or once, deterministic), every step of tp and 2t."""
    start = hours.get_loc(reference)
    tmp = out.with_suffix(".tmp")
    n_basins = rain.shape[1]
    with tmp.open("wb") as handle:
        for member in members if members is not None else [None]:
            accumulated = np.zeros(n_basins)
            for position, step in enumerate(steps):
                if position:
                    amount = rain[start + steps[position - 1] + 1: start + step + 1].sum(axis=0)
                else:
                    amount = np.zeros(n_basins)
                kelvin = temperature[start + step].copy()
                if member:  # a perturbed member
                    spread = NOISE_PER_DAY * step / 24.0
                    amount = amount * np.exp(spread * rng.standard_normal(n_basins) - spread**2 / 2)
                    kelvin = kelvin + 2.0 * spread * rng.standard_normal(n_basins)
                accumulated = accumulated + amount
                for parameter, per_basin in (("tp", accumulated), ("2t", kelvin)):
                    field = np.where(cells >= 0, per_basin[np.maximum(cells, 0)], np.nan)
                    message(handle, parameter=parameter, reference=reference, step=int(step), field=field,
                            member=member)
    tmp.replace(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    stations = station_table()
    cells = nearest_basin()
    first, last = pd.Timestamp("2014-09-20 12:00"), pd.Timestamp("2014-09-30 12:00")
    hours = pd.date_range(first, last + pd.Timedelta(hours=int(HRES_STEPS[-1])), freq="1h")
    rain, temperature = hourly_utc(stations, hours[0], hours[-1])
    rng = np.random.default_rng(20140930)
    for kind, steps, runs, members, stream in (
            ("hres", HRES_STEPS, pd.date_range(first, last, freq="12h"), None, "oper-fc"),
            ("ens", ENS_STEPS, pd.date_range("2014-09-21 00:00", "2014-09-30 00:00", freq="1D"),
             list(range(MEMBERS)), "enfo-ef")):
        folder = args.out / kind
        folder.mkdir(parents=True, exist_ok=True)
        for reference in runs:
            name = f"{reference:%Y%m%d%H}0000-{int(steps[-1])}h-{stream}.grib2"
            write_run(folder / name, reference, steps, members, rain, temperature, hours, cells, rng)
        print(f"{kind}: {len(runs)} runs in {folder}")


if __name__ == "__main__":
    main()
