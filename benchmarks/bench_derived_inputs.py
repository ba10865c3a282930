"""Deriving the inputs a model with ``pet_oudin`` and the ``clim_*`` indices reads, for many stations at once.

Run from the project root::

    .venv/bin/python -m benchmarks.bench_derived_inputs [--stations 1000] [--years 30] [--repeats 3]

The 31 bundled Caravan basins' daily precipitation and temperature (1981-2014) are tiled to ``--stations``
stations (each copy rolled by a few days so that the copies differ) and cut to ``--years`` years; the
latitudes are spread over 25-70 degrees north. Timed after one warm-up, median of ``--repeats``: Oudin's PET
over the whole record and the ten climate indices (:func:`hydroseq.climate.derive_static`), what training
and a forecast compute for every station. Target (issue 54): < 10 s for 1,000 stations x 30 years.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.timing import median_seconds
from hydroseq.climate import DERIVED_STATIC, derive_dynamic, derive_static

REPO_ROOT = Path(__file__).resolve().parents[1]
CARAVAN_DIR = REPO_ROOT / "data" / "daily_caravan_camels_us"
RESULTS = REPO_ROOT / "benchmarks" / "results" / "derived_inputs.json"


def tiled_series(stations: int, years: int) -> tuple[np.ndarray, np.ndarray, pd.DatetimeIndex]:
    """Precipitation and temperature ``[station, day]`` of the bundled basins, tiled and rolled, and the days."""
    ids = (CARAVAN_DIR / "basins.txt").read_text().split()
    frames = [pd.read_csv(CARAVAN_DIR / f"{station}.csv", parse_dates=["date"]) for station in ids]
    days = pd.DatetimeIndex(frames[0]["date"])[: years * 365 + years // 4]
    p = np.stack([frame["total_precipitation_sum"].to_numpy(np.float64)[: len(days)] for frame in frames])
    t = np.stack([frame["temperature_2m_mean"].to_numpy(np.float64)[: len(days)] for frame in frames])
    copies = range(stations)
    return (np.stack([np.roll(p[i % len(ids)], i // len(ids)) for i in copies]),
            np.stack([np.roll(t[i % len(ids)], i // len(ids)) for i in copies]), days)


def main() -> None:
    """Time the derivation and write ``benchmarks/results/derived_inputs.json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stations", type=int, default=1000)
    parser.add_argument("--years", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    precipitation, temperature, days = tiled_series(args.stations, args.years)
    latitude = np.linspace(25.0, 70.0, args.stations)
    day_of_year, month = np.asarray(days.day_of_year), np.asarray(days.month)
    series = {"precipitation": precipitation, "temperature": temperature}

    def pet() -> object:
        return derive_dynamic("pet_oudin", temperature, latitude, day_of_year)

    def indices() -> object:
        return derive_static(list(DERIVED_STATIC), series.__getitem__, latitude, day_of_year, month)

    figures = {"stations": args.stations, "years": args.years, "days": len(days),
               "pet_oudin_seconds": round(median_seconds(pet, args.repeats), 3),
               "climate_indices_seconds": round(median_seconds(indices, args.repeats), 3)}
    print(json.dumps(figures, indent=1))
    RESULTS.write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
