"""Convert the bundled Caravan CSVs to NeuralHydrology's GenericDataset layout.

Output (under ``out_dir``)::

    time_series/<basin>.nc        one file per basin, dimension ``date``, float32 variables, NaN = missing
    attributes/attributes.csv     gauge_id-indexed static attributes (only the ones asked for)
    basins.txt                    the basin ids, one per line (NeuralHydrology's basin files)

Values are copied unchanged (the CSV's ``NA`` becomes NaN); nothing is scaled or filled, so both
tools see exactly the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from benchmarks.files import atomic_path, write_text_atomic
from hydroseq.errors import InputDataError


def read_caravan_csv(path: Path, variables: Sequence[str]) -> pd.DataFrame:
    """One basin's daily series as a float32 frame indexed by ``date``.

    Raises
    ------
    InputDataError
        If the file is missing, lacks a column, has an unparsable date or number (named by line),
        or its dates are not strictly increasing daily steps.
    """
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError) as error:
        raise InputDataError(path, f"cannot read the CSV: {error}") from None
    missing = [name for name in ("date", *variables) if name not in frame.columns]
    if missing:
        raise InputDataError(path, f"missing column(s) {missing}", "line 1")
    dates = pd.to_datetime(frame["date"], format="%Y-%m-%d", errors="coerce")
    _check_dates(path, frame["date"], dates)
    values = {name: _parse_numbers(path, name, frame[name]) for name in variables}
    return pd.DataFrame(values, index=pd.DatetimeIndex(dates, name="date"))


def _check_dates(path: Path, raw: pd.Series, dates: pd.Series) -> None:
    bad = np.flatnonzero(dates.isna().to_numpy())
    if bad.size:
        raise InputDataError(path, f"date {raw.iloc[bad[0]]!r} is not YYYY-MM-DD", f"line {bad[0] + 2}")
    steps = dates.diff().iloc[1:].to_numpy()
    irregular = np.flatnonzero(steps != np.timedelta64(1, "D"))
    if irregular.size:
        row = irregular[0] + 1
        raise InputDataError(path, f"date {raw.iloc[row]} does not follow {raw.iloc[row - 1]} by one day",
                             f"line {row + 2}")


def _parse_numbers(path: Path, column: str, raw: pd.Series) -> np.ndarray:
    text = raw.str.strip()
    missing = text.isin(["NA", "", "NaN", "nan"]).to_numpy()
    numbers = pd.to_numeric(text.where(~missing), errors="coerce").to_numpy(dtype=np.float64)
    bad = np.flatnonzero(np.isnan(numbers) & ~missing)
    if bad.size:
        raise InputDataError(path, f"{column} value {raw.iloc[bad[0]]!r} is not a number", f"line {bad[0] + 2}")
    return numbers.astype(np.float32)


def write_time_series(frame: pd.DataFrame, target: Path) -> None:
    """Write one basin's frame as NetCDF with a ``date`` coordinate, atomically."""
    dataset = xr.Dataset.from_dataframe(frame)
    encoding = {name: {"_FillValue": np.float32(np.nan)} for name in dataset.data_vars}
    with atomic_path(target) as tmp:
        dataset.to_netcdf(tmp, format="NETCDF4", encoding=encoding)


def read_attributes(path: Path, basins: Sequence[str], attributes: Sequence[str]) -> pd.DataFrame:
    """The requested static attributes of ``basins`` from the bundled ``attributes.csv``.

    Raises
    ------
    InputDataError
        If an attribute column or a basin row is missing, or a value is not a finite number.
    """
    table = pd.read_csv(path, dtype={"gauge_id": str}).set_index("gauge_id")
    absent = [name for name in attributes if name not in table.columns]
    if absent:
        raise InputDataError(path, f"no attribute column(s) {absent}", "line 1")
    unknown = [basin for basin in basins if basin not in table.index]
    if unknown:
        raise InputDataError(path, f"no row for basin(s) {unknown}")
    chosen = table.loc[list(basins), list(attributes)].astype(np.float64)
    not_finite = ~np.isfinite(chosen.to_numpy())
    if not_finite.any():
        row, col = map(int, np.argwhere(not_finite)[0])
        raise InputDataError(path, f"{attributes[col]} is not a finite number", f"gauge_id {basins[row]}")
    return chosen


def convert_caravan(
    caravan_dir: Path,
    out_dir: Path,
    basins: Sequence[str],
    dynamic_inputs: Sequence[str],
    static_inputs: Sequence[str],
    target: str = "streamflow",
) -> Path:
    """Write the GenericDataset folder for ``basins`` and return the basin file's path.

    Files that already exist are rewritten (conversion of 31 basins takes a few seconds), so a
    changed variable list can never leave a stale file behind.
    """
    variables = [*dynamic_inputs, target]
    for basin in basins:
        frame = read_caravan_csv(caravan_dir / f"{basin}.csv", variables)
        write_time_series(frame, out_dir / "time_series" / f"{basin}.nc")
    statics = read_attributes(caravan_dir / "attributes.csv", basins, static_inputs)
    write_text_atomic(out_dir / "attributes" / "attributes.csv", statics.to_csv(index_label="gauge_id"))
    basin_file = out_dir / "basins.txt"
    write_text_atomic(basin_file, "".join(f"{basin}\n" for basin in basins))
    return basin_file
