"""What a page is made from, read and checked once: the forecast files, the observations and a hindcast's scores.

Every problem is an :class:`~hydroseq.errors.InputDataError` naming the file and what is wrong, raised
before anything is written.
"""

from __future__ import annotations

import csv
import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hydroseq.errors import InputDataError
from hydroseq.fileio import manifest_path, verify_set
from hydroseq.forecast.hindcast import HindcastScores, read_scores_csv
from hydroseq.forecast.netcdf_reader import read_forecast_netcdf
from hydroseq.forecast.result import ForecastResult
from hydroseq.grid import GridSpec
from hydroseq.ingested import open_ingested


def read_issued_forecast(path: str | Path, option: str) -> ForecastResult:
    """A forecast file of one issue time (``--forecast``, ``--previous``)."""
    result = read_forecast_netcdf(path)
    if len(result.issue_times) != 1:
        raise InputDataError(path, f"a hindcast ({len(result.issue_times)} issue times), not the forecast of one "
                                   f"issue time that {option} takes (give a hindcast as --hindcast)")
    return result


def read_hindcast(path: str | Path) -> ForecastResult:
    """A hindcast file (``--hindcast``): several issue times."""
    result = read_forecast_netcdf(path)
    if len(result.issue_times) < 2:
        raise InputDataError(path, "the forecast of one issue time, not a hindcast (give it as --forecast)")
    return result


def grid_of(result: ForecastResult, path: str | Path) -> GridSpec:
    """The time grid a forecast file records (its ``grid_*`` attributes)."""
    try:
        return GridSpec.from_attrs(result.attributes)
    except ValueError as error:
        raise InputDataError(path, f"not a hydroseq forecast file: {error}") from None


def check_same_target(reference: ForecastResult, other: ForecastResult, other_path: str | Path,
                      option: str) -> None:
    """``other`` forecasts the same quantity, in the same units, on the same grid step as ``reference``."""
    for what, mine, theirs in (("variable", reference.variable, other.variable),
                               ("units", reference.units, other.units),
                               ("grid step", reference.step, other.step)):
        if mine != theirs:
            raise InputDataError(other_path, f"{option}: its {what} is {theirs}, the forecast's {mine}")


@dataclass(frozen=True)
class Observations:
    """The observed target of the forecast's stations on the grid steps ``times`` (labels, UTC).

    ``values [station, time]`` in the forecast's units, NaN where not observed or where the station is
    not in the data file (``in_file`` False); ``path`` the ingested file.
    """

    path: Path
    times: np.ndarray
    values: np.ndarray
    in_file: np.ndarray

    def newest(self, until: np.datetime64) -> tuple[np.ndarray, np.ndarray]:
        """Per station, the label of its newest observation at or before ``until`` and its value (NaT/NaN: none)."""
        upto = self.times <= until
        observed = np.isfinite(self.values) & upto[None, :]
        last = np.where(observed.any(axis=1), observed.shape[1] - 1 - np.argmax(observed[:, ::-1], axis=1), -1)
        times = np.where(last >= 0, self.times[np.maximum(last, 0)], np.datetime64("NaT"))
        values = np.where(last >= 0, self.values[np.arange(len(last)), np.maximum(last, 0)], np.nan)
        return times.astype("datetime64[ns]"), values


def read_observations(path: str | Path, result: ForecastResult, grid: GridSpec, start: np.datetime64,
                      end: np.datetime64) -> Observations:
    """The observed ``result.variable`` of ``result``'s stations from the ingested file ``path``, labels in
    ``start..end``.

    The file must be on the forecast's grid and hold the variable in the forecast's units. A file without
    the variable (the forcing of ungauged basins) gives no observation at any station.
    """
    path = Path(path)
    dataset, data_grid = open_ingested(path)
    with dataset:
        differences = data_grid.differences(grid)
        if differences:
            name, theirs, mine = differences[0]
            raise InputDataError(path, f"its grid ({name} {theirs}) is not the forecast's ({mine})",
                                 where="global attributes")
        ids = [str(station) for station in dataset["station"].values]
        if not set(ids) & set(result.stations):
            raise InputDataError(path, "holds none of the forecast's stations (is it the forecast's data file?)")
        times = dataset["time"].values
        window = (times >= start) & (times <= end)
        values = np.full((len(result.stations), int(window.sum())), np.nan, dtype=np.float64)
        in_file = np.asarray([station in ids for station in result.stations])
        if result.variable in dataset.variables:
            units = str(dataset[result.variable].attrs.get("units", ""))
            if units != result.units:
                raise InputDataError(path, f"observed {result.variable} in {units!r}, the forecast in "
                                           f"{result.units!r}", where=result.variable)
            rows = [ids.index(station) for station in np.asarray(result.stations)[in_file]]
            series = dataset[result.variable].transpose("station", "time")
            values[in_file] = np.asarray(series[rows, np.flatnonzero(window)].values, dtype=np.float64)
    return Observations(path, times[window].astype("datetime64[ns]"), values, in_file)


def read_hindcast_scores(hindcast_path: str | Path, result: ForecastResult) -> HindcastScores:
    """The scores ``hydroseq forecast`` published with the hindcast ``hindcast_path`` (``<stem>_scores.csv``,
    checked against the set's manifest), on ``result``'s stations and leads (NaN where not scored)."""
    hindcast_path = Path(hindcast_path)
    scores_path = hindcast_path.with_name(f"{hindcast_path.stem}_scores.csv")
    manifest = manifest_path(hindcast_path)
    if not scores_path.is_file():
        raise InputDataError(hindcast_path, f"its scores {scores_path.name} are not beside it (hydroseq forecast "
                                            "writes them with a hindcast)")
    if manifest.exists():  # a set as hydroseq forecast published it: both files as the manifest has them
        checked = verify_set(manifest) or {}
        if scores_path.name not in checked or hindcast_path.name not in checked:
            raise InputDataError(hindcast_path, f"the hindcast or {scores_path.name} differs from {manifest.name} "
                                                "(changed since hydroseq forecast wrote them)")
    try:
        return read_scores_csv(scores_path, result.stations, result.leads)
    except ValueError as error:
        raise InputDataError(scores_path, str(error)) from None


def read_station_list(path: str | Path) -> list[str]:
    """Station ids from a CSV with a ``station_id`` or ``station`` column (a station table), or one id a line."""
    path = Path(path)
    try:
        lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    except (OSError, UnicodeDecodeError) as error:
        raise InputDataError(path, f"unreadable station list ({error})") from None
    lines = [line for line in lines if line and not line.startswith("#")]
    if not lines:
        raise InputDataError(path, "lists no station")
    header = next(csv.reader([lines[0]]))
    column = next((name for name in ("station_id", "station") if name in header), None)
    if column is None:
        return lines
    position = header.index(column)
    return [row[position].strip() for row in csv.reader(lines[1:]) if len(row) > position and row[position].strip()]


def select_stations(result: ForecastResult, stations: list[str], listed_in: str | Path) -> ForecastResult:
    """``result`` cut to ``stations`` (in its own order); an id the forecast lacks is an error naming the list."""
    unknown = [station for station in stations if station not in set(result.stations)]
    if unknown:
        raise InputDataError(listed_in, f"station {unknown[0]} is not in the forecast"
                                        + (f" ({len(unknown) - 1} more)" if len(unknown) > 1 else ""))
    keep = np.flatnonzero(np.isin(np.asarray(result.stations), stations))
    kept = tuple(result.stations[s] for s in keep)

    def rows(values: np.ndarray | None, axis: int = 1) -> np.ndarray | None:
        return None if values is None else np.take(values, keep, axis=axis)

    return dataclasses.replace(
        result, stations=kept, values=np.take(result.values, keep, axis=1), quantiles=rows(result.quantiles),
        members=rows(result.members), exceedance=rows(result.exceedance),
        observation_age_hours=rows(result.observation_age_hours),
        forecast_input_age_hours=rows(result.forecast_input_age_hours),
        forecast_input_read=rows(result.forecast_input_read), forecast_input_ages=rows(result.forecast_input_ages),
        fallback={s: why for s, why in result.fallback.items() if s in kept},
        station_names=None if result.station_names is None else tuple(result.station_names[s] for s in keep),
        lats=rows(result.lats, 0), lons=rows(result.lons, 0), area_km2=rows(result.area_km2, 0),
        thresholds=None if result.thresholds is None else result.thresholds.for_stations(kept),
        skipped={s: why for s, why in result.skipped.items() if s in kept},
        ungauged=tuple(s for s in result.ungauged if s in kept),
        stale={s: why for s, why in result.stale.items() if s in kept})
