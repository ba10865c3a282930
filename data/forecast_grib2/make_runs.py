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
- ``hres/``: a deterministic run (``dataType fc``) at 00 and 12 UTC of every day, steps 0-240 h by
  6 h (ECMWF's HRES range), from the reanalysis unperturbed;
- ``ens/``: an ensemble run (control ``cf`` = member 0, unperturbed, and 9 perturbed members
  ``pf`` 1..9) at 00 UTC, steps 0-240 h by 12 h (the first 10 days of ECMWF's 15-day ENS). A perturbed
  member multiplies each basin's precipitation of a step by ``exp(s e - s^2/2)`` and adds ``2 s e'``
  kelvin to its temperature (``e``, ``e'`` standard normal, drawn per run, member, step and basin),
  with ``s`` growing with the step as the noise table of docs/experiments.md, 0.25 per day of lead,
  up to 1 at 96 h and 1 beyond (a wider log-normal factor makes implausible totals: thousands of
  times a day's rain). Steps after 96 h draw from a second generator, so steps 0-96 h are those of
  the earlier 0-96 h files bit for bit (the figures measured on them stand);
- a 7-day forecast read from a run needs it to reach 176 h (lead 7 of the issue 8 h after a 00 UTC
  run ends 7 days later), and 12-24 h more when a late run is replaced by the previous one:
  240 h leaves 64 h;
- runs from 2014-09-20 12 UTC to 2014-09-30 12 UTC (hres) and 2014-09-21 .. 2014-09-30 00 UTC
  (ens): the last ten days of the bundled test period, the demo's forecast days.

One file per run: ``{yyyymmdd}{HH}0000-240h-{oper|enfo}-{fc|ef}.grib2``, the name ECMWF's open data
gives a step's file, its step replaced by the run's last step (hydroseq reads one file per run; a
run fetched step by step is the concatenation of its step files: GRIB messages stand alone).

The writer is also used by tests and benchmarks that need other runs of the same kind (a year of
daily runs, a few basins): ``Reanalysis.load`` and ``write_runs``, the module loaded from its path.
One message per parameter and member is kept and re-encoded for each step (0.2-0.3 ms a message).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
LATITUDES = np.round(np.arange(48.5, 26.99, -0.5), 2)
LONGITUDES = np.round(np.arange(-125.0, -67.49, 0.5), 2)
REACH_DEGREES = 1.0
MISSING = 9999.0
NOISE_PER_DAY = 0.25
NOISE_MAX = 1.0        # the spread at 96 h, kept beyond
FIRST_DRAWS_UNTIL = 96  # steps up to it draw from the generator of the earlier 0-96 h files
MEMBERS = 10
HRES_STEPS = np.arange(0, 241, 6)
ENS_STEPS = np.arange(0, 241, 12)


def station_table(ids: list[str] | None = None) -> pd.DataFrame:
    """The bundled basins' table (``ids``: those only, in that order)."""
    table = pd.read_csv(ROOT / "data" / "stations" / "caravan_camels_us.csv", dtype={"station_id": str})
    return table if ids is None else table.set_index("station_id").loc[ids].reset_index()


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


def nearest_basin(stations: pd.DataFrame) -> np.ndarray:
    """``(lat, lon)`` index (a row of ``stations``) of the nearest gauge, -1 beyond :data:`REACH_DEGREES`."""
    lat, lon = np.meshgrid(LATITUDES, LONGITUDES, indexing="ij")
    distance = np.hypot(lat[..., None] - stations["lat"].to_numpy(), lon[..., None] - stations["lon"].to_numpy())
    return np.where(distance.min(axis=-1) <= REACH_DEGREES, distance.argmin(axis=-1), -1)


@dataclass(frozen=True)
class Reanalysis:
    """The hourly UTC series of some bundled basins, and the grid cells that carry them."""

    stations: pd.DataFrame
    cells: np.ndarray
    hours: pd.DatetimeIndex
    rain: np.ndarray
    temperature: np.ndarray

    @classmethod
    def load(cls, start: pd.Timestamp, end: pd.Timestamp, ids: list[str] | None = None) -> Reanalysis:
        """The basins ``ids`` (default: all 31) over the UTC hours ``start .. end``."""
        stations = station_table(ids)
        rain, temperature = hourly_utc(stations, start, end)
        return cls(stations, nearest_basin(stations), pd.date_range(start, end, freq="1h"), rain, temperature)


class MessageWriter:
    """GRIB2 messages of the example grid: one handle per parameter and member, its date, step and values set
    again for each message written (the files are those of a fresh handle per message, byte for byte)."""

    def __init__(self) -> None:
        self._templates: dict[tuple[str, int | None], Any] = {}

    def write(self, handle: BinaryIO, *, parameter: str, reference: pd.Timestamp, step: int, field: np.ndarray,
              member: int | None) -> None:
        import eccodes

        gid = self._template(parameter, member)  # reused: every key that differs is set again
        eccodes.codes_set_long(gid, "dataDate", int(reference.strftime("%Y%m%d")))
        eccodes.codes_set_long(gid, "dataTime", reference.hour * 100)
        eccodes.codes_set_long(gid, "endStep" if parameter == "tp" else "step", step)  # tp: from step 0
        eccodes.codes_set_long(gid, "bitsPerValue", 16)  # a constant field packed before set it to 0
        eccodes.codes_set_values(gid, np.where(np.isnan(field), MISSING, field).ravel())
        eccodes.codes_write(gid, handle)

    def close(self) -> None:
        import eccodes

        for gid in self._templates.values():
            eccodes.codes_release(gid)
        self._templates.clear()

    def _template(self, parameter: str, member: int | None) -> Any:
        import eccodes

        key = (parameter, member)
        if key in self._templates:
            return self._templates[key]
        gid = eccodes.codes_grib_new_from_samples("regular_ll_sfc_grib2")
        eccodes.codes_set_key_vals(gid, {
            "centre": "ecmf", "Ni": len(LONGITUDES), "Nj": len(LATITUDES),
            "latitudeOfFirstGridPointInDegrees": float(LATITUDES[0]),
            "longitudeOfFirstGridPointInDegrees": float(LONGITUDES[0]),
            "latitudeOfLastGridPointInDegrees": float(LATITUDES[-1]),
            "longitudeOfLastGridPointInDegrees": float(LONGITUDES[-1]),
            "iDirectionIncrementInDegrees": 0.5, "jDirectionIncrementInDegrees": 0.5,
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
        eccodes.codes_set(gid, "packingType", "grid_complex_spatial_differencing")
        eccodes.codes_set(gid, "bitsPerValue", 16)
        eccodes.codes_set(gid, "bitmapPresent", 1)
        eccodes.codes_set(gid, "missingValue", MISSING)
        self._templates[key] = gid
        return gid


def write_run(out: Path, reference: pd.Timestamp, steps: np.ndarray, members: list[int] | None,
              basins: Reanalysis, writer: MessageWriter, rng: np.random.Generator,
              later_rng: np.random.Generator) -> None:
    """One run file: for each member (or once, deterministic), every step of tp and 2t; perturbations of
    steps after :data:`FIRST_DRAWS_UNTIL` are drawn from ``later_rng``."""
    start = basins.hours.get_loc(reference)
    rain, temperature, cells = basins.rain, basins.temperature, basins.cells
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
                    spread = min(NOISE_PER_DAY * step / 24.0, NOISE_MAX)
                    draw = rng if step <= FIRST_DRAWS_UNTIL else later_rng
                    amount = amount * np.exp(spread * draw.standard_normal(n_basins) - spread**2 / 2)
                    kelvin = kelvin + 2.0 * spread * draw.standard_normal(n_basins)
                accumulated = accumulated + amount
                for parameter, per_basin in (("tp", accumulated), ("2t", kelvin)):
                    field = np.where(cells >= 0, per_basin[np.maximum(cells, 0)], np.nan)
                    writer.write(handle, parameter=parameter, reference=reference, step=int(step), field=field,
                                 member=member)
    tmp.replace(out)


def run_name(reference: pd.Timestamp, steps: np.ndarray, stream: str) -> str:
    """``{yyyymmddHH}0000-{last step}h-{stream}.grib2``, as ECMWF's open data names a step's file."""
    return f"{reference:%Y%m%d%H}0000-{int(steps[-1])}h-{stream}.grib2"


def write_runs(folder: Path, basins: Reanalysis, references: pd.DatetimeIndex, steps: np.ndarray,
               members: list[int] | None = None, stream: str = "oper-fc",
               rngs: tuple[np.random.Generator, np.random.Generator] | None = None) -> list[Path]:
    """One file per run of ``references`` in ``folder`` (deterministic, or ``members``); ``basins`` must
    cover every run's hours. Returns the files."""
    folder.mkdir(parents=True, exist_ok=True)
    rng, later_rng = rngs or (np.random.default_rng(0), np.random.default_rng(1))
    writer = MessageWriter()
    files = []
    try:
        for reference in references:
            files.append(folder / run_name(reference, steps, stream))
            write_run(files[-1], reference, steps, members, basins, writer, rng, later_rng)
    finally:
        writer.close()
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    first, last = pd.Timestamp("2014-09-20 12:00"), pd.Timestamp("2014-09-30 12:00")
    basins = Reanalysis.load(first, last + pd.Timedelta(hours=int(HRES_STEPS[-1])))
    rngs = np.random.default_rng(20140930), np.random.default_rng(20141010)
    for kind, steps, runs, members, stream in (
            ("hres", HRES_STEPS, pd.date_range(first, last, freq="12h"), None, "oper-fc"),
            ("ens", ENS_STEPS, pd.date_range("2014-09-21 00:00", "2014-09-30 00:00", freq="1D"),
             list(range(MEMBERS)), "enfo-ef")):
        write_runs(args.out / kind, basins, runs, steps, members, stream, rngs)
        print(f"{kind}: {len(runs)} runs in {args.out / kind}")


if __name__ == "__main__":
    main()
